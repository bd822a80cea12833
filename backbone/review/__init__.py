"""The editable review deck of a plan or roadmap folder (``backbone deck``): python-pptx slides with native
charts and tables, the slide map as the one picture.

The face of the package: :func:`build_deck` and :func:`deck_bytes` (:mod:`.build`), :func:`deck_data` (:mod:`.data`).
"""

from __future__ import annotations

from backbone.review.build import build_deck, deck_bytes, open_template
from backbone.review.data import DeckData, deck_data

__all__ = ["DeckData", "build_deck", "deck_bytes", "deck_data", "open_template"]

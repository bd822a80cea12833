"""MkDocs hook: the docstrings are written with Sphinx roles (``:func:`x```, ``:class:`~a.B```), which the
Python reference would otherwise show as raw text; the rendered page keeps the name in code and drops the role
(and a leading ``~``)."""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:func|meth|class|mod|data|attr|exc|obj):(<code>)~?")


def on_page_content(html: str, **_: Any) -> str:
    """Drop the Sphinx role before each code span it marks."""
    return ROLE.sub(r"\1", html)

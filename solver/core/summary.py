"""The base models of the summaries the tasks return (``<kind>.json``, ``--json``, the API's job result).

* :class:`Summary` -- the documented shape of a summary: the fields a reader may rely on; a summary built as a
  dict and checked against it may carry more (``extra`` is allowed).
* :class:`TypedSummary` -- a summary built as the model itself: every field declared (``extra`` is forbidden),
  with units in the names, dumped to plain values (:meth:`TypedSummary.document`) only where it leaves the
  solver: its file, ``--json``, the API.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from backbone.serialize import json_default

__all__ = ["Summary", "TypedSummary"]


class Summary(BaseModel):
    """Base of the summary models (and the model of a task that declares none): fields beyond the declared
    ones are allowed."""

    model_config = ConfigDict(extra="allow", frozen=True)


class TypedSummary(Summary):
    """A summary built as the model: every field declared (``extra`` forbidden), assignments validated.

    The sections named in :attr:`OMITTED_WHEN_NONE` are left out of the document when they are None (a section
    only some runs compute, such as ``verification``), so a file holds them only when they were computed.
    """

    model_config = ConfigDict(extra="forbid", frozen=False, validate_assignment=True)

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ()
    """Sections the document holds only when they were computed."""

    @model_serializer(mode="wrap")
    def _leave_out_absent_sections(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The dumped fields without the :attr:`OMITTED_WHEN_NONE` sections that are None."""
        data: dict[str, Any] = handler(self)
        for name in self.OMITTED_WHEN_NONE:
            if name in data and data[name] is None:
                del data[name]
        return data

    def document(self) -> dict[str, Any]:
        """The JSON document (``model_dump(mode="json")``): plain values, in the fields' order; what the summary's
        file holds besides ``kind`` and ``files``. Numpy values inside the free-form sections become Python ones
        (:func:`backbone.serialize.json_default`); NaN in a float field stays NaN here, and the artifact writer
        writes it as null (the one place)."""
        return self.model_dump(mode="json", fallback=json_default)

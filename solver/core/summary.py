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

__all__ = ["TaskSummary", "TypedSummary"]


class TypedSummary(BaseModel):
    """A summary built as the model: every field declared (``extra`` forbidden), assignments validated.

    The sections named in :attr:`OMITTED_WHEN_NONE` are left out of the document when they are None (a section
    only some runs compute, such as ``verification``), so a file holds them only when they were computed.
    """

    model_config = ConfigDict(extra="forbid", frozen=False, validate_assignment=True)

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ()
    """Sections the document holds only when they were computed."""

    OMITTED_WHEN_UNSET: ClassVar[tuple[str, ...]] = ()
    """Fields only some runs report, where None is a value (unknown) and not "not reported": the document holds
    them only when they were given or assigned (``model_fields_set``)."""

    @model_serializer(mode="wrap")
    def _leave_out_absent_sections(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The dumped fields without the :attr:`OMITTED_WHEN_NONE` sections that are None and the
        :attr:`OMITTED_WHEN_UNSET` fields that were never set."""
        data: dict[str, Any] = handler(self)
        for name in self.OMITTED_WHEN_NONE:
            if name in data and data[name] is None:
                del data[name]
        for name in self.OMITTED_WHEN_UNSET:
            if name in data and name not in self.model_fields_set:
                del data[name]
        return data

    def document(self) -> dict[str, Any]:
        """The JSON document (``model_dump(mode="json")``): plain values, in the fields' order; what the summary's
        file holds besides ``kind`` and ``files``. Numpy values inside the free-form sections become Python ones
        (:func:`backbone.serialize.json_default`); NaN becomes None here (a :class:`TaskSummary` keeps it NaN for
        the artifact writer, which writes it as null)."""
        return self.model_dump(mode="json", fallback=json_default)


class TaskSummary(TypedSummary):
    """The summary of a task whose figures may be unknown (NaN: a failure state's unmet traffic, a gap): its
    :meth:`document` keeps them NaN, as the task's own records hold them, for the artifact writer (and ``--json``)
    to write as null, the one place; the report and the diff read them as NaN, as they read the records.
    :class:`TypedSummary`'s document writes NaN as None already."""

    model_config = ConfigDict(ser_json_inf_nan="constants")

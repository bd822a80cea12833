"""Read-only tables: the DataFrames a :class:`~backbone.model.Network` holds.

A :class:`FrozenFrame` is a :class:`pandas.DataFrame` whose writes raise :class:`~backbone.errors.FrozenTableError`:
``.loc``/``.iloc``/``.at``/``.iat`` assignment, column assignment and deletion, ``insert``, ``pop``, ``update``,
``isetitem``, setting ``index``, ``columns`` or any other attribute, the augmented assignments (``t += 1``) and every
``inplace=True`` method. Everything derived from it (``copy()``, ``assign``, slicing, ``concat``, arithmetic, a
column as a Series) is an ordinary, writable ``DataFrame``/``Series``: pandas Copy-on-Write (the only mode since
pandas 3.0) guarantees that writing into such a derived object never reaches the frozen one, and makes the arrays
``to_numpy()`` and ``.values`` hand out read-only, so reads stay as fast and zero-copy as on a plain frame.

Only public pandas API is used: the subclass declares ``_constructor`` and ``_metadata``, the two hooks pandas'
"Extending pandas" guide documents for subclasses (derived objects become plain ``DataFrame``s; the table's name
survives pickling), and overrides public methods, Python's attribute and item protocols and the public indexer
properties. The in-place methods are found by their public signatures (every public method with an ``inplace``
parameter), so a pandas release that adds one is covered without a change here.

Example
-------
>>> import pandas as pd
>>> t = freeze(pd.DataFrame({"capacity_gbps": [10.0]}, index=["AB"]), "links")
>>> t.loc["AB", "capacity_gbps"] = 1.0  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
backbone.errors.FrozenTableError: the links table of a Network is read-only: ...
>>> c = t.copy(); c.loc["AB", "capacity_gbps"] = 1.0; type(c).__name__
'DataFrame'
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ClassVar, NoReturn

import pandas as pd

from backbone.errors import FrozenTableError

__all__ = ["AUGMENTED_ASSIGNMENTS", "INPLACE_METHODS", "FrozenFrame", "freeze", "inplace_methods"]

AUGMENTED_ASSIGNMENTS = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__",
                         "__iand__", "__ior__", "__ixor__")
"""The augmented assignments (``t += 1`` ...) a DataFrame performs in place; a FrozenFrame refuses each."""


def inplace_methods(cls: type = pd.DataFrame) -> tuple[str, ...]:
    """Names of the public methods of ``cls`` that take an ``inplace`` parameter, read from their signatures
    (the code object of the function under any ``functools.wraps`` decorators: about 1 ms for a DataFrame)."""
    names = []
    for name in dir(cls):
        member = inspect.getattr_static(cls, name)
        if name.startswith("_") or not inspect.isfunction(member):
            continue
        code = inspect.unwrap(member).__code__
        if "inplace" in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            names.append(name)
    return tuple(names)


INPLACE_METHODS = inplace_methods()
"""The installed pandas' DataFrame methods with an ``inplace`` parameter (``fillna``, ``drop``, ``rename`` ...)."""


class FrozenFrame(pd.DataFrame):
    """A DataFrame that refuses writes (see the module docstring). Build one with :func:`freeze`."""

    _metadata: ClassVar[list[str]] = ["_table_name"]
    _table_name: str = "table"

    def __init__(self, data: Any = None, *args: Any, table_name: str = "table", **kwargs: Any) -> None:
        super().__init__(data, *args, **kwargs)
        object.__setattr__(self, "_table_name", table_name)

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        """Everything derived from a frozen frame is an ordinary frame (the documented subclass hook)."""
        return pd.DataFrame

    def _plain(self) -> pd.DataFrame:
        """A plain DataFrame over the same data, made on first use and never handed out (a shell: no data is
        copied, and Copy-on-Write keeps what is derived from it apart). The frequent reads (a column, a filter,
        the indexers, ``copy()``) go through it, so they cost what they cost on a plain frame; through the
        documented ``_constructor`` hook alone each derived object would be built twice (about 10 us more for a
        column of the shipped links table, docs/benchmarks/frozen.md). Not pickled: an unpickled frame makes its
        own."""
        plain = self.__dict__.get("_plain_frame")
        if plain is None:
            plain = pd.DataFrame(self)
            object.__setattr__(self, "_plain_frame", plain)
        return plain

    def __getitem__(self, key: Any) -> Any:
        return self._plain()[key]

    def copy(self, deep: bool = True) -> pd.DataFrame:  # type: ignore[override]
        """An ordinary, writable DataFrame (with ``deep=False`` it shares the data until either side writes)."""
        return self._plain().copy(deep=deep)

    def _refuse(self, what: str) -> NoReturn:
        raise FrozenTableError(
            f"the {self._table_name} table of a Network is read-only: {what} is not allowed; copy it "
            f"(net.{self._table_name}.copy()), change the copy and build a new network with "
            f"net.copy_with({self._table_name}=...)")

    # --------------------------------------------------------------- refused writes
    def __setitem__(self, key: Any, value: Any) -> None:
        self._refuse(f"setting column {key!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_"):  # index, columns, attrs, a column by attribute ...; pandas' own state is private
            self._refuse(f"setting attribute {name!r}")
        super().__setattr__(name, value)

    def __delitem__(self, key: Any) -> None:
        self._refuse(f"deleting column {key!r}")

    def insert(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        self._refuse("insert()")

    def isetitem(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        self._refuse("isetitem()")

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        self._refuse("update()")

    def pop(self, item: Any) -> pd.Series:  # type: ignore[override]
        self._refuse(f"pop({item!r})")

    # --------------------------------------------------------------- indexers: read through, refuse writes
    @property
    def loc(self) -> Any:  # type: ignore[override]
        return ReadOnlyIndexer(self._plain().loc, self, "loc")

    @property
    def iloc(self) -> Any:  # type: ignore[override]
        return ReadOnlyIndexer(self._plain().iloc, self, "iloc")

    @property
    def at(self) -> Any:  # type: ignore[override]
        return ReadOnlyIndexer(self._plain().at, self, "at")

    @property
    def iat(self) -> Any:  # type: ignore[override]
        return ReadOnlyIndexer(self._plain().iat, self, "iat")


def _refusing_inplace(name: str) -> Callable[..., Any]:
    """``DataFrame.<name>`` for a FrozenFrame: ``inplace=True`` raises, anything else returns a new plain frame."""
    method = getattr(pd.DataFrame, name)

    @functools.wraps(method)
    def guarded(self: FrozenFrame, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("inplace") or (args and _inplace_by_position(method, args)):
            self._refuse(f"{name}(inplace=True)")
        return method(self, *args, **kwargs)

    return guarded


def _inplace_by_position(method: Callable[..., Any], args: tuple[Any, ...]) -> bool:
    """Whether positional ``args`` (after ``self``) pass ``inplace=True`` (pandas makes it keyword-only, but a
    release that does not is refused all the same)."""
    bound = inspect.signature(method).bind_partial(None, *args)
    return bool(bound.arguments.get("inplace"))


def _refusing_augmented(name: str) -> Callable[..., Any]:
    def refuse(self: FrozenFrame, other: Any) -> NoReturn:
        self._refuse(f"an augmented assignment ({name})")

    refuse.__name__ = name
    return refuse


for _name in INPLACE_METHODS:
    setattr(FrozenFrame, _name, _refusing_inplace(_name))
for _name in AUGMENTED_ASSIGNMENTS:
    setattr(FrozenFrame, _name, _refusing_augmented(_name))


class ReadOnlyIndexer:
    """``.loc``/``.iloc``/``.at``/``.iat`` of a :class:`FrozenFrame`: reads go through, writes raise."""

    __slots__ = ("_frame", "_inner", "_name")

    def __init__(self, inner: Any, frame: FrozenFrame, name: str) -> None:
        self._inner = inner
        self._frame = frame
        self._name = name

    def __getitem__(self, key: Any) -> Any:
        return self._inner[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._frame._refuse(f"assignment through .{self._name}[{key!r}]")

    def __call__(self, axis: Any = None) -> ReadOnlyIndexer:
        return ReadOnlyIndexer(self._inner(axis), self._frame, self._name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def freeze(df: pd.DataFrame, table_name: str) -> FrozenFrame:
    """A read-only view of ``df`` (no data is copied; a later write to ``df`` copies, by Copy-on-Write, and
    does not reach the view). A frame that is already frozen is returned as it is."""
    if isinstance(df, FrozenFrame) and df._table_name == table_name:
        return df
    return FrozenFrame(df, table_name=table_name)

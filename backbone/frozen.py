"""Read-only tables: the DataFrames a :class:`~backbone.model.Network` holds.

A :class:`FrozenFrame` is a :class:`pandas.DataFrame` whose writes raise :class:`~backbone.errors.FrozenTableError`:
``.loc``/``.iloc``/``.at``/``.iat`` assignment, column assignment and deletion, ``insert``, ``pop``, ``update``,
``isetitem``, setting ``index`` or ``columns`` and every ``inplace=True`` method. Everything derived from it
(``copy()``, ``assign``, slicing, ``concat``, arithmetic, a column as a Series) is an ordinary, writable
``DataFrame``/``Series``: pandas Copy-on-Write (on by default since pandas 3) guarantees that writing into such a
derived object never reaches the frozen one, so reads stay as fast and zero-copy as on a plain frame.

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

from typing import Any, ClassVar, NoReturn

import pandas as pd

from backbone.errors import FrozenTableError

__all__ = ["FrozenFrame", "freeze"]


class FrozenFrame(pd.DataFrame):
    """A DataFrame that refuses writes (see the module docstring). Build one with :func:`freeze`."""

    _metadata: ClassVar[list[str]] = ["_table_name"]
    _table_name: str = "table"
    _frozen: bool = True  # a frame unpickled without __init__ is frozen too

    def __init__(self, data: Any = None, *args: Any, table_name: str = "table", **kwargs: Any) -> None:
        object.__setattr__(self, "_frozen", False)
        super().__init__(data, *args, **kwargs)
        object.__setattr__(self, "_table_name", table_name)
        object.__setattr__(self, "_frozen", True)

    # everything derived from a frozen frame is an ordinary frame
    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return pd.DataFrame

    def _constructor_from_mgr(self, mgr: Any, axes: Any) -> pd.DataFrame:
        return pd.DataFrame._from_mgr(mgr, axes=axes)

    def _constructor_sliced_from_mgr(self, mgr: Any, axes: Any) -> pd.Series:
        # pandas' own fast path for a plain DataFrame (a subclass would pay for a second Series construction)
        ser = pd.Series._from_mgr(mgr, axes)
        object.__setattr__(ser, "_name", None)  # the caller sets the real name
        return ser

    def _refuse(self, what: str) -> NoReturn:
        raise FrozenTableError(
            f"the {self._table_name} table of a Network is read-only: {what} is not allowed; copy it "
            f"(net.{self._table_name}.copy()), change the copy and build a new network with "
            f"net.copy_with({self._table_name}=...)")

    # --------------------------------------------------------------- refused writes
    def __setitem__(self, key: Any, value: Any) -> None:
        if self._frozen:
            self._refuse(f"setting column {key!r}")
        super().__setitem__(key, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if self._frozen and not name.startswith("_"):
            self._refuse(f"setting attribute {name!r}")
        super().__setattr__(name, value)

    def __delitem__(self, key: Any) -> None:
        if self._frozen:
            self._refuse(f"deleting column {key!r}")
        super().__delitem__(key)

    def insert(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        self._refuse("insert()")

    def isetitem(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        self._refuse("isetitem()")

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        self._refuse("update()")

    def _update_inplace(self, *args: Any, **kwargs: Any) -> None:
        if self._frozen:
            self._refuse("an inplace=True method")
        super()._update_inplace(*args, **kwargs)

    def _set_axis(self, axis: Any, labels: Any) -> None:
        if self._frozen:
            self._refuse("setting index or columns")
        super()._set_axis(axis, labels)

    # --------------------------------------------------------------- indexers: read through, refuse writes
    @property
    def loc(self) -> Any:  # type: ignore[override]
        return ReadOnlyIndexer(super().loc, self)

    @property
    def iloc(self) -> Any:  # type: ignore[override]
        return ReadOnlyIndexer(super().iloc, self)

    @property
    def at(self) -> Any:  # type: ignore[override]
        return ReadOnlyIndexer(super().at, self)

    @property
    def iat(self) -> Any:  # type: ignore[override]
        return ReadOnlyIndexer(super().iat, self)


class ReadOnlyIndexer:
    """``.loc``/``.iloc``/``.at``/``.iat`` of a :class:`FrozenFrame`: reads go through, writes raise."""

    __slots__ = ("_frame", "_inner")

    def __init__(self, inner: Any, frame: FrozenFrame) -> None:
        self._inner = inner
        self._frame = frame

    def __getitem__(self, key: Any) -> Any:
        return self._inner[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._frame._refuse(f"assignment through .{self._inner.name}[{key!r}]")

    def __call__(self, axis: Any = None) -> ReadOnlyIndexer:
        return ReadOnlyIndexer(self._inner(axis), self._frame)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def freeze(df: pd.DataFrame, table_name: str) -> FrozenFrame:
    """A read-only view of ``df`` (no data is copied; a later write to ``df`` copies, by Copy-on-Write, and
    does not reach the view). A frame that is already frozen is returned as it is."""
    if isinstance(df, FrozenFrame) and df._table_name == table_name:
        return df
    return FrozenFrame(df, table_name=table_name)

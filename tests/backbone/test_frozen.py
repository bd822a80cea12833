"""A Network's tables are read-only: writing into them raises; copies are ordinary DataFrames."""

from __future__ import annotations

import contextlib
import inspect
import pickle
import warnings
from collections.abc import Callable

import pandas as pd
import pytest

from backbone.errors import FrozenTableError
from backbone.frozen import AUGMENTED_ASSIGNMENTS, INPLACE_METHODS, FrozenFrame
from backbone.model import Network

WRITES: dict[str, Callable[[pd.DataFrame], object]] = {
    "loc": lambda df: df.loc.__setitem__((df.index[0], "capacity_gbps"), 1.0),
    "loc string": lambda df: df.loc.__setitem__((df.index[0], "name"), "x"),
    "loc row": lambda df: df.loc.__setitem__(df.index[0], df.iloc[0]),
    "iloc": lambda df: df.iloc.__setitem__((0, 0), "x"),
    "at": lambda df: df.at.__setitem__((df.index[0], "capacity_gbps"), 1.0),
    "iat": lambda df: df.iat.__setitem__((0, 0), "x"),
    "column": lambda df: df.__setitem__("capacity_gbps", 1.0),
    "new column": lambda df: df.__setitem__("extra", 1.0),
    "del column": lambda df: df.__delitem__("name"),
    "insert": lambda df: df.insert(0, "extra", 1.0),
    "pop": lambda df: df.pop("name"),
    "index": lambda df: setattr(df, "index", pd.Index([f"x{i}" for i in range(len(df))])),
    "columns": lambda df: setattr(df, "columns", [f"c{i}" for i in range(df.shape[1])]),
    "update": lambda df: df.update(df.head(1).assign(capacity_gbps=1.0)),
    "numpy": lambda df: df["capacity_gbps"].to_numpy().__setitem__(0, 1.0),
}


@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_writing_into_a_table_raises(triangle: Network, write: str) -> None:
    before = triangle.links.copy()
    with pytest.raises((FrozenTableError, ValueError)):
        WRITES[write](triangle.links)
    pd.testing.assert_frame_equal(pd.DataFrame(triangle.links), before)


def test_every_table_is_frozen(triangle: Network) -> None:
    for name, df in triangle.tables().items():
        with pytest.raises(FrozenTableError, match=name):
            df.loc[:, df.columns[0]] = 0


def test_copies_and_derived_frames_are_ordinary(triangle: Network) -> None:
    for df in (triangle.links.copy(), triangle.links.assign(x=1), triangle.links[triangle.links["capacity_gbps"] > 0],
               triangle.links.loc[["AB"]], pd.concat([triangle.links, triangle.links])):
        assert type(df) is pd.DataFrame
        df.loc[df.index[0], "capacity_gbps"] = 99.0
    assert triangle.links.at["AB", "capacity_gbps"] == 10.0
    assert type(triangle.links["capacity_gbps"]) is pd.Series


def test_tables_stay_frozen_through_pickle_and_transformations(triangle: Network) -> None:
    for net in (pickle.loads(pickle.dumps(triangle)), triangle.fail_links(["AB"]), triangle.scale_demand(2.0),
                triangle.with_capacity({"AB": 20.0})):
        with pytest.raises(FrozenTableError):
            net.links.loc["AC", "capacity_gbps"] = 1.0
        with pytest.raises(FrozenTableError):
            net.demands.loc["d1", "demand_gbps"] = 1.0


def test_caller_frame_does_not_leak_into_the_network(triangle: Network) -> None:
    links = triangle.links.copy()
    net = triangle.copy_with(links=links)
    links.loc["AB", "capacity_gbps"] = 99.0
    assert net.links.at["AB", "capacity_gbps"] == 10.0


INPLACE_CALLS: dict[str, Callable[[pd.DataFrame], object]] = {
    "fillna": lambda df: df.fillna(0, inplace=True),
    "drop": lambda df: df.drop(columns=["name"], inplace=True),
    "rename": lambda df: df.rename(columns={"name": "label"}, inplace=True),
    "sort_values": lambda df: df.sort_values("capacity_gbps", ascending=False, inplace=True),
    "set_index": lambda df: df.set_index("name", inplace=True),
    "reset_index": lambda df: df.reset_index(inplace=True),
    "query": lambda df: df.query("capacity_gbps > 10", inplace=True),
    "eval": lambda df: df.eval("capacity_gbps = capacity_gbps * 2", inplace=True),
    "where": lambda df: df.where(df["capacity_gbps"] > 10, inplace=True),
    "dropna": lambda df: df.dropna(how="all", axis=1, inplace=True),
}


@pytest.mark.parametrize("call", INPLACE_CALLS, ids=list(INPLACE_CALLS))
def test_inplace_methods_raise_and_change_nothing(triangle: Network, call: str) -> None:
    before = pd.DataFrame(triangle.links).copy()
    with warnings.catch_warnings():  # pandas 3.1 deprecates most inplace keywords (PDEP-8); they still work
        warnings.simplefilter("ignore", DeprecationWarning)
        INPLACE_CALLS[call](before.copy())  # on a plain frame the call works (so the refusal below is the freeze's)
    with pytest.raises(FrozenTableError, match=rf"{call}\(inplace=True\)"):
        INPLACE_CALLS[call](triangle.links)
    pd.testing.assert_frame_equal(pd.DataFrame(triangle.links), before)


def test_every_inplace_method_of_pandas_is_refused(triangle: Network) -> None:
    """Every public DataFrame method of pandas whose signature has ``inplace`` (found here with inspect.signature,
    as a second way to the one backbone.frozen uses) is guarded; without ``inplace`` each answers a plain frame.
    (geopandas adds ``DataFrame.set_geometry`` when imported; it refuses ``inplace=True`` on a DataFrame itself.)"""
    by_signature = set()
    for name in dir(pd.DataFrame):
        member = getattr(pd.DataFrame, name)
        if name.startswith("_") or not callable(member) or not getattr(member, "__module__", "").startswith("pandas."):
            continue
        with contextlib.suppress(TypeError, ValueError):
            if "inplace" in inspect.signature(member).parameters:
                by_signature.add(name)
    assert by_signature and set(INPLACE_METHODS) >= by_signature  # geopandas, imported first, adds set_geometry
    for name in INPLACE_METHODS:
        with pytest.raises(FrozenTableError, match=name):
            getattr(triangle.links, name)(inplace=True)
    assert type(triangle.links.fillna(0)) is pd.DataFrame
    assert type(triangle.links.sort_values("capacity_gbps")) is pd.DataFrame


def test_augmented_assignment_raises(triangle: Network) -> None:
    ops = {n for n in dir(pd.DataFrame) if n.startswith("__i") and n[3:-2] in
           {"add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and", "or", "xor"}}
    assert ops == set(AUGMENTED_ASSIGNMENTS)
    links = triangle.links
    before = pd.DataFrame(links).copy()
    with pytest.raises(FrozenTableError, match="augmented assignment"):
        links += 1
    with pytest.raises(FrozenTableError, match="augmented assignment"):
        links |= links
    derived = links[["capacity_gbps"]]  # a derived frame is plain: augmented assignment works on it
    derived += 1
    pd.testing.assert_frame_equal(pd.DataFrame(triangle.links), before)


def test_attributes_cannot_be_set(triangle: Network) -> None:
    with pytest.raises(FrozenTableError, match="attrs"):
        triangle.links.attrs = {"x": 1}
    with pytest.raises(FrozenTableError, match="capacity_gbps"):
        triangle.links.capacity_gbps = 1.0


def test_only_documented_pandas_hooks_are_overridden() -> None:
    """The subclass overrides public methods, Python protocols and the two subclass hooks pandas' "Extending
    pandas" guide documents (``_constructor``, ``_metadata``); no private pandas method (issue #30 item 7)."""
    private = {n for n in vars(FrozenFrame) if n.startswith("_") and not (n.startswith("__") and n.endswith("__"))}
    assert private == {"_constructor", "_metadata", "_table_name", "_refuse", "_plain"}
    assert not any(hasattr(pd.DataFrame, n) for n in private - {"_constructor", "_metadata"})

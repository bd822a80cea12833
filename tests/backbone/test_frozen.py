"""A Network's tables are read-only: writing into them raises; copies are ordinary DataFrames."""

from __future__ import annotations

import pickle
from collections.abc import Callable

import pandas as pd
import pytest

from backbone.errors import FrozenTableError
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

"""Derived link columns: one policy. A derived value follows its inputs on every change; an override
(a value that differs from what its inputs give) is kept, and stays apart from the derived values."""

from __future__ import annotations

import numpy as np
import pytest

from backbone.errors import NotFoundError, ValidationError
from backbone.model import DERIVED_COLUMNS, Network, link_latency_ms
from tests.nets import make_network


def _net() -> Network:
    sites = [{"id": s, "lon": lon, "lat": lat, "region": "NA"} for s, lon, lat in
             [("A", 0.0, 0.0), ("B", 5.0, 0.0), ("C", 10.0, 0.0)]]
    links = [
        {"id": "AB", "site_a": "A", "site_b": "B", "capacity_gbps": 100},
        {"id": "BC", "site_a": "B", "site_b": "C", "capacity_gbps": 100, "latency_ms": 50.0},  # measured
        {"id": "AC", "site_a": "A", "site_b": "C", "capacity_gbps": 100, "kind": "submarine",
         "length_km": 2000.0, "max_capacity_gbps": 150.0},
    ]
    return make_network(sites, links, name="derived")


def _expected_latency(net: Network, link: str, length_km: float) -> float:
    kind = np.array([net.links.at[link, "kind"]])
    return round(float(link_latency_ms(np.array([length_km]), kind, net.parameters)[0]), 4)


def test_derived_columns_are_declared() -> None:
    assert DERIVED_COLUMNS["links"] == ("length_km", "latency_ms", "module_cost_usd", "max_capacity_gbps")
    assert DERIVED_COLUMNS["candidates"] == ("length_km", "latency_ms")


def test_overrides_are_what_differs_from_the_derivation() -> None:
    net = _net()
    ov = net.overrides("links")
    assert list(ov.columns) == list(DERIVED_COLUMNS["links"])
    assert ov.at["BC", "latency_ms"] == 50.0
    assert ov.at["AC", "length_km"] == 2000.0 and ov.at["AC", "max_capacity_gbps"] == 150.0
    assert ov.loc["AB"].isna().all()  # everything of AB is derived
    assert np.isnan(ov.at["AC", "latency_ms"])  # AC's latency is derived from its (overridden) length
    assert net.links.at["AC", "latency_ms"] == _expected_latency(net, "AC", 2000.0)


def test_copy_with_a_changed_length_recomputes_latency_and_cost() -> None:
    net = _net()
    links = net.links.copy()
    links.loc["AB", "length_km"] = 1234.0
    out = net.copy_with(links=links)
    assert out.links.at["AB", "length_km"] == 1234.0  # the change is an override
    assert out.overrides("links").at["AB", "length_km"] == 1234.0
    assert out.links.at["AB", "latency_ms"] == _expected_latency(net, "AB", 1234.0)  # not stale
    p = net.parameters
    assert out.links.at["AB", "module_cost_usd"] == pytest.approx(
        p["terrestrial_module_fixed_usd"] + p["terrestrial_module_usd_per_km"] * 1234.0)
    # an override of latency survives a length change; the original is unchanged
    links2 = net.links.copy()
    links2.loc["BC", "length_km"] = 999.0
    out2 = net.copy_with(links=links2)
    assert out2.links.at["BC", "latency_ms"] == 50.0
    assert net.links.at["AB", "length_km"] != 1234.0


def test_copy_with_moved_site_rederives_geometry_but_keeps_overrides() -> None:
    net = _net()
    sites = net.sites.copy()
    sites.loc["B", "lon"] = 7.0
    out = net.copy_with(sites=sites)
    assert out.links.at["AB", "length_km"] > net.links.at["AB", "length_km"]
    assert out.links.at["AB", "latency_ms"] == _expected_latency(out, "AB", out.links.at["AB", "length_km"])
    assert out.links.at["AC", "length_km"] == 2000.0  # override kept
    assert out.links.at["BC", "latency_ms"] == 50.0


def test_nan_clears_an_override() -> None:
    net = _net()
    links = net.links.copy()
    links.loc["BC", "latency_ms"] = np.nan
    out = net.copy_with(links=links)
    assert out.links.at["BC", "latency_ms"] == _expected_latency(net, "BC", net.links.at["BC", "length_km"])
    assert np.isnan(out.overrides("links").at["BC", "latency_ms"])


def test_with_capacity_is_absolute_recomputes_limit_and_keeps_original() -> None:
    net = _net()
    out = net.with_capacity({"AB": 400.0, "AC": 120.0})
    assert out.links.at["AB", "capacity_gbps"] == 400.0
    assert out.links.at["AB", "max_capacity_gbps"] == 400.0 * net.parameters["max_capacity_factor"]
    assert out.links.at["AC", "max_capacity_gbps"] == 150.0  # override kept
    assert net.links.at["AB", "capacity_gbps"] == 100.0
    with pytest.raises(NotFoundError):
        net.with_capacity({"nope": 1.0})
    with pytest.raises(ValidationError, match="capacity_gbps"):
        net.with_capacity({"AB": -1.0})
    with pytest.raises(ValidationError, match="max_capacity_gbps"):
        net.with_capacity({"AC": 200.0})  # above its explicit limit


def test_with_parameters_rederives_only_derived_values() -> None:
    net = _net()
    out = net.with_parameters(terrestrial_latency_factor=1.5)
    assert out.parameters["terrestrial_latency_factor"] == 1.5
    assert out.links.at["AB", "latency_ms"] == _expected_latency(out, "AB", net.links.at["AB", "length_km"])
    assert out.links.at["AB", "latency_ms"] > net.links.at["AB", "latency_ms"]
    assert out.links.at["BC", "latency_ms"] == 50.0
    with pytest.raises(ValidationError, match="unknown parameter"):
        net.with_parameters(speed_of_light=1.0)


def test_derate_and_upgrade_keep_the_limit() -> None:
    net = _net()
    limit = net.links.at["AB", "max_capacity_gbps"]
    assert net.derate_links(["AB"], 0.5).links.at["AB", "max_capacity_gbps"] == limit
    assert net.upgrade_links({"AB": 100.0}).links.at["AB", "max_capacity_gbps"] == limit


def test_saved_and_loaded_network_has_the_same_overrides(tmp_path) -> None:
    from backbone.io import load_scenario, save_scenario

    net = _net()
    save_scenario(net, tmp_path / "s")
    again = load_scenario(tmp_path / "s")
    assert again.overrides("links").equals(net.overrides("links"))
    links = again.links.copy()
    links.loc["AB", "length_km"] = 1234.0
    assert again.copy_with(links=links).links.at["AB", "latency_ms"] == _expected_latency(net, "AB", 1234.0)


def test_copy_with_rejects_unknown_tables() -> None:
    with pytest.raises(TypeError, match="nodes"):
        _net().copy_with(nodes=None)  # type: ignore[arg-type]


def _with_candidate() -> Network:
    net = _net()
    cands = [{"id": "c-AC", "site_a": "A", "site_b": "C", "kind": "terrestrial", "link_kind": "terrestrial",
              "module_gbps": 400, "module_cost_usd": 1e6, "max_modules": 4, "lead_time_quarters": 2},
             {"id": "c-AB", "site_a": "A", "site_b": "B", "kind": "terrestrial", "link_kind": "terrestrial",
              "module_gbps": 400, "module_cost_usd": 1e6, "max_modules": 4, "lead_time_quarters": 2,
              "latency_ms": 99.0}]
    from backbone.model import table_records
    from backbone.validate import build_network

    tables = {t: table_records(df) for t, df in net.tables().items()}
    return build_network({**tables, "candidates": cands}, name=net.name, meta=net.meta)


def test_candidate_latency_follows_parameters() -> None:
    net = _with_candidate()
    assert net.overrides("candidates").at["c-AB", "latency_ms"] == 99.0
    for out in (net.with_parameters(terrestrial_latency_factor=1.5),):
        c = out.candidates
        expected = link_latency_ms(np.array([c.at["c-AC", "length_km"]]), np.array(["terrestrial"]), out.parameters)
        assert c.at["c-AC", "latency_ms"] == round(float(expected[0]), 4)
        assert c.at["c-AC", "latency_ms"] > net.candidates.at["c-AC", "latency_ms"]
        assert c.at["c-AB", "latency_ms"] == 99.0

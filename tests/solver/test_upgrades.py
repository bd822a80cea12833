"""Path-based upgrade planning: hand-computed optima, failure states, the TE re-solve check."""

from __future__ import annotations

import pytest

from backbone.model import Network
from backbone.solver.backends import available_backends
from backbone.solver.design.upgrades import plan_path_upgrades, verify_path_upgrades

# triangle links: 10 Gbps, 100 km; here one module = 10 Gbps at 60,000 + 30 x 100 USD, up to 100 Gbps
MODULE_USD = 63_000.0


@pytest.fixture
def tri(triangle: Network) -> Network:
    return triangle.copy_with(links=triangle.links.assign(module_gbps=10.0, max_capacity_gbps=100.0))


def test_no_upgrade_when_traffic_fits(tri: Network) -> None:
    r = plan_path_upgrades(tri, [()], utilisation_ceiling=1.0)
    assert r.status == "optimal" and r.cost_usd == 0.0 and r.upgrades.empty


def test_demand_beyond_the_upgrade_limit_is_reported(triangle: Network) -> None:
    """The fixture's 400 Gbps modules do not fit under its 40 Gbps upgrade limit: nothing can be
    bought, and the 5 Gbps that do not fit under a 50 % ceiling are reported unmet."""
    r = plan_path_upgrades(triangle, [()], utilisation_ceiling=0.5)
    assert r.upgrades.empty and r.unmet_gbps_by_state["intact"] == pytest.approx(5.0)


@pytest.mark.parametrize("backend", available_backends(mip=True))
def test_cheapest_module_under_a_ceiling(tri: Network, backend: str) -> None:
    """15 Gbps A->C under a 50 % ceiling: one module on the direct link lets it carry 10 and
    A-B-C 5 (upgrading A-B-C instead needs two modules)."""
    r = plan_path_upgrades(tri, [()], utilisation_ceiling=0.5, backend=backend)
    assert r.cost_usd == pytest.approx(MODULE_USD)
    assert list(r.upgrades["link"]) == ["AC"] and list(r.upgrades["modules"]) == [1]
    assert verify_path_upgrades(tri, r, [()])["ok"]


def test_failure_state_buys_the_detour(tri: Network) -> None:
    """Surviving the loss of A-C at 50 % puts all 15 Gbps on A-B-C: 15 <= 0.5 (10 + 10 y) needs
    two modules on each of its links (and then the intact network fits too)."""
    states = [(), ("AC",)]
    r = plan_path_upgrades(tri, states, utilisation_ceiling=0.5)
    assert r.cost_usd == pytest.approx(4 * MODULE_USD)
    assert dict(zip(r.upgrades["link"], r.upgrades["modules"], strict=True)) == {"AB": 2, "BC": 2}
    check = verify_path_upgrades(tri, r, states)
    assert check["ok"] and [s["state"] for s in check["states"]] == ["intact", "AC"]


def test_slo_limits_the_paths_upgrades_may_use(tri: Network) -> None:
    """With an SLO that only the direct path meets, the detour cannot help: the direct link is upgraded
    even though A-B-C has spare capacity."""
    net = tri.copy_with(demands=tri.demands.assign(slo_rtt_ms=3.0))  # direct: 1 ms one way; A-B-C: 2 ms
    r = plan_path_upgrades(net, [()], utilisation_ceiling=1.0)
    assert list(r.upgrades["link"]) == ["AC"]
    # and the edge-based design (no latency limits) needs nothing
    from backbone.solver.design.upgrades import design_upgrades

    assert design_upgrades(net, "none", 1.0, time_limit_s=30).cost_usd == pytest.approx(0.0)


def test_verification_catches_missing_upgrades(tri: Network) -> None:
    r = plan_path_upgrades(tri, [()], utilisation_ceiling=0.5)
    r.upgrades = r.upgrades.iloc[0:0]
    assert not verify_path_upgrades(tri, r, [()])["ok"]

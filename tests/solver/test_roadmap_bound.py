"""The roadmap's global bound is a bound: on random small instances it never exceeds the exact optimum of the
set it covers (one MIP over every period, :func:`roadmap_exact_mip`), and no period floor exceeds what that
optimum has online in its period."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from backbone.model import Network
from backbone.validate import build_network
from tests.nets import lead_toy, random_connected, submarine_cut_network


def random_roadmap_net(seed: int) -> Network:
    """Five sites, six links in three SRLGs, two candidate routes with lead times, demand that must grow into
    new modules (module costs and sizes drawn at random)."""
    rng = np.random.default_rng(seed)
    sites, edges = random_connected(rng, 5, 6)
    for s in sites:
        s["lat"] = float(rng.uniform(-1, 1))
    sites[0]["kind"] = "datacenter"  # the GPU stage needs a site (no metro: no inference demand)
    links = [{"id": f"l{j}", "site_a": f"s{a}", "site_b": f"s{b}", "capacity_gbps": float(rng.choice([100, 200])),
              "module_gbps": 100.0, "module_cost_usd": float(rng.integers(1, 4)) * 1e6, "max_capacity_gbps": 500.0}
             for j, (a, b) in enumerate(edges)]
    srlgs = [{"id": f"g{i}", "kind": "conduit", "links": ";".join(f"l{j}" for j in range(len(edges)) if j % 3 == i)}
             for i in range(3)]
    pairs = [tuple(sorted(rng.choice(5, 2, replace=False).tolist())) for _ in range(2)]
    cands = [{"id": f"c{i}", "site_a": f"s{a}", "site_b": f"s{b}", "kind": "terrestrial", "link_kind": "terrestrial",
              "module_gbps": float(rng.choice([50, 100])), "module_cost_usd": float(rng.integers(1, 3)) * 1e6,
              "fixed_cost_usd": float(rng.integers(1, 6)) * 1e6, "max_modules": 3,
              "lead_time_quarters": int(rng.integers(1, 3)), "available_from": ""}
             for i, (a, b) in enumerate(pairs)]
    demands = [{"id": f"d{i}", "src": f"s{a}", "dst": f"s{b}", "demand_gbps": float(rng.integers(20, 90)),
                "traffic_class": "bulk"}
               for i, (a, b) in enumerate({tuple(sorted(rng.choice(5, 2, replace=False).tolist())) for _ in range(5)})]
    return build_network({"sites": sites, "links": links, "demands": demands, "srlgs": srlgs, "metros": [],
                          "candidates": cands}, name=f"random-roadmap-{seed}")


def bound_and_optimum(net: Network, monkeypatch: pytest.MonkeyPatch, **options: Any) -> tuple[dict[str, Any], Any]:
    """Plan the roadmap; its summary's bound and the exact optimum of the set the bound covers (same inputs)."""
    import backbone.solver.roadmap.rolling as rm
    from backbone.solver.roadmap.bound import roadmap_exact_mip

    seen: list[tuple[Any, Any]] = []
    real = rm.roadmap_lower_bound

    def spy(*a: Any, **kw: Any) -> Any:
        seen.append((a, kw))
        return real(*a, **kw)

    monkeypatch.setattr(rm, "roadmap_lower_bound", spy)
    opts = {"periods": 3, "growth_per_year": {"NA": 1.5}, "maps": False, "failures": {"workers": 1}, **options}
    s = rm.plan_roadmap(net, opts).summary()
    (a, kw), = seen
    kw = {k: v for k, v in kw.items() if k not in ("time_limit_s", "separation")}
    # the set the bound covers: each period's working set and the states its MIP added (added_states)
    added = s["bound"].get("added_states") or [[] for _ in a[3]]
    a = (*a[:3], [[*w, *x] for w, x in zip(a[3], added, strict=True)], *a[4:])
    return s, roadmap_exact_mip(*a, **kw, time_limit_s=120.0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_bound_never_exceeds_the_exact_optimum_on_random_instances(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    s, exact = bound_and_optimum(random_roadmap_net(seed), monkeypatch)
    b = s["bound"]
    assert exact is not None, "the exact MIP of a small instance is solved"
    optimum, online = exact
    assert b["status"] == "optimal" and b["lower_bound_usd"] is not None
    assert b["lower_bound_usd"] <= optimum * (1 + 1e-6) + 1.0
    floors = np.asarray(b["period_floors_usd"])
    assert (floors <= online * (1 + 1e-6) + 1.0).all()
    assert (np.diff(floors) >= -1e-6).all(), "floors are monotone: capacity persists"


@pytest.mark.slow
def test_bound_is_the_optimum_of_the_lead_toy(monkeypatch: pytest.MonkeyPatch) -> None:
    s, exact = bound_and_optimum(lead_toy(), monkeypatch, growth_per_year={})
    # the covered set charges C1's module at the latest it could be committed (an upgrade, a quarter before 2027Q3)
    assert exact is not None and exact[0] == pytest.approx(5e6 + 2e6 * 1.08 ** -0.25, rel=1e-6)
    assert list(exact[1]) == pytest.approx([0.0, 0.0, 7e6])
    assert s["lower_bound_usd"] <= exact[0] + 1.0


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 3])
def test_site_cuts_alone_stay_below_the_optimum_and_above_the_lp(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import backbone.solver.roadmap.bound as rb
    import backbone.solver.roadmap.bound_model as bound_model

    monkeypatch.setattr(rb, "_period_floors", lambda *a, **kw: (np.zeros(3), ""))  # the LP with its cuts alone
    s, exact = bound_and_optimum(random_roadmap_net(seed), monkeypatch)
    assert exact is not None
    with_cuts = s["bound"]["lower_bound_usd"]
    assert "whole modules at each site cut" in s["bound"]["covers"]
    assert with_cuts <= exact[0] * (1 + 1e-6) + 1.0
    monkeypatch.setattr(bound_model, "site_cut_rows", lambda *a, **kw: None)
    s, _ = bound_and_optimum(random_roadmap_net(seed), monkeypatch)
    assert s["bound"]["lower_bound_usd"] <= with_cuts * (1 + 1e-6) + 1.0


def test_monotone_floors_is_a_running_maximum() -> None:
    from backbone.solver.roadmap.cuts import monotone_floors

    assert monotone_floors(np.array([0.0, 3.0, 1.0, 0.0, 5.0])).tolist() == [0.0, 3.0, 3.0, 3.0, 5.0]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 3])
def test_added_states_raise_the_floors_and_keep_the_roadmap_covered(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no working set at all, the period MIPs find the states their designs leave short by sweeping them
    (row generation): the floors rise from nothing, only states the roadmap carries are added, and the bound stays
    below both this roadmap's discounted capex and the exact optimum over the states added."""
    import backbone.solver.roadmap.rolling as rm
    from backbone.solver.roadmap.bound import roadmap_exact_mip, roadmap_lower_bound

    seen: list[tuple[Any, Any]] = []
    real = rm.roadmap_lower_bound
    monkeypatch.setattr(rm, "roadmap_lower_bound", lambda *a, **kw: seen.append((a, kw)) or real(*a, **kw))
    s = rm.plan_roadmap(random_roadmap_net(seed), {"periods": 3, "growth_per_year": {"NA": 1.5}, "maps": False,
                                                   "failures": {"workers": 1}}).summary()
    (a, kw), = seen
    sep = kw.pop("separation")
    assert sep.ceiling == 1.0 and len(sep.not_carried) == 3
    empty = (*a[:3], [[], [], []], *a[4:])
    plain = roadmap_lower_bound(*empty, **kw)
    rows = roadmap_lower_bound(*empty, **kw, separation=sep)
    assert plain.period_floors_usd == [0.0, 0.0, 0.0] and plain.added_states == []
    assert rows.status == "optimal" and any(rows.added_states)
    assert rows.period_floors_usd[-1] > 0 and "failure state(s) the period MIPs' designs left short" in rows.covers
    for t, ids in enumerate(rows.added_states):
        assert not set(ids) & sep.not_carried[t], "an excused or violated state is never added"
    assert rows.lower_bound_usd is not None
    assert rows.lower_bound_usd <= s["discounted_network_capex_usd"] * (1 + 1e-6) + 1.0, "the roadmap is covered"
    # the exact optimum over the added states, each held to the sweep's "carried" (ceiling 1.0)
    kw = {k: v for k, v in kw.items() if k != "time_limit_s"}
    exact = roadmap_exact_mip(*a[:3], rows.added_states, *a[4:8], 1.0, **kw, time_limit_s=120.0)
    assert exact is not None
    assert rows.lower_bound_usd <= exact[0] * (1 + 1e-6) + 1.0
    assert (np.asarray(rows.period_floors_usd) <= exact[1] * (1 + 1e-6) + 1.0).all()


def test_a_separation_sweep_skips_what_it_already_has() -> None:
    """``sweep_states`` with ``skip`` gives the same records for the other states and none for the skipped ones (the
    bound's sweeps skip the modelled states and those the roadmap does not carry)."""
    from backbone.solver.design.survivable.sweeps import sweep_states
    from backbone.solver.failures import FailureOptions

    net = submarine_cut_network()
    opts = FailureOptions(kind="link", workers=1)
    every = {r.scenario: r for r in sweep_states(net, "link", opts)}
    skip = set(list(every)[::2])
    some = {r.scenario: r for r in sweep_states(net, "link", opts, skip)}
    assert some.keys() == every.keys() - skip and skip
    for sid, r in some.items():
        assert (r.impact.survived, r.impact.mlu) == (every[sid].impact.survived, every[sid].impact.mlu), sid

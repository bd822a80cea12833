"""The roadmap (issue #16): lead times, ready-for-service dates, budgets, persistence, the checker.

Three-period toys whose optimum is known by hand:

- *lead*: sites A and B joined by one link in SRLG ``s1``; the only protection of A->B against ``s1`` is
  candidate ``C1`` (fixed 5 M + 2 M per 100 Gbps module, lead time 2 quarters). It can be online in
  2027Q3 at the earliest, committed in 2027Q1 (two periods early); one module (7 M USD) carries the
  50 Gbps demand.
- *gpus*: a metro's 1,000 GPUs of inference demand, two data centres next to it. DC2 is cheaper over
  five years (low power price) but dearer to buy; a capex budget of 25 M USD per period forces the
  block (1,024 GPUs) into DC1 (20.48 M USD) instead of DC2 (30.72 M USD).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backbone.model import Network
from backbone.validate import build_network
from tests.nets import lead_toy

QUIET = {"periods": 3, "growth_per_year": {}, "maps": False, "failures": {"workers": 1}}


def gpu_toy() -> Network:
    dc = {"kind": "datacenter", "region": "NA", "gpus_max": 4096, "power_available_mw": 10, "power_max_mw": 10}
    sites = [{"id": "P", "lon": 0.0, "lat": 0.0, "region": "NA", "metro": "M"},
             {"id": "DC1", "lon": 0.3, "lat": 0.0, "capex_per_gpu_usd": 20000, "power_price_usd_per_mwh": 300, **dc},
             {"id": "DC2", "lon": 0.0, "lat": 0.3, "capex_per_gpu_usd": 30000, "power_price_usd_per_mwh": 30, **dc}]
    links = [{"id": "P-DC1", "site_a": "P", "site_b": "DC1", "capacity_gbps": 1000},
             {"id": "P-DC2", "site_a": "P", "site_b": "DC2", "capacity_gbps": 1000}]
    metros = [{"id": "M", "lon": 0.0, "lat": 0.0, "region": "NA", "inference_gpus": 1000}]
    return build_network({"sites": sites, "links": links, "demands": [], "srlgs": [], "metros": metros},
                         name="gpu-toy")


def plan(net: Network, **options: Any) -> Any:
    from backbone.solver.roadmap.rolling import plan_roadmap

    return plan_roadmap(net, {**QUIET, **options})


@pytest.mark.slow
def test_link_committed_two_periods_early_because_of_its_lead_time() -> None:
    r = plan(lead_toy())
    s = r.summary()
    assert r.labels == ["2027Q1", "2027Q2", "2027Q3"]
    q1, q2, q3 = s["periods"]
    assert q1["design"]["mode"] == "nothing buildable" and q1["builds"] == []
    assert q1["survivability"]["violated"] == ["srlg:s1"]  # nothing can be online in the first quarter
    assert q2["builds"] == []  # C1 cannot be online before 2027Q3
    assert [b["id"] for b in q3["builds"]] == ["C1"]
    c1 = q3["builds"][0]
    assert (c1["committed"], c1["online"], c1["modules"]) == ("2027Q1", "2027Q3", 1)
    assert c1["cost_usd"] == pytest.approx(7e6)
    assert q1["capex_usd"] == pytest.approx(7e6) and q3["capex_usd"] == 0.0  # capex when committed
    # s1, and the new route C1 (in no SRLG) as its own group
    assert q3["survivability"]["survived"] == 2 and not q3["survivability"]["violated"]
    assert s["total_capex_usd"] == pytest.approx(7e6)
    assert s["step_bounds"]["gap"] == pytest.approx(0.0, abs=1e-6)  # the global bound: test_global_bound_...
    assert "C1" in r.networks[2].links.index and "C1" not in r.networks[1].links.index
    assert s["status"] == "partial"  # 2027Q1 and 2027Q2 cannot survive s1 yet, and say so
    # backbone and GPU capex apart, per period and in total (issue #32: the headline mixed them)
    assert (q1["network_capex_usd"], q1["gpu_capex_usd"]) == (pytest.approx(7e6), 0.0)
    assert s["network_capex_usd"] == pytest.approx(7e6) and s["gpu_capex_usd"] == 0.0
    # the starting risk is said once, with the earliest quarter from which every state is carried
    risk = [n for n in s["notes"] if "2027Q1" in n and ("risk" in n.lower() or "online" in n)]
    assert risk == ["Starting risk: nothing can be online in 2027Q1 (a link upgrade takes 1 quarter(s) from order to "
                    "service and nothing may be ordered before 2027Q1), so srlg failures not carried in 2027Q1 (1); "
                    "every srlg failure that is not excused is carried from 2027Q2 on."]  # 2027Q2 excuses s1 (C1)
    assert s["starting_risk"] == {"failure_kind": "srlg", "periods": [{"period": "2027Q1", "violated": 1}],
                                  "safe_from": "2027Q2", "nothing_online": True, "text": risk[0]}
    # each period's design bound is named for what it is: the MIP's bound is restricted (issue #32)
    d3 = q3["design"]
    assert d3["lower_bound_usd"] is None and d3["restricted_optimum"]["restriction"].startswith("designs that open")
    from backbone.solver.roadmap.output import period_table
    from backbone.solver.roadmap.rolling import design_bound

    assert design_bound(d3)[2].startswith("restricted: optimal among designs that open")
    assert design_bound(q1["design"]) == (0.0, 0.0, "")  # nothing can be built: cost 0 is the optimum
    table = period_table(r.typed_summary())
    assert table["starting_risk"].tolist() == [True, False, False]
    assert table["design_bound"].tolist()[0] == "true bound" and table["design_bound"][2].startswith("restricted")
    # mode and status agree everywhere: "survivable" only beside optimal or feasible
    for p in s["periods"]:
        assert p["design"]["mode"] != "survivable" or p["design"]["status"] in ("optimal", "feasible")


def test_starting_risk_names_the_periods_and_says_when_none_is_safe() -> None:
    from backbone.solver.design.survivable.survivability import Survivability
    from backbone.solver.roadmap.rolling import starting_risk

    def sv(violated: list[str]) -> Survivability:
        return Survivability(failure_kind="link", states=3, survived=3 - len(violated), not_survivable=[],
                             violated=violated)

    assert starting_risk(["2027Q1", "2027Q2"], [sv([]), sv([])]) == []
    assert starting_risk(["2027Q1", "2027Q2", "2027Q3"], [sv(["a"]), sv([]), sv(["b", "c"])]) == [
        "Risk: link failures not carried in 2027Q1 (1), 2027Q3 (2), the last period included: no period from which "
        "every link failure that is not excused is carried."]


@pytest.mark.slow
def test_the_cli_table_shows_violated_states_and_capex_apart() -> None:
    """The roadmap table never shows "survivable" beside violated states, and splits backbone and GPU capex."""
    import io

    from rich.console import Console

    import backbone.api.cli.roadmap_cmds as cmds

    s = plan(lead_toy()).summary()
    buf = io.StringIO()
    old = cmds.out_console
    cmds.out_console = Console(file=buf, width=250)
    try:
        cmds._print(s)
    finally:
        cmds.out_console = old
    text = buf.getvalue()
    assert "backbone capex 7.0 M USD" in text and "GPU capex 0.0 M USD" in text
    row = [c.strip() for c in next(line for line in text.splitlines() if line.startswith("│ 2027Q1")).split("│")]
    header = [c.strip() for c in next(line for line in text.splitlines() if line.startswith("┃ period")).split("┃")]
    cell = dict(zip(header, row, strict=True))
    assert (cell["carried"], cell["violated"], cell["excused"]) == ("0/1", "1", "0")
    assert cell["design"] == "nothing buildable (skipped)" and cell["backbone capex"] == "7.0 M"


@pytest.mark.slow
def test_global_bound_covers_every_period_and_is_tight_where_the_toy_is_integral() -> None:
    r = plan(lead_toy())
    s = r.summary()
    b = s["bound"]
    assert b["status"] == "optimal" and "all 3 periods" in b["covers"] and "1 failure state(s)" in b["covers"]
    assert r.periods[2].design.working_set == ["srlg:s1"]
    known_optimum = 7e6  # C1 committed in 2027Q1 (discount factor 1): one module and its fixed cost
    assert s["discounted_network_capex_usd"] == pytest.approx(known_optimum)
    assert s["lower_bound_usd"] <= known_optimum + 1 and s["lower_bound_usd"] <= s["discounted_network_capex_usd"] + 1
    # the LP relaxation alone would charge half a module (as an upgrade of a route built a quarter earlier,
    # committed in 2027Q2 at the latest) and a quarter of the fixed cost (the route may hold two modules):
    lp_alone = 2e6 * 0.5 * 1.08 ** -0.25 + 5e6 * 0.25
    # the period MIP of 2027Q3 (s1 must be carried: C1 built whole, one whole module) proves 7 M USD online then,
    # and the LP must pay for 7 M USD of capacity online in 2027Q3, at the lowest discount factor of any build
    # online then (a module committed in 2027Q2) at best
    assert b["period_floors_usd"][:2] == [0.0, 0.0] and b["period_floors_usd"][2] == pytest.approx(7e6, rel=1e-4)
    assert s["lower_bound_usd"] >= 7e6 * 1.08 ** -0.25 * (1 - 1e-4) > lp_alone
    assert "proven bound of a MIP (integer modules and routes)" in b["covers"] and "(1 period(s))" in b["covers"]
    assert s["gap"] == pytest.approx((7e6 - s["lower_bound_usd"]) / 7e6)
    assert s["step_bounds"]["network_capex_lower_bound_usd"] == pytest.approx(7e6)  # the per-period figure
    assert s["bound"]["objective_lower_bound_usd"] == pytest.approx(s["lower_bound_usd"])  # no GPUs in the toy

    # integral: one 50 Gbps module carries the 50 Gbps of s1 and the route holds only it. With the upgrade's lead
    # equal to the route's, the LP charges what the roadmap does: 7 M USD committed in 2027Q2, online in 2027Q4
    s = plan(lead_toy(rfs="2027Q4", module_gbps=50, max_modules=1), periods=4, upgrade_lead_quarters=2).summary()
    optimum = 7e6 * 1.08 ** -0.25
    assert [(x["id"], x["committed"]) for x in s["builds"]] == [("C1", "2027Q2")]
    assert s["discounted_network_capex_usd"] == pytest.approx(optimum)
    assert s["lower_bound_usd"] <= optimum and s["lower_bound_usd"] == pytest.approx(optimum, rel=1e-3)
    assert s["gap"] == pytest.approx(0.0, abs=1e-3)


@pytest.mark.slow
def test_bound_falls_back_to_the_intact_states_when_its_lp_runs_out_of_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import backbone.solver.roadmap.bound as rb
    from backbone.solver.core.problem import Solution, Status

    real, calls = rb.solve, []

    def slow_first(lp: Any, **kw: Any) -> Any:
        calls.append(lp.name)
        if len(calls) == 1:
            return Solution(Status.TIME_LIMIT, float("nan"), None, "highs", 1.0, message="Time limit reached")
        return real(lp, **kw)

    monkeypatch.setattr(rb, "solve", slow_first)
    b = plan(lead_toy()).summary()["bound"]
    lps = [c for c in calls if not c.startswith("roadmap-period-mip-")]  # the period MIPs come with each try
    assert len(lps) == 3 and b["status"] == "optimal" and b["failure_states"] == 0
    assert b["covers"].startswith("LP relaxation over all 3 periods with the intact state of each period")
    assert "with the failure states: least-unmet LP: time_limit" in b["note"]
    assert b["lower_bound_usd"] == pytest.approx(0.0, abs=1e-3)  # the intact states need nothing built


@pytest.mark.slow
def test_bound_fallback_keeps_the_period_floors_found_with_the_failure_states(monkeypatch: pytest.MonkeyPatch) -> None:
    import backbone.solver.roadmap.bound as rb
    from backbone.solver.core.problem import Solution, Status

    real, lps = rb.solve, []

    def main_lp_times_out(lp: Any, **kw: Any) -> Any:
        if not lp.name.startswith("roadmap-period-mip-"):
            lps.append(lp.name)
            if len(lps) == 2:  # the first try's bound LP, after its least-unmet LP and the period MIPs
                return Solution(Status.TIME_LIMIT, float("nan"), None, "highs", 1.0, message="Time limit reached")
        return real(lp, **kw)

    monkeypatch.setattr(rb, "solve", main_lp_times_out)
    b = plan(lead_toy()).summary()["bound"]
    assert len(lps) == 4 and b["status"] == "optimal" and b["failure_states"] == 0
    assert b["covers"].startswith("LP relaxation over all 3 periods with the intact state of each period")
    assert "over that period's intact state and the failure states its design found binding (1 period(s))" in b["covers"]
    assert b["period_floors_usd"][2] == pytest.approx(7e6, rel=1e-4)
    assert 7e6 * 1.08 ** -0.25 * (1 - 1e-4) <= b["lower_bound_usd"] <= 7e6 + 1  # the intact LP alone: 0


@pytest.mark.slow
def test_ready_for_service_date_holds_a_candidate_back() -> None:
    s = plan(lead_toy(rfs="2027Q4"), periods=4).summary()
    online = [b for p in s["periods"] for b in p["builds"]]
    assert [(b["id"], b["online"], b["committed"]) for b in online] == [("C1", "2027Q4", "2027Q2")]


def test_yearly_periods_round_lead_times_up_to_whole_years() -> None:
    s = plan(lead_toy(rfs="2027Q4"), period="year", start="2027", periods=2).summary()
    assert [p["period"] for p in s["periods"]] == ["2027", "2028"]
    c1 = s["periods"][1]["builds"][0]
    assert (c1["id"], c1["committed"], c1["online"]) == ("C1", "2027", "2028")  # 2 quarters -> one year


@pytest.mark.slow
def test_budget_forces_the_cheaper_site_first() -> None:
    free = plan(gpu_toy(), gpu_lead_quarters=0).summary()
    assert free["periods"][0]["gpus_added_by_site"] == {"DC2": 1024.0}  # cheapest over five years
    assert free["periods"][0]["capex_usd"] == pytest.approx(1024 * 30000)
    # the toy's two links are in no SRLG, so an SRLG design would fail each as its own group (each cuts a campus
    # off); this test is about the budget, so the design survives the intact state only
    capped = plan(gpu_toy(), gpu_lead_quarters=0, budget_usd_per_period=25e6, carry_over=0.0,
                  design={**QUIET.get("design", {}), "survive": "none"}).summary()
    p0 = capped["periods"][0]
    assert p0["gpus_added_by_site"] == {"DC1": 1024.0}  # the budget forces the cheaper site to buy
    assert p0["capex_usd"] == pytest.approx(1024 * 20000)
    assert p0["served_share"] == pytest.approx(1.0)
    assert all(p["capex_usd"] == 0.0 for p in capped["periods"][1:])  # capacity persists: nothing more needed
    assert capped["status"] == "ok" and not capped["budget_shortfalls"]


@pytest.mark.slow
def test_power_arriving_in_steps() -> None:
    from dataclasses import replace

    net = gpu_toy()
    sites = net.sites.copy()
    sites.loc[["DC1", "DC2"], ["power_available_mw", "power_max_mw"]] = 0.5  # too little for a block (1.43 MW)
    net = replace(net, sites=sites)
    s = plan(net, gpu_lead_quarters=0, power_steps=[{"site": "DC2", "from_period": "2027Q2",
                                                     "power_max_mw": 10}]).summary()
    q1, q2, _ = s["periods"]
    assert q1["gpus_added_by_site"] == {} and q1["served_share"] == pytest.approx(0.0)
    assert q2["gpus_added_by_site"] == {"DC2": 1024.0} and q2["served_share"] == pytest.approx(1.0)


def test_a_design_that_finds_no_solution_in_time_is_retried_then_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import backbone.solver.design.survivable.iterate as survive
    from backbone.errors import SolverError

    real = survive.design_survivable
    limits: list[float] = []

    def flaky(net: Network, options: Any, **kw: Any) -> Any:
        limits.append(options.time_limit_s)
        if options.survive != "none":
            raise SolverError("survivable design: time_limit after 1.0 s (Time limit reached)")
        return real(net, options, **kw)

    monkeypatch.setattr(survive, "design_survivable", flaky)
    s = plan(lead_toy(), design={"time_limit_s": 2}).summary()
    q3 = s["periods"][2]
    assert q3["design"]["mode"] == "intact only (solver)" and q3["builds"] == []
    assert "time_limit" in q3["design"]["solver_note"] and "8 s per solve" in q3["design"]["solver_note"]
    assert limits[:2] == [2.0, 8.0]  # retried with 4 x the limit
    assert q3["survivability"]["violated"] == ["srlg:s1"] and s["status"] == "partial"
    assert any("2027Q3" in n and "time_limit" in n for n in s["notes"])


@pytest.mark.slow
def test_infeasible_budget_is_explained_by_period() -> None:
    s = plan(lead_toy(), budget_usd_per_period=3e6, carry_over=1.0).summary()
    assert s["status"] == "budget_limited"
    short = s["budget_shortfalls"]
    assert [x["period"] for x in short] == ["2027Q3"]
    assert short[0]["shortfall_usd"] == pytest.approx(4e6)  # 7 M needed in 2027Q1, 3 M available
    assert "2027Q1" in short[0]["reason"] and "7.0 M USD" in short[0]["reason"]
    q3 = s["periods"][2]
    assert q3["design"]["mode"] == "intact only (budget)" and q3["builds"] == []
    assert q3["survivability"]["violated"] == ["srlg:s1"]
    assert all(row["committed_usd"] <= row["available_usd"] + 1 for row in s["ledger"])
    # the LP alone would carry s1 within the budget with part of C1; the period MIP's floor (7 M USD of whole
    # modules and routes online in 2027Q3, committed by 2027Q2) proves no roadmap within the budgets carries it,
    # so the bound says so and no gap is claimed
    assert s["bound"]["status"] == "infeasible" and s["lower_bound_usd"] is None and s["gap"] is None
    assert s["bound"]["period_floors_usd"][2] == pytest.approx(7e6, rel=1e-4) and "no roadmap within the budgets" in s["bound"]["note"]
    tight = plan(lead_toy(), budget_usd_per_period=1e6, carry_over=1.0).summary()["bound"]
    assert tight["status"] == "infeasible" and tight["lower_bound_usd"] is None  # 1.25 M of fixed cost by 2027Q1


def test_growth_and_carry_over() -> None:
    from backbone.solver.roadmap.options import RoadmapOptions
    from backbone.solver.roadmap.rolling import budget_ledger, grow_network

    o = RoadmapOptions(period="year", start="2027", growth_per_year={"NA": 0.5}, periods=3)
    assert o.labels() == ["2027", "2028", "2029"]
    g = grow_network(lead_toy(), o, 2)
    assert g.demands.at["d1", "demand_gbps"] == pytest.approx(50 * 1.5 ** 2)
    assert budget_ledger([10.0, 10.0, 10.0], [4.0, 0.0, 30.0], 0.5) == [10.0, 13.0, 16.5]


@pytest.mark.parametrize(("options", "field"), [
    ({"start": "2027Q5"}, "start"), ({"growth_per_year": {"MARS": 0.1}}, "growth_per_year"),
    ({"budget_usd_per_period": [1.0, 2.0]}, "budget_usd_per_period"), ({"periodz": 3}, "periodz"),
    ({"design": {"time_limitz": 3}}, "design.time_limitz"),
])
def test_bad_options_name_the_field(options: dict[str, Any], field: str) -> None:
    from backbone.errors import ValidationError
    from backbone.solver.tasks import parse_options

    with pytest.raises(ValidationError) as exc:
        parse_options("roadmap", {"periods": 3, **options})
    text = " ".join(f"{p.field} {p.message}" for p in exc.value.problems)
    assert field in text, text


def test_unknown_site_in_power_steps_is_a_validation_error() -> None:
    from backbone.errors import ValidationError

    with pytest.raises(ValidationError, match=r"power_steps\.0\.site"):
        plan(lead_toy(), power_steps=[{"site": "nowhere", "from_period": "2027Q2", "power_max_mw": 5}])


@pytest.mark.slow
def test_task_writes_scenarios_and_checker_passes_then_catches_doctoring(tmp_path: Path) -> None:
    from backbone.io import load_scenario
    from backbone.solver.checks.roadmap import check_roadmap
    from backbone.solver.roadmap.options import RoadmapOptions
    from backbone.solver.roadmap.summary import RoadmapSummary
    from backbone.solver.tasks import run_task

    net = lead_toy()
    options = {**QUIET, "maps": True, "verify": True}
    res = run_task("roadmap", net, options, tmp_path)
    typed = res.summary  # built as the model, dumped once at the edge
    assert typed.verification is not None and typed.verification.ok, typed.verification
    assert isinstance(typed, RoadmapSummary) and res.document() == typed.document()
    assert typed.objective.capex_usd == pytest.approx(7e6) and typed.step_bounds.network_capex_usd == 7e6
    for name in ("roadmap.json", "roadmap_periods.csv", "roadmap_builds.csv", "roadmap_budget.csv", "timeline.png",
                 "map_2027.png", "report.html", "periods/2027Q3/scenario/links.csv"):
        assert name in res.files and (tmp_path / name).exists(), name
    doc = json.loads((tmp_path / "roadmap.json").read_text())
    assert doc["periods"][2]["builds"][0]["committed"] == "2027Q1"
    q3 = load_scenario(tmp_path / "periods" / "2027Q3" / "scenario")
    assert q3.links.at["C1", "capacity_gbps"] == 100
    html = (tmp_path / "report.html").read_text()
    assert "Timeline" in html and "data:image/png;base64" in html and "2027Q3" in html

    opts = RoadmapOptions.model_validate(options)
    assert check_roadmap(net, opts, doc, tmp_path).ok
    early = json.loads(json.dumps(doc))
    early["builds"] = [{**b, "committed": "2027Q2"} if b["id"] == "C1" else b for b in early["builds"]]
    rep = check_roadmap(net, opts, early, tmp_path, survivability=False)
    assert {v.check for v in rep.violations} == {"lead_time"}
    cheap = json.loads(json.dumps(doc))
    cheap["builds"] = [{**b, "cost_usd": 1.0} for b in cheap["builds"]]
    assert {v.check for v in check_roadmap(net, opts, cheap, tmp_path, survivability=False).violations} == {
        "build_cost"}
    over = check_roadmap(net, opts.model_copy(update={"budget_usd_per_period": 1e6}), doc, tmp_path,
                         survivability=False)
    assert {v.check for v in over.violations} == {"budget"}
    shrunk = [n for n in res_networks(tmp_path, opts)]
    shrunk[2] = shrunk[2].drop_links(["C1"]) if hasattr(shrunk[2], "drop_links") else _without(shrunk[2], "C1")
    bad = check_roadmap(net, opts, doc, shrunk)
    assert {"capacity_matches_builds", "survivability"} <= {v.check for v in bad.violations}
    claims = json.loads(json.dumps(doc))
    claims["periods"][0]["survivability"]["violated"] = []  # claims 2027Q1 survives s1: it does not
    assert "survivability" in {v.check for v in check_roadmap(net, opts, claims, tmp_path).violations}


def res_networks(root: Path, opts: Any) -> list[Network]:
    from backbone.io import load_scenario

    return [load_scenario(root / "periods" / label / "scenario") for label in opts.labels()]


def _without(net: Network, link: str) -> Network:
    from dataclasses import replace

    srlgs = net.srlgs.copy()
    srlgs["links"] = [tuple(x for x in members if x != link) for members in srlgs["links"]]
    return replace(net, links=net.links.drop(index=[link]), srlgs=srlgs)


def test_docs_roadmap_file_is_valid_on_the_shipped_scenario(tmp_path: Path) -> None:
    import re

    from backbone.io import load_scenario
    from backbone.solver.roadmap.options import RoadmapOptions
    from backbone.solver.roadmap.rolling import check_references
    from backbone.solver.tasks.roadmap import load_roadmap_file

    text = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "roadmap.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(# roadmap\.yaml.*?)```", text, re.S)
    assert block, "docs/guide/roadmap.md has no roadmap file example"
    f = tmp_path / "roadmap.yaml"
    f.write_text(block.group(1), encoding="utf-8")
    opts = RoadmapOptions.model_validate(load_roadmap_file(f))
    assert opts.budget_usd_per_period == 4e8 and opts.labels()[-1] == "2028Q4"
    check_references(load_scenario(), opts)


@pytest.mark.slow
def test_roadmap_default_on_the_shipped_scenario(tmp_path: Path) -> None:
    """``backbone roadmap`` with its defaults: 8 quarters of the shipped scenario, checked independently
    (everything but the re-sweep, which ``--verify`` runs)."""
    from typer.testing import CliRunner

    from backbone.api.cli.main import app
    from backbone.io import load_scenario
    from backbone.solver.checks.roadmap import check_roadmap
    from backbone.solver.roadmap.options import RoadmapOptions

    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["roadmap", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [p["period"] for p in doc["periods"]][::7] == ["2027Q1", "2028Q4"] and len(doc["periods"]) == 8
    assert doc["status"] in ("ok", "partial") and doc["total_capex_usd"] > 0
    assert doc["periods"][0]["builds"] == []  # nothing ordered before 2027Q1 can be online in it
    assert any(p["builds"] for p in doc["periods"])
    for p in doc["periods"]:
        assert p["survivability"]["states"] > 0 and p["mlu"] is not None
    report = check_roadmap(load_scenario(), RoadmapOptions(), doc, out, survivability=False)
    assert report.ok, str(report)
    for name in ("report.html", "timeline.png", "map_2027.png", "map_2028.png", "periods/2028Q4/scenario/links.csv"):
        assert (out / name).exists(), name


@pytest.mark.slow
def test_the_checker_tests_each_excuse_on_what_its_period_could_have_online(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #32: the roadmap's excuses are checked by the independent edge LP, not skipped. 2027Q2 excuses s1
    (C1 cannot be online before 2027Q3) and passes; a design made to withhold C1 in 2027Q3 too (monkeypatched)
    excuses s1 there, wrongly -- C1 can be online by then -- and the checker says so; a doctored excused figure
    and a doctored reason are caught as well."""
    import backbone.solver.roadmap.design as design_mod
    from backbone.solver.checks.roadmap import check_roadmap
    from backbone.solver.roadmap.options import RoadmapOptions

    net = lead_toy()
    opts = RoadmapOptions.model_validate(QUIET)
    r = plan(net)
    doc = r.summary()
    assert doc["periods"][1]["survivability"]["not_survivable"][0]["gbps"] == pytest.approx(50.0)
    good = check_roadmap(net, opts, doc, r.networks)
    assert good.ok, str(good)
    assert good.counts["excused_states"] == 1

    wrong_gbps = json.loads(json.dumps(doc))
    wrong_gbps["periods"][1]["survivability"]["not_survivable"][0]["gbps"] = 20.0
    assert {v.check for v in check_roadmap(net, opts, wrong_gbps, r.networks).violations} == {"excused_gbps"}
    wrong_reason = json.loads(json.dumps(doc))
    ex = wrong_reason["periods"][1]["survivability"]["not_survivable"][0]
    ex["reason"] = ex["reason"].replace("(50 Gbps)", "(30 Gbps)")
    bad = check_roadmap(net, opts, wrong_reason, r.networks)
    assert {v.check for v in bad.violations} == {"excuse_reason"} and "30 Gbps" in bad.violations[0].message

    real_offer = design_mod._offer

    def withhold_c1(routed: Network, o: Any, t: int) -> Any:
        return real_offer(routed, o, min(t, 1))  # C1 (lead 2 quarters) never offered: a wrong excuse in 2027Q3

    monkeypatch.setattr(design_mod, "_offer", withhold_c1)
    r2 = plan(net)
    doc2 = r2.summary()
    q3 = doc2["periods"][2]["survivability"]
    assert [x["scenario"] for x in q3["not_survivable"]] == ["srlg:s1"]  # the design excuses s1 in 2027Q3
    rep = check_roadmap(net, opts, doc2, r2.networks)
    caught = [v for v in rep.violations if v.id == "2027Q3:srlg:s1"]
    assert caught and {v.check for v in caught} == {"excuse_reason"}, str(rep)
    assert all(v.id.startswith("2027Q3:") for v in rep.violations)


def test_a_retried_design_reuses_the_first_try_s_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #32 (roadmap time on a loaded machine): a period design whose MIP finds no solution in time is tried
    again with 4 x the limit on the same network; the first try's sweep of that network is reused, not made again,
    and the retry designs what a first try would."""
    import backbone.solver.design.survivable.iterate as survive
    from backbone.errors import SolverError

    real_mip, real_sweep = survive.solve_mip, survive.sweep_states
    swept: list[str] = []
    failed: list[float] = []

    def sweep(net: Network, kind: str, opts: Any) -> Any:
        swept.append(net.fingerprint())
        return real_sweep(net, kind, opts)

    def mip(*args: Any, **kw: Any) -> Any:
        if not failed:  # the first MIP of the roadmap runs out of time once
            failed.append(1.0)
            raise SolverError("survivable design: time_limit after 1.0 s (Time limit reached)")
        return real_mip(*args, **kw)

    monkeypatch.setattr(survive, "sweep_states", sweep)
    monkeypatch.setattr(survive, "solve_mip", mip)
    s = plan(lead_toy(), design={"time_limit_s": 2}).summary()
    assert failed and len(swept) == len(set(swept))  # no network swept twice
    plain = plan(lead_toy(), design={"time_limit_s": 2}).summary()
    assert [p["design"]["mode"] for p in s["periods"]] == [p["design"]["mode"] for p in plain["periods"]]
    assert [p["survivability"] for p in s["periods"]] == [p["survivability"] for p in plain["periods"]]
    assert s["total_capex_usd"] == pytest.approx(plain["total_capex_usd"])


def test_the_checker_names_the_field_of_a_malformed_roadmap_document() -> None:
    """``check_roadmap`` reads a ``roadmap.json`` document's builds and survivability as typed records: a build
    without its cost is a validation error naming the record and the field, never a KeyError."""
    from backbone.errors import ValidationError
    from backbone.solver.checks.roadmap import check_roadmap
    from backbone.solver.roadmap.options import RoadmapOptions

    build = {"id": "C1", "action": "new route", "site_a": "A", "site_b": "B", "kind": "fibre", "modules": 1,
             "added_gbps": 100.0, "gpus": 0.0, "lead_time_quarters": 2, "committed": "2027Q1", "online": "2027Q3",
             "committed_index": 0, "online_index": 2, "available_from": ""}
    with pytest.raises(ValidationError) as err:
        check_roadmap(lead_toy(), RoadmapOptions.model_validate(QUIET), {"builds": [build], "periods": []}, [],
                      survivability=False)
    assert [(p.file, p.table, p.record, p.field) for p in err.value.problems] == [
        ("roadmap.json", "builds", "C1", "cost_usd")]

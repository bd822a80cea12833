"""Failure sweeps: scenario sets, impact figures against a fresh re-solve, engines agree, derating."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from backbone.errors import ValidationError
from backbone.model import Network
from backbone.solver.failures import (
    FailureOptions,
    ScenarioRecord,
    SweepContext,
    enumerate_scenarios,
    evaluate_scenario,
    run_sweep,
    sweep,
)
from backbone.solver.te import TEOptions, solve_te

VOLATILE = {"seconds"}


def _strip(records: list[ScenarioRecord]) -> list[dict]:
    return [{k: v for k, v in r.to_dict().items() if k not in VOLATILE} for r in records]


def test_scenario_sets(submarine_cut: Network) -> None:
    net = submarine_cut
    assert [s.id for s in enumerate_scenarios(net, "link")] == [f"link:{x}" for x in net.links.index]
    srlg = enumerate_scenarios(net, "srlg")
    # the links in no SRLG (the two terrestrial links) are swept as their own groups
    assert {s.id: set(s.links) for s in srlg} == {"srlg:atlantic": {"tat-1", "tat-2"}, "srlg:tat": {"tat-1"},
                                                  "link:ny-wdc": {"ny-wdc"}, "link:lon-par": {"lon-par"}}
    assert net.links_in_no_srlg() == ["ny-wdc", "lon-par"]
    assert len(enumerate_scenarios(net, "site")) == 4
    pairs = enumerate_scenarios(net, "srlg-pairs")
    assert [s.failed for s in pairs][:2] == [("atlantic", "tat"), ("atlantic", "ny-wdc")] and len(pairs) == 6
    assert pairs[0].id == "srlg:atlantic+srlg:tat"
    both = enumerate_scenarios(net, "srlg,link")  # the union: tat-1 alone is srlg:tat already, so not repeated
    assert [s.id for s in both] == ["srlg:atlantic", "srlg:tat", "link:ny-wdc", "link:lon-par", "link:tat-2"]
    assert [s.kind for s in both] == ["srlg", "srlg", "srlg", "srlg", "link"]
    with pytest.raises(ValidationError) as exc:
        enumerate_scenarios(net, "srlg-pairs", max_scenarios=0)
    assert exc.value.problems[0].field == "max_scenarios"
    derated = enumerate_scenarios(net, "link", derate=0.5)
    assert all(s.derate == 0.5 and s.id.startswith("derate:link:") for s in derated)


def test_the_srlg_sweep_says_which_links_it_swept_as_their_own_group(submarine_cut: Network) -> None:
    s = sweep(submarine_cut, FailureOptions(kind="srlg", engine="serial")).summary()
    assert s["links_swept_as_own_group"] == ["ny-wdc", "lon-par"]
    assert "2 links in no SRLG were swept as their own group (ny-wdc, lon-par)" in s["notes"]
    link = sweep(submarine_cut, FailureOptions(kind="link", engine="serial")).summary()
    assert link["links_swept_as_own_group"] == [] and not any("no SRLG" in n for n in link["notes"])


def test_planner_list_is_validated(submarine_cut: Network) -> None:
    good = enumerate_scenarios(submarine_cut, "list", scenarios=[{"id": "both", "srlgs": ["atlantic"]},
                                                                  {"links": ["ny-wdc"], "derate": 0.3}])
    assert good[0].links == ("tat-1", "tat-2") and good[1].derate == 0.3 and good[1].id == "scenario-2"
    with pytest.raises(ValidationError) as exc:
        enumerate_scenarios(submarine_cut, "list", scenarios=[{"id": "x", "links": ["nope"], "sites": ["NY"],
                                                               "derate": 2}])
    fields = {(p.record, p.field) for p in exc.value.problems}
    assert ("x", "links") in fields and ("x", "derate") in fields


def test_scenario_matches_fresh_resolve(submarine_cut: Network) -> None:
    """Each scenario's figures equal from-scratch TE solves of the failed network: the utilisation the
    traffic needs is min-MLU's; unmet is what max-throughput cannot carry at <= 100 % utilisation."""
    opts = FailureOptions(kind="link", engine="serial")
    ctx = SweepContext.build(submarine_cut, opts)
    overloaded = 0
    for sc in enumerate_scenarios(submarine_cut, "link"):
        rec = evaluate_scenario(ctx, sc)
        imp = rec.impact
        failed = submarine_cut.fail_links(sc.links)
        mlu = solve_te(failed, TEOptions(objective="min-mlu", formulation="path", k_paths=4))
        capped = solve_te(failed, TEOptions(objective="max-throughput", formulation="path", k_paths=4, utilisation_ceiling=1.0))
        unmet = float(capped.demands["unmet_gbps"].sum())
        assert imp.mlu == pytest.approx(mlu.mlu, abs=1e-7)
        assert imp.overloaded == (mlu.mlu > 1 + 1e-6)
        assert imp.unmet_gbps_total == pytest.approx(unmet, abs=1e-6)
        assert rec.carried_gbps == pytest.approx(float(capped.demands["carried_gbps"].sum()), abs=1e-6)
        assert imp.survived == (imp.unmet_gbps + imp.slo_violation_gbps <= 1e-2)
        overloaded += imp.overloaded
    assert overloaded >= 1  # the case that used to hide overload: unmet is counted, not MLU > 100 % alone


def test_impact_figures_and_worst_first(submarine_cut: Network) -> None:
    res = sweep(submarine_cut, FailureOptions(kind="srlg", engine="serial"))
    table = res.table()
    # cutting the whole Atlantic corridor partitions the continents: all 600 Gbps unmet
    assert table.iloc[0]["scenario"] == "srlg:atlantic"
    assert table.iloc[0]["unmet_gbps"] == pytest.approx(600.0)
    # the continents are cut apart: unmet (disconnected), not an SLO violation (no path at all)
    atl = next(r.impact for r in res.scenarios if r.scenario == "srlg:atlantic")
    assert atl.unmet_disconnected_gbps == pytest.approx(600.0) and atl.slo_violations == 0
    assert atl.impact_gbps == pytest.approx(600.0) and not atl.survived
    tat = next(r for r in res.scenarios if r.scenario == "srlg:tat")
    one = tat.impact
    # 800 Gbps of transatlantic demand on the one 400 Gbps cable left: 200 Gbps lost per direction pair
    assert one.unmet_gbps == pytest.approx(200.0)
    assert one.mlu > 1 and one.overloaded  # the traffic needs more than the cable: overload shown
    assert sum(one.unmet_by_class.values()) == pytest.approx(200.0)
    assert tat.p99_latency_inflation_ms > 0
    by_link = res.worst_by_link().set_index("link")
    assert by_link.loc["tat-2", "worst_utilisation"] == pytest.approx(one.mlu)
    assert by_link.loc["tat-2", "worst_scenario"] == "srlg:tat"
    summary = res.summary()
    json.dumps(summary, allow_nan=False)
    for r in summary["scenarios"]:
        assert {"scenario", "failed", "unmet_gbps", "mlu", "slo_violations", "p99_latency_inflation_ms"} <= set(r)


def test_state_utilisation_is_each_records_figure_worst_first(submarine_cut: Network) -> None:
    """failures_state_links.csv's table: one row per state and link, the record's own utilisation, in table order."""
    res = sweep(submarine_cut, FailureOptions(kind="srlg", engine="serial"))
    long = res.state_utilisation()
    assert list(long.columns) == ["scenario", "link", "utilisation"]
    assert len(long) == sum(len(r.link_utilisation) for r in res.scenarios) > 0
    assert list(dict.fromkeys(long["scenario"])) == list(res.table()["scenario"])  # worst first, as the table
    for r in res.scenarios:
        mine = long[long["scenario"] == r.scenario].set_index("link")["utilisation"]
        assert mine.to_dict() == pytest.approx(dict(r.link_utilisation), nan_ok=True)
    tat = long[(long["scenario"] == "srlg:tat") & (long["link"] == "tat-2")]["utilisation"].item()
    assert tat == pytest.approx(next(r.impact.mlu for r in res.scenarios if r.scenario == "srlg:tat"))


def test_derating_degrades_capacity(triangle: Network) -> None:
    res = sweep(triangle, FailureOptions(kind="list", engine="serial",
                                         scenarios=[{"id": "ac-half", "links": ["AC"], "derate": 0.5}]))
    rec = res.scenarios[0]
    # triangle: 15 Gbps A->C; AC at 5 Gbps, A-B-C at 10: min MLU split x/5 = (15-x)/10 -> x = 5, MLU 1.0
    assert rec.impact.mlu == pytest.approx(1.0, abs=1e-6)
    assert rec.links_derated == 1 and rec.links_down == 0 and rec.derate == 0.5
    assert res.baseline.impact.mlu == pytest.approx(0.75, abs=1e-6)


def test_site_failure_counts_lost_demand(submarine_cut: Network) -> None:
    res = sweep(submarine_cut, FailureOptions(kind="site", engine="serial"))
    lon = next(r for r in res.scenarios if r.scenario == "site:LON")
    assert lon.sites_down == 1 and lon.impact.lost_gbps == pytest.approx(300.0)
    assert lon.impact.unmet_gbps == pytest.approx(0.0, abs=1e-6)


@pytest.mark.slow
def test_engines_agree(submarine_cut: Network) -> None:
    """Serial, the local process pool and a local Dask cluster give identical records."""
    scenarios = enumerate_scenarios(submarine_cut, "link")
    base = FailureOptions(kind="link", engine="serial")
    serial = _strip(run_sweep(submarine_cut, scenarios, base))
    local = _strip(run_sweep(submarine_cut, scenarios, base.model_copy(update={"engine": "local", "workers": 2,
                                                                               "batch_size": 1})))
    dask = _strip(run_sweep(submarine_cut, scenarios, base.model_copy(update={"engine": "dask", "workers": 2})))
    assert serial == local == dask
    assert [r["scenario"] for r in serial] == [s.id for s in scenarios]
    assert all(np.isfinite(r["mlu"]) for r in serial)


def test_cli_failures_json(submarine_cut: Network, tmp_path) -> None:
    from backbone.api.cli.main import app
    from backbone.io import save_scenario

    scen = save_scenario(submarine_cut, tmp_path / "scen")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["failures", str(scen), "--kind", "srlg", "--engine", "serial", "--json",
                                 "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["kind"] == "failures" and doc == json.loads((out / "failures.json").read_text())  # one object
    data = doc["scenarios"]
    assert isinstance(data, list) and len(data) == 4  # 2 SRLGs and the 2 links in none, each its own group
    assert {"scenario", "failed", "unmet_gbps", "mlu", "slo_violations", "p99_latency_inflation_ms"} <= set(data[0])
    assert [x["scenario"] for x in data] == [x["scenario"] for x in doc["worst"]]  # worst impact first, as the table
    assert (out / "failures.json").exists() and (out / "failures_scenarios.csv").exists()
    states = (out / "failures_state_links.csv").read_text().splitlines()
    assert states[0] == "scenario,link,utilisation" and states[1].startswith(f"{data[0]['scenario']},")
    bad = CliRunner().invoke(app, ["failures", str(scen), "--kind", "srlg", "--derate", "1.5"])
    assert bad.exit_code == 2 and "derate" in bad.output


def test_cli_failures_verify_violation_exits_5(submarine_cut: Network, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import backbone.solver.checks.te as checks
    from backbone.api.cli.main import app
    from backbone.io import save_scenario
    from backbone.solver.checks import Violation

    real = checks.check_te

    def failing(*a, **k):  # type: ignore[no-untyped-def]
        report = real(*a, **k)
        report.add(Violation("capacity", "links", "x", "made to fail"))
        return report

    scen = save_scenario(submarine_cut, tmp_path / "scen")
    args = ["failures", str(scen), "--kind", "srlg", "--engine", "serial", "--verify"]
    ok = CliRunner().invoke(app, args)
    assert ok.exit_code == 0, ok.output
    monkeypatch.setattr(checks, "check_te", failing)
    bad = CliRunner().invoke(app, args)
    assert bad.exit_code == 5, bad.output
    assert "independent check failed" in bad.stderr

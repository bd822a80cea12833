"""The roadmap carries training jobs honestly (issue #29 item 4): a dataset replica built in one period stays a home of
its dataset (paid once, never pulled over the backbone again), and a job that cannot be placed in its quarter is named
with the placement's reason in roadmap.json, the CSVs, the CLI table and the report.

Two hand-built toys on the three-site ``gpu_toy`` (metro P, data centres DC1 and DC2, 1,000 Gbps links):

- *replica*: a 4 PB corpus homed at P (no GPUs there); a 2,048-GPU job from 2027Q2 on reads it at 1,000 Gbps per
  1,000 GPUs, i.e. 2,048 Gbps, more than the 1,000 Gbps link into either data centre: it can only run beside a
  replica of its own (4 PB x 1 M USD/PB = 4 M USD of storage);
- *no power*: a 1,024-GPU job allowed only in EMEA, whose one site DC3 has 0 MW until a power step in 2027Q3.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from backbone.model import Network
from backbone.validate import build_network
from tests.solver.test_roadmap import QUIET, gpu_toy


def _tables() -> dict[str, pd.DataFrame]:
    return {k: v.reset_index() for k, v in gpu_toy().tables().items() if len(v)}


def replica_toy() -> Network:
    tables = _tables()
    tables["sites"] = tables["sites"].assign(storage_pb=[0.0, 10.0, 10.0], storage_cost_usd_per_pb=[0.0, 1e6, 1e6])
    tables["datasets"] = pd.DataFrame([{"id": "corpus", "size_pb": 4.0, "home_sites": "P",
                                        "read_gbps_per_1000_gpus": 1000.0, "growth_pb_per_year": 2.0}])
    tables["training_jobs"] = pd.DataFrame([{"id": "job", "gpus": 2048, "start": "2027Q2", "end": "",
                                             "parameters": 8e9, "step_time_s": 1.0, "checkpoint_replicas": "none",
                                             "datasets": "corpus"}])
    return build_network(tables, name="gpu-toy-replica")


def no_power_toy() -> Network:
    tables = _tables()
    s = tables["sites"]
    dc3 = s[s["id"] == "DC2"].assign(id="DC3", region="EMEA", power_available_mw=0.0, power_max_mw=0.0)
    tables["sites"] = pd.concat([s, dc3], ignore_index=True)
    tables["links"] = pd.concat([tables["links"], pd.DataFrame([{"id": "DC2-DC3", "site_a": "DC2", "site_b": "DC3",
                                                                 "capacity_gbps": 1000}])], ignore_index=True)
    tables["training_jobs"] = pd.DataFrame([{"id": "eu-job", "gpus": 1024, "start": "2027Q2", "end": "2027Q3",
                                             "parameters": 8e9, "step_time_s": 1.0, "checkpoint_replicas": "none",
                                             "regions": "EMEA"}])
    return build_network(tables, name="gpu-toy-no-power")


def roadmap(net: Network, **options: Any) -> Any:
    from backbone.solver.roadmap.rolling import plan_roadmap

    return plan_roadmap(net, {**QUIET, "start": "2027Q1", "gpu_lead_quarters": 0, "place": {"scenario_jobs": True},
                              **options})


@pytest.fixture(scope="module")
def replica_roadmap() -> Any:
    return roadmap(replica_toy())


def test_a_replica_built_in_one_period_stays_and_is_paid_once(replica_roadmap: Any) -> None:
    r = replica_roadmap
    s = r.summary()
    q1, q2, q3 = s["periods"]
    assert q1["jobs_placed"] == [] and q1["replicas_built"] == []  # the job starts in 2027Q2
    (placed,) = q2["jobs_placed"]
    site = placed["sites"]
    assert site in ("DC1", "DC2") and placed["gpus"] == pytest.approx(2048)
    # 2027Q2 builds the replica beside the job (2,048 Gbps of reads do not fit a 1,000 Gbps link) and pays for it
    assert q2["replicas_built"] == [{"dataset": "corpus", "site": site, "cost_usd": pytest.approx(4e6)}]
    assert q2["storage_capex_usd"] == pytest.approx(4e6)
    # 2027Q3: the job runs on, where the corpus now lives; nothing more to buy, nothing read over the backbone
    assert q3["jobs_placed"] == [placed] and q3["jobs_unplaced"] == []
    assert q3["replicas_built"] == [] and q3["storage_capex_usd"] == 0.0 and q3["capex_usd"] == 0.0
    for t in (1, 2):
        net = r.networks[t]
        assert net.datasets.at["corpus", "home_sites"] == ("P", site)
        work = net.demands[net.demands.index.str.startswith("work:")]
        assert "dataset" not in set(work["traffic_class"])  # no dataset read flow
        # only the corpus's growth, 2 PB a year to its new home: 2e15 x 8 / (365.25 x 86,400) / 1e9 Gbps
        assert work[["src", "dst"]].to_dict("records") == [{"src": "P", "dst": site}]
        assert work["demand_gbps"].iloc[0] == pytest.approx(2e15 * 8 / (365.25 * 86_400) / 1e9, rel=1e-6)
    rows = r.builds[r.builds["action"] == "replica"]
    assert rows[["id", "committed", "online"]].to_dict("records") == [
        {"id": f"replica:corpus:{site}", "committed": "2027Q2", "online": "2027Q2"}]
    assert s["storage_capex_usd"] == pytest.approx(4e6)
    assert s["total_capex_usd"] == pytest.approx(s["network_capex_usd"] + s["gpu_capex_usd"] + 4e6)
    assert s["gpu_capex_usd"] == pytest.approx(r.builds.loc[r.builds["action"] == "gpus", "cost_usd"].sum())


def test_the_checker_holds_replicas_to_their_homes_and_costs(replica_roadmap: Any) -> None:
    from dataclasses import replace

    from backbone.solver.checks.roadmap import check_roadmap

    r = replica_roadmap
    s = r.summary()
    ok = check_roadmap(replica_toy(), r.options, s, r.networks, survivability=False)
    assert "replicas_persist" in ok.checked
    assert [v for v in ok.violations if v.check in ("replicas_persist", "build_cost", "lead_time")] == []
    # a last period that lost the replica, and a replica that claims to be cheaper, are caught
    last = r.networks[-1]
    lost = [*r.networks[:-1], replace(last, datasets=last.datasets.assign(home_sites=[("P",)]))]
    bad = check_roadmap(replica_toy(), r.options, s, lost, survivability=False)
    assert [v.id for v in bad.violations if v.check == "replicas_persist"] == ["2027Q3:corpus"]
    cheap = {**s, "builds": [{**b, "cost_usd": 1.0} if b["action"] == "replica" else b for b in s["builds"]]}
    bad = check_roadmap(replica_toy(), r.options, cheap, r.networks, survivability=False)
    assert [v.check for v in bad.violations if v.check == "build_cost"] == ["build_cost"]


def test_a_job_without_power_in_its_quarter_is_named_unplaced(tmp_path: Path) -> None:
    from backbone.solver.roadmap.output import write_roadmap

    net = no_power_toy()
    r = roadmap(net, power_steps=[{"site": "DC3", "from_period": "2027Q3", "power_max_mw": 10}])
    s = r.summary()
    q1, q2, q3 = s["periods"]
    assert q1["jobs_placed"] == q1["jobs_unplaced"] == []  # not running yet
    (unplaced,) = q2["jobs_unplaced"]
    assert (unplaced["job"], unplaced["gpus"]) == ("eu-job", 1024.0) and q2["jobs_placed"] == []
    # the placement's diagnosis: its only allowed site has no power in 2027Q2
    assert "site DC3 is at its power cap (0.0 MW)" in unplaced["reason"]
    assert q3["jobs_placed"] == [{"job": "eu-job", "sites": "DC3", "gpus": 1024.0}]  # the power step arrived
    assert s["jobs_unplaced"] == [{"period": "2027Q2", **unplaced}] and s["status"] == "partial"
    # the CSVs, the report and the CLI table say it too
    write_roadmap(net, r, r.typed_summary(), tmp_path, lambda f, m: None)
    jobs = pd.read_csv(tmp_path / "roadmap_jobs.csv", keep_default_na=False)
    assert jobs[["period", "job", "status", "sites"]].to_dict("records") == [
        {"period": "2027Q2", "job": "eu-job", "status": "unplaced", "sites": ""},
        {"period": "2027Q3", "job": "eu-job", "status": "placed", "sites": "DC3"}]
    assert "power cap" in jobs.at[0, "reason"]
    periods = pd.read_csv(tmp_path / "roadmap_periods.csv")
    assert periods[["jobs_placed", "jobs_unplaced"]].to_numpy().tolist() == [[0, 0], [0, 1], [1, 0]]
    html = (tmp_path / "report.html").read_text()
    section = html[html.index("<h2>Training jobs by period</h2>"):]
    section = section[:section.index("</section>")]
    assert "1 of 2 (period, job) placements left unplaced" in section and "site DC3 is at its power cap" in section
    assert "1 training job placement left unplaced (2027Q2)" in html  # in the headline, not a footnote
    assert _cli_cells(s)["2027Q2"]["jobs unplaced"] == "1"
    assert _cli_cells(s)["2027Q3"]["jobs placed"] == "1"


def _cli_cells(s: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The CLI roadmap table's cells by period and column."""
    from rich.console import Console

    import backbone.api.cli.roadmap_cmds as cmds

    buf, old = io.StringIO(), cmds.out_console
    cmds.out_console = Console(file=buf, width=300)
    try:
        cmds._print(s)
    finally:
        cmds.out_console = old
    lines = buf.getvalue().splitlines()
    header = [c.strip() for c in next(x for x in lines if x.startswith("┃ period")).split("┃")]
    rows = [[c.strip() for c in x.split("│")] for x in lines if x.startswith("│ 20")]
    return {row[1]: dict(zip(header, row, strict=True)) for row in rows}


def test_replica_storage_counts_against_the_budget_of_its_period() -> None:
    # 65 M USD a period: 2027Q2's 2,048 GPUs at DC2 (61.44 M USD) fit, their replica's 4 M USD of storage does not
    s = roadmap(replica_toy(), budget_usd_per_period=65e6, carry_over=0.0).summary()
    q2 = s["periods"][1]
    assert (q2["gpu_capex_usd"], q2["storage_capex_usd"]) == (pytest.approx(61.44e6), pytest.approx(4e6))
    assert q2["budget_shortfall_usd"] == pytest.approx(0.44e6)
    assert "the new dataset replicas' storage needs 4.0 M USD, the budget of 2027Q2 has 3.6 M USD left" in \
        q2["budget_note"]
    assert s["status"] == "budget_limited" and [x["period"] for x in s["budget_shortfalls"]] == ["2027Q2"]
    # the storage committed past 2027Q2's budget does not stop the design of 2027Q2 or 2027Q3 (it needs nothing):
    # it used to report "the survivable design costs 0.0 M USD ... does not fit: nothing built"
    assert [p["design"]["mode"] for p in s["periods"][1:]] == ["survivable", "survivable"]
    assert all("does not fit" not in p["budget_note"] for p in s["periods"])


def test_an_earlier_overshoot_does_not_block_builds_that_fit_their_own_budget() -> None:
    from backbone.solver.roadmap.budget import adds_no_overshoot, fits_budget, overshoot_usd

    budgets, committed = [10.0, 10.0, 10.0], [14.0, 0.0, 0.0]  # period 0 committed 4 past its budget
    assert overshoot_usd(budgets, committed, 0.0) == [4.0, 0.0, 0.0]
    assert not fits_budget(budgets, [14.0, 8.0, 0.0], 0.0)  # the whole ledger is over because of period 0
    assert adds_no_overshoot(budgets, committed, [14.0, 8.0, 0.0], 0.0)  # but 8 fits period 1's own 10
    assert not adds_no_overshoot(budgets, committed, [14.0, 12.0, 0.0], 0.0)  # 12 does not
    assert not adds_no_overshoot(budgets, committed, [16.0, 0.0, 0.0], 0.0)  # nor more in period 0 (2 USD, past the 1 USD slack)
    # with carry-over, spending in period 1 must leave period 2 within what it then has
    assert adds_no_overshoot([10.0, 10.0, 0.0], [0.0, 0.0, 5.0], [0.0, 5.0, 5.0], 1.0)
    assert not adds_no_overshoot([10.0, 10.0, 0.0], [0.0, 0.0, 5.0], [0.0, 18.0, 5.0], 1.0)  # leaves period 2 only 2 of its 5


def test_the_roadmap_and_the_validation_read_quarters_the_same_way() -> None:
    from backbone.quarters import quarter_number
    from backbone.solver.roadmap.options import RoadmapOptions, parse_start, period_label

    assert parse_start("2027Q3", "quarter") == quarter_number("2027Q3")
    assert parse_start("2028", "year") == quarter_number("2028Q1")
    assert period_label(quarter_number("2027Q3"), "quarter") == "2027Q3"
    assert RoadmapOptions(start="2027Q4", periods=2).labels() == ["2027Q4", "2028Q1"]
    with pytest.raises(ValueError, match="a yearly roadmap starts in a first quarter"):
        parse_start("2027Q2", "year")


def test_the_reason_of_an_unplaced_job_is_the_diagnosis_about_it() -> None:
    from backbone.solver.roadmap.jobs import NO_REASON, unplaced_reason

    reasons = ["metro M: 10 inference GPUs cannot be served within 20 ms RTT from any allowed site",
               "N+1: losing site DC3 leaves 5 GPUs of demand without a surviving site within SLO (M)",
               "site DC1 is at its power cap (10.0 MW): about 2.0 MW more would be needed",
               "site DC3 is at its power cap (0.0 MW): about 1.4 MW more would be needed",
               "link P-DC1 (P -> DC1, 1,000 Gbps) is a bottleneck: about 50 Gbps more would be needed",
               "training job other: no allowed site can host 4,096 GPUs (regions, pinned sites and its datasets' "
               "residency)"]
    assert unplaced_reason("eu-job", ["DC3"], reasons) == reasons[3]  # its site's limit, not N+1's nor DC1's
    assert unplaced_reason("other", ["DC3"], reasons) == reasons[5]  # the reason naming the job comes first
    assert unplaced_reason("eu-job", ["DC2"], reasons) == reasons[4]  # no limit at its sites: the backbone's
    assert unplaced_reason("eu-job", ["DC2"], [], "the budget of 2027Q2 allows 0.0 M USD") == \
        "the budget of 2027Q2 allows 0.0 M USD"
    assert unplaced_reason("eu-job", ["DC2"], []) == NO_REASON

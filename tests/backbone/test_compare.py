"""``backbone diff`` / ``backbone.diff``: structural changes of hand-built networks, and KPI, placement, per-failure
and changeover changes between two real plans of the small world (the shared session plans), checked against
the plans' own files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import backbone
from backbone.compare import ComparedInput, changeover, diff, load_input, network_changes
from backbone.compare.structure import capacity_summary
from backbone.errors import ValidationError
from backbone.io import save_scenario
from backbone.model import Network
from tests.conftest import SharedRun


def _changed(net: Network) -> Network:
    """``net`` with one link upgraded, one link removed, one site's GPUs raised and one demand added."""
    first, second = net.links.index[0], net.links.index[1]
    out = net.with_capacity({first: float(net.links.at[first, "capacity_gbps"]) + 1600.0})
    sites = pd.DataFrame(out.sites)
    sites.loc[sites.index[0], "gpus_installed"] = sites["gpus_installed"].iloc[0] + 2048
    demands = pd.DataFrame(out.demands)
    extra = demands.iloc[[0]].rename(index={demands.index[0]: "new-demand"})
    return out.copy_with(links=pd.DataFrame(out.links).drop(index=second), sites=sites,
                         demands=pd.concat([demands, extra]))


def test_identical_networks_give_an_empty_diff(small_world: Network) -> None:
    result = diff(small_world, small_world)
    assert not result.changed
    assert all(n == 0 for n in result.counts().values())
    assert result.to_dict()["changed"] is False


def test_structural_changes_are_one_row_each_with_units(small_world: Network) -> None:
    after = _changed(small_world)
    rows = network_changes(small_world, after)
    first, second = small_world.links.index[0], small_world.links.index[1]
    cap = rows[(rows["table"] == "links") & (rows["id"] == first) & (rows["field"] == "capacity_gbps")]
    assert len(cap) == 1 and cap["unit"].iat[0] == "Gbps"
    assert cap["delta"].iat[0] == pytest.approx(1600.0)
    assert cap["after"].iat[0] == pytest.approx(float(small_world.links.at[first, "capacity_gbps"]) + 1600.0)
    removed = rows[(rows["table"] == "links") & (rows["change"] == "removed")]
    assert list(removed["id"]) == [second]
    assert removed["delta"].iat[0] == pytest.approx(-float(small_world.links.at[second, "capacity_gbps"]))
    gpus = rows[(rows["table"] == "sites") & (rows["field"] == "gpus_installed")]
    assert gpus["delta"].tolist() == [2048] and gpus["unit"].iat[0] == "GPU"
    added = rows[(rows["table"] == "demands") & (rows["change"] == "added")]
    assert added["id"].tolist() == ["new-demand"] and added["unit"].iat[0] == "Gbps"
    # ranked: added/removed records first, then the largest relative change
    assert rows["relative_change"].is_monotonic_decreasing


def test_capacity_summaries_add_up_to_the_link_changes(small_world: Network) -> None:
    after = _changed(small_world)
    total = float(after.links["capacity_gbps"].sum() - small_world.links["capacity_gbps"].sum())
    for by in ("cable_system", "region"):
        table = capacity_summary(small_world, after, by)
        assert table["delta_gbps"].sum() == pytest.approx(total)
        assert (table["capacity_after_gbps"] - table["capacity_before_gbps"]).to_numpy() == pytest.approx(
            table["delta_gbps"].to_numpy())


@pytest.mark.slow
def test_a_scenario_folder_round_trip_is_no_change(small_world: Network, tmp_path: Path) -> None:
    save_scenario(small_world, tmp_path / "a")
    save_scenario(_changed(small_world), tmp_path / "b")
    assert not diff(tmp_path / "a", tmp_path / "a").changed
    assert not diff(small_world, tmp_path / "a").changed
    assert diff(tmp_path / "a", tmp_path / "b").changed


@pytest.mark.parametrize("bad", ["missing-folder", "empty-folder", "not-a-scenario.txt"])
def test_bad_input_is_a_validation_error(tmp_path: Path, bad: str) -> None:
    if bad == "empty-folder":
        (tmp_path / bad).mkdir()
    elif bad.endswith(".txt"):
        (tmp_path / bad).write_text("hello\n")
    with pytest.raises(ValidationError):
        load_input(tmp_path / bad)


@pytest.mark.slow
def test_plan_kpis_come_from_the_plans_files(small_world_default_plan: SharedRun,
                                            small_world_grown_plan: SharedRun) -> None:
    a, b = small_world_default_plan, small_world_grown_plan
    result = diff(a.out, b.out)
    assert result.before.kind == result.after.kind == "plan"
    k = result.kpis.set_index("kpi")
    pa, pb = (json.loads((r.out / "plan.json").read_text()) for r in (a, b))
    assert k.at["utilisation_max_intact", "before"] == pytest.approx(pa["mlu_after"])
    assert k.at["utilisation_max_intact", "after"] == pytest.approx(pb["mlu_after"])
    util = pd.Series(pb["map_after"]["link_values"]["utilisation"], dtype=float)
    assert k.at["utilisation_p95_intact", "after"] == pytest.approx(util.quantile(0.95))
    worst = max(r["mlu_after"] for r in pb["before_after"])
    assert k.at["utilisation_max_worst_failure", "after"] == pytest.approx(worst)
    assert k.at["states_survived", "before"] == pa["survivability"]["survived"]
    assert k.at["states_survived", "after"] == pb["survivability"]["survived"]
    assert k.at["states_survived", "delta"] == pb["survivability"]["survived"] - pa["survivability"]["survived"]
    assert k.at["placement_cost_usd", "delta"] == pytest.approx(pb["placement_cost_usd"] - pa["placement_cost_usd"])
    assert k.at["placement_cost_usd", "sign"] == ("+" if pb["placement_cost_usd"] > pa["placement_cost_usd"] else "-")
    te = json.loads((b.out / "te.json").read_text())
    for cls, value in te["impact"]["unmet_by_class"].items():
        assert k.at[f"unmet_intact_gbps[{cls}]", "after"] == pytest.approx(value)
    assert k.at["states_survived", "verdict"] in ("better", "worse", "")


def test_placement_and_failure_changes_match_the_plans(small_world_default_plan: SharedRun,
                                                       small_world_grown_plan: SharedRun) -> None:
    a, b = small_world_default_plan, small_world_grown_plan
    result = diff(a.out, b.out)
    sa, sb = (pd.DataFrame(json.loads((r.out / "place.json").read_text())["sites"]).set_index("id") for r in (a, b))
    sites = result.placement[result.placement["level"] == "site"].set_index("id")
    assert len(sites)
    for site, row in sites.iterrows():
        assert row["gpus_before"] == pytest.approx(sa["gpus_after"].get(site, 0.0))
        assert row["gpus_after"] == pytest.approx(sb["gpus_after"].get(site, 0.0))
    regions = result.placement[result.placement["level"] == "region"].set_index("id")
    assert regions["gpus_delta"].sum() == pytest.approx(sites["gpus_delta"].sum())
    ba = {r["scenario"]: r for r in a.summary["before_after"]}
    bb = {r["scenario"]: r for r in b.summary["before_after"]}
    for row in result.failures.to_dict("records"):
        assert row["impact_before_gbps"] == pytest.approx(ba[row["scenario"]]["impact_gbps_after"])
        assert row["impact_after_gbps"] == pytest.approx(bb[row["scenario"]]["impact_gbps_after"])
        if row["change"] == "newly broken":
            assert ba[row["scenario"]]["survived_after"] and not bb[row["scenario"]]["survived_after"]
    broken = {s for s in ba if ba[s]["survived_after"] and not bb[s]["survived_after"]}
    assert broken == set(result.failures.loc[result.failures["change"] == "newly broken", "scenario"])
    assert not diff(a.out, a.out).changed


def _plan_side(upgrades: list[dict[str, object]], net: Network) -> ComparedInput:
    return ComparedInput("x", "plan", net, {"design": {"upgrades": upgrades}})


def test_changeover_is_in_commit_order(small_world: Network) -> None:
    before = _plan_side([{"link": "a", "action": "upgrade", "kind": "terrestrial", "modules": 2, "added_gbps": 800,
                          "cost_usd": 2e6, "lead_time_quarters": None, "protects": ["srlg:x"]},
                         {"link": "gone", "action": "new route", "kind": "spectrum", "modules": 1, "added_gbps": 1600,
                          "cost_usd": 5e6, "lead_time_quarters": 2, "protects": []}], small_world)
    after = _plan_side([{"link": "a", "action": "upgrade", "kind": "terrestrial", "modules": 3, "added_gbps": 1200,
                         "cost_usd": 3e6, "lead_time_quarters": None, "protects": ["srlg:x"]},
                        {"link": "cheap-slow", "action": "new route", "kind": "terrestrial", "modules": 1,
                         "added_gbps": 400, "cost_usd": 1e6, "lead_time_quarters": 6, "protects": ["srlg:y"]},
                        {"link": "dear-slow", "action": "new route", "kind": "terrestrial", "modules": 1,
                         "added_gbps": 400, "cost_usd": 9e6, "lead_time_quarters": 6, "protects": []}], small_world)
    table = changeover(before, after)
    assert table["link"].tolist() == ["dear-slow", "cheap-slow", "gone", "a"]
    assert table["change"].tolist() == ["new", "new", "dropped", "more modules"]
    assert table["order"].tolist() == [1, 2, 3, 4]
    row = table.set_index("link").loc["a"]
    assert (row["modules_before"], row["modules_after"], row["cost_delta_usd"]) == (2, 3, 1e6)
    assert table.set_index("link").at["cheap-slow", "protects"] == "srlg:y"
    # the upgrade's lead time (none in this older design.json) is the scenario's upgrade_lead_quarters
    assert row["lead_time_quarters"] == small_world.parameters["upgrade_lead_quarters"] == 1
    assert row["lead_time_from"] == "scenario upgrade_lead_quarters"
    assert table["commit"].tolist() == ["Q-6", "Q-6", "Q-2", "Q-1"]
    assert table.set_index("link").at["gone", "lead_time_from"] == "candidate route"


def test_changeover_commits_earliest_first_then_dearest(small_world: Network) -> None:
    """A link upgrade with a long scenario upgrade lead time commits before a route with a shorter one."""
    slow = small_world.with_parameters(upgrade_lead_quarters=8)
    after = _plan_side([{"link": "up", "action": "upgrade", "kind": "terrestrial", "modules": 1, "added_gbps": 400,
                         "cost_usd": 1e5, "lead_time_quarters": None, "protects": []},
                        {"link": "route", "action": "new route", "kind": "terrestrial", "modules": 1,
                         "added_gbps": 400, "cost_usd": 9e6, "lead_time_quarters": 3, "protects": []}], slow)
    table = changeover(_plan_side([], slow), after)
    assert table["link"].tolist() == ["up", "route"]
    assert table["lead_time_quarters"].tolist() == [8, 3] and table["commit"].tolist() == ["Q-8", "Q-3"]


def test_facade_diff(small_world: Network) -> None:
    assert backbone.diff(small_world, small_world).changed is False


def _cli(args: list[str]) -> object:
    from backbone.api.cli.main import build_app

    return CliRunner().invoke(build_app("diff"), ["diff", *args], env={"COLUMNS": "200"})


@pytest.mark.slow
def test_cli_exit_codes_json_and_files(small_world: Network, tmp_path: Path) -> None:
    save_scenario(small_world, tmp_path / "a")
    save_scenario(_changed(small_world), tmp_path / "b")
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    same = _cli([a, a, "--fail-on-change"])
    assert same.exit_code == 0, same.output
    changed = _cli([a, b, "--fail-on-change", "--json", "--out", str(tmp_path / "d"), "--map",
                    str(tmp_path / "d.svg")])
    assert changed.exit_code == 1
    doc = json.loads(changed.stdout)
    assert doc["changed"] is True and doc["counts"]["structure"] == len(doc["structure"]) > 0
    table = pd.read_csv(tmp_path / "d" / "diff_structure.csv")
    assert len(table) == doc["counts"]["structure"]
    assert (tmp_path / "d.svg").read_bytes().startswith(b"<?xml")
    shown = _cli([a, b])
    assert shown.exit_code == 0 and "capacity_gbps" in shown.stdout
    missing = _cli([str(tmp_path / "nope"), a])
    assert missing.exit_code == 2
    assert "no such file or folder" in missing.output and "Traceback" not in missing.output


def test_json_has_no_nan(small_world_default_plan: SharedRun, small_world_grown_plan: SharedRun) -> None:
    from backbone.artifacts import json_text

    text = json_text(diff(small_world_default_plan.out, small_world_grown_plan.out).to_dict())
    assert "NaN" not in text
    doc = json.loads(text)
    assert np.isfinite([r["delta"] for r in doc["kpis"] if r["delta"] is not None]).all()


@pytest.mark.slow
def test_diff_map_styles_added_upgraded_and_removed_links(small_world: Network, tmp_path: Path) -> None:
    from backbone.compare.diffmap import diff_map_values, save_diff_map
    from tests.backbone.test_maps_html import external_references

    after = _changed(small_world)
    extra = pd.DataFrame(after.links).iloc[[0]].rename(index={after.links.index[0]: "new-link"})
    after = after.copy_with(links=pd.concat([pd.DataFrame(after.links), extra]))
    result = diff(small_world, after)
    net, doc = diff_map_values(result)
    first, second = small_world.links.index[0], small_world.links.index[1]
    assert second in net.links.index  # the removed link is drawn (dashed) from before
    assert doc["failed_links"] == [second] and doc["built_candidates"] == ["new-link"]
    delta = doc["link_values"]["delta_capacity_gbps"]
    assert delta[first] == pytest.approx(1600.0)
    assert delta[second] == pytest.approx(-float(small_world.links.at[second, "capacity_gbps"]))
    assert delta["new-link"] == pytest.approx(float(after.links.at["new-link", "capacity_gbps"]))
    site = small_world.sites.index[0]
    assert doc["site_values"]["gpus_delta"][site] == 2048
    save_diff_map(result, tmp_path / "diff.html")
    page = (tmp_path / "diff.html").read_text()
    assert "new-link" in page and not external_references(page)  # the offline HTML map
    save_diff_map(result, tmp_path / "diff.png")
    assert (tmp_path / "diff.png").read_bytes()[:4] == b"\x89PNG"


def test_the_facade_names_diff_and_deck() -> None:
    assert {"diff", "deck"} <= set(dir(backbone)) and callable(backbone.deck) and callable(backbone.diff)


def test_roadmap_changeover_sums_builds_per_link(small_world: Network) -> None:
    def side(builds: list[dict[str, object]]) -> ComparedInput:
        return ComparedInput("r", "roadmap", small_world, {"roadmap": {"builds": builds}})

    def build(link: str, period: str, modules: int, cost: float, action: str = "upgrade") -> dict[str, object]:
        return {"id": link, "action": action, "kind": "terrestrial", "modules": modules, "added_gbps": 400.0 * modules,
                "cost_usd": cost, "lead_time_quarters": 1, "committed": period}

    before = side([build("x", "2027Q1", 1, 1e6), build("gpus:ashburn:2027Q1", "2027Q1", 0, 5e8, "gpus")])
    after = side([build("x", "2027Q1", 1, 1e6), build("x", "2027Q3", 2, 2e6), build("y", "2027Q2", 1, 4e6)])
    table = changeover(before, after).set_index("link")
    assert list(table.index) == ["x", "y"]  # x is first committed in 2027Q1, y in 2027Q2; the GPU block is no purchase
    assert table["commit"].tolist() == ["2027Q1", "2027Q2"]
    assert (table.at["x", "modules_before"], table.at["x", "modules_after"]) == (1, 3)
    assert table.at["x", "cost_delta_usd"] == pytest.approx(2e6) and table.at["x", "protects"] == "first commit 2027Q1"
    assert table.at["y", "change"] == "new"


def test_numbers_read_the_same_everywhere() -> None:
    from backbone.compare.text import change_text, value_text

    assert (value_text(0.125, "ratio"), value_text(13_120_000, "USD"), value_text(np.int64(4096), "GPU")) == \
        ("12.5 %", "13.12 M USD", "4,096 GPU")
    assert (change_text(-1.0, "states"), change_text(0.032, "ratio"), change_text(0.0, "USD")) == \
        ("-1 states", "+3.2 %", "0.00 M USD")
    assert value_text(float("nan"), "Gbps") == change_text(None) == "–"


def _kpi_side(small_world: Network, **plan: object) -> ComparedInput:
    return ComparedInput("p", "plan", small_world, {"plan": {"upgrade_cost_usd": 1e6, "links_upgraded": 4,
                                                             "survivability": {"states": 10, "survived": 5},
                                                             "unmet_gbps": 0.0, **plan}})


def test_changed_kpis_are_ranked_by_size_of_change(small_world: Network, tmp_path: Path) -> None:
    """Largest relative change first (``|Δ| / max(|before|, |after|)``), whatever the KPI's place in the list; the
    JSON and CSV keep every KPI, changed or not."""
    from backbone.api.cli.common import out_console
    from backbone.api.cli.compare_cmds import print_diff

    before = _kpi_side(small_world)
    after = _kpi_side(small_world, upgrade_cost_usd=1.1e6, survivability={"states": 10, "survived": 8},
                      unmet_gbps=3.0)
    result = diff(before, after)
    changed = result.kpi_changed()
    assert changed["kpi"].tolist()[:3] == ["unmet_intact_gbps", "states_survived", "upgrade_cost_usd"]
    assert changed["relative_change"].tolist()[:3] == pytest.approx([1.0, 3 / 8, 0.1 / 1.1])
    assert changed["relative_change"].is_monotonic_decreasing
    doc = result.to_dict()
    assert [r["kpi"] for r in doc["kpis"]] == result.kpis["kpi"].tolist()  # every KPI, in its fixed order
    assert {"links_upgraded", "unmet_intact_gbps"} <= {r["kpi"] for r in doc["kpis"]}
    result.save(tmp_path)
    assert len(pd.read_csv(tmp_path / "diff_kpis.csv")) == len(result.kpis)
    with out_console.capture() as captured:
        print_diff(result, 20)
    text = captured.get()
    assert text.index("unmet_intact_gbps") < text.index("states_survived") < text.index("upgrade_cost_usd")
    assert "ranked by size of change" in text


def test_diff_map_draws_gpu_losses_in_their_own_style(small_world: Network, tmp_path: Path) -> None:
    """A site that lost GPUs gets a dashed blue ring (its own legend entry, with units), one that gained GPUs the
    orange ring; in the PNG/SVG and in the offline HTML map."""
    from backbone.compare.diffmap import diff_map_values, render_diff_map

    sites = pd.DataFrame(small_world.sites)
    gain, loss = "tokyo", "london"
    sites.loc[gain, "gpus_installed"] += 2048
    sites.loc[loss, "gpus_installed"] -= 1024
    result = diff(small_world, small_world.copy_with(sites=sites))
    _net, doc = diff_map_values(result)
    values = doc["site_values"]
    assert values["gpus_removed"][loss] == 1024 and values["gpus_added"][loss] == 0
    assert values["gpus_added"][gain] == 2048 and values["gpus_removed"][gain] == 0
    assert values["gpus_delta"][loss] == -1024
    svg = render_diff_map(result, "svg").decode()
    assert "GPUs removed (ring; largest −1,024 GPUs)" in svg
    assert "GPUs added (ring; largest +2,048 GPUs)" in svg
    assert "1 gained GPUs, 1 lost GPUs" in svg
    page = render_diff_map(result, "html").decode()
    assert '"gpus_removed":1024' in page.replace(".0", "") and '"removed":"#1d4e89"' in page
    assert "GPUs removed (dashed ring; largest" in page

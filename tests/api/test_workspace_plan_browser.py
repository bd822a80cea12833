"""A plan started from the workspace's Run form in headless Chromium: kind ``plan`` with its defaults, its progress
watched in the page until it succeeds, and its results' headline figures (survived, excused and violated states,
upgrade cost, the design's lower bound and gap, MLU and unmet traffic before and after, what to buy, the excused
states with their reasons, each state before and after) equal to the API's ``GET v1/jobs/{id}/result``.
``BACKBONE_SCREENSHOTS=1`` saves docs/img/workspace-plan.png."""

from __future__ import annotations

import csv
import io
import sys
import time
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import httpx
import pytest
from apitest_helpers import auth

from backbone.io import network_to_dict
from tests.api import test_workspace_browser as workspace
from tests.nets import small_world_network

# the live server, the browser and the offline tab of the workspace's browser tests (one live server per module)
live = workspace.live
browser = workspace.browser
page = workspace.page
screenshot = workspace.screenshot
sign_in = workspace.sign_in

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="live server test (Linux CI)")]

TERMINAL = ("succeeded", "failed", "cancelled")


def number(value: float | None) -> str:
    """A number as the page's ``formatValue`` writes it (en-US grouping, at most 2 decimals, ties away from zero),
    ``unknown`` for None (a figure the plan did not measure)."""
    if value is None:
        return "unknown"
    text = f"{Decimal(value).quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def percent(value: float | None) -> str:
    return "unknown" if value is None else f"{number(value * 100)} %"


@pytest.fixture(scope="module")
def small_world(live: dict[str, Any]) -> str:
    """:func:`tests.nets.small_world_network` (8 sites, 6 cables, 7 SRLGs) as a scenario of the live server: a
    plan of it takes well under a minute, where one of the shipped scenario takes minutes."""
    created = httpx.post(f"{live['server'].url}/v1/scenarios", json=network_to_dict(small_world_network()),
                         headers=auth(live["token"]), timeout=120)
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def _watch(page: Any, job_id: str, timeout_s: float = 600) -> list[tuple[str, float, str]]:
    """The job's status, progress bar value and stage as the page shows them, read every 0.25 s until it ends."""
    seen: list[tuple[str, float, str]] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = page.evaluate("""(id) => {
            const d = document.querySelector('#job-detail');
            if (!d || d.dataset.id !== id) return null;
            const stage = d.querySelector('[data-fact=stage]'), bar = d.querySelector('progress');
            return [d.dataset.status, bar ? Number(bar.value) : 0, stage ? stage.textContent : ''];
        }""", job_id)
        if state is not None:
            seen.append((state[0], state[1], state[2]))
            if state[0] in TERMINAL:
                return seen
        page.wait_for_timeout(250)
    raise AssertionError(f"job {job_id} did not finish in {timeout_s} s; the page showed {seen[-5:]}")


def _figure(page: Any, name: str) -> str:
    return str(page.inner_text(f"#plan-summary [data-figure='{name}']"))


def test_run_a_plan_from_the_form_and_check_its_figures(page: Any, live: dict[str, Any], small_world: str) -> None:
    """The Run form's plan kind with its defaults, but ``maps`` unticked: the report's PNG/SVG/HTML maps and charts
    are extra work for the one worker that the Results view does not show (it draws its own map from the job's
    files). Every other option is the default (sent as nothing)."""
    url, headers = live["server"].url, auth(live["token"])
    sign_in(page, live, f"#/scenario/{small_world}")
    page.wait_for_selector("table.data[data-kind=links] tbody tr")
    page.click("#tab-run")
    page.wait_for_selector("#run-kind")
    page.select_option("#run-kind", "plan")
    page.wait_for_selector("#opt-maps")  # the form rebuilt from the plan options' schema
    assert page.is_checked("#opt-maps")  # its default
    page.uncheck("#opt-maps")
    page.click("#run-submit")
    page.wait_for_function("() => location.hash.startsWith('#/job/')")
    job_id = str(page.evaluate("location.hash")).removeprefix("#/job/")
    seen = _watch(page, job_id)
    assert seen[-1][0] == "succeeded", seen[-5:]
    running = [(fraction, stage) for status, fraction, stage in seen if status == "running"]
    assert any(0 < fraction < 1 and stage for fraction, stage in running), seen  # progress shown while it ran
    assert len({stage for _, stage in running}) >= 2, running  # more than one stage watched as it went
    fractions = [fraction for fraction, _ in running]
    assert fractions == sorted(fractions), fractions

    job = httpx.get(f"{url}/v1/jobs/{job_id}", headers=headers, timeout=30).json()
    assert job["kind"] == "plan" and job["options"] == {"maps": False} and job["status"] == "succeeded"
    result = httpx.get(f"{url}/v1/jobs/{job_id}/result", headers=headers, timeout=30).json()
    page.wait_for_selector("#plan-summary")
    assert page.inner_text("#plan-headline") == result["headline"]
    s = result["survivability"]
    assert _figure(page, "survived") == str(s["survived"]) and _figure(page, "states") == str(s["states"])
    assert _figure(page, "excused") == str(len(s["not_survivable"]))
    assert _figure(page, "violated") == str(len(s["violated"]))
    assert page.inner_text("#plan-survivability") == (
        f"Survives {s['survived']} of {s['states']} {s['failure_kind']} failure states; "
        f"{len(s['not_survivable'])} excused, {len(s['violated'])} still violated.")
    assert _figure(page, "status") == result["status"]
    assert _figure(page, "upgrade_cost_usd") == f"{number(result['upgrade_cost_usd'])} USD"
    assert _figure(page, "upgrade_lower_bound_usd") == f"{number(result['upgrade_lower_bound_usd'])} USD"
    assert _figure(page, "upgrade_gap") == percent(result["upgrade_gap"])
    assert _figure(page, "upgrade_bound.status") == result["upgrade_bound"]["status"]
    assert result["upgrade_bound"]["covers"] in page.get_attribute(
        "#plan-summary [data-figure='upgrade_lower_bound_usd']", "title")
    assert _figure(page, "links_upgraded") == (
        f"{number(result['links_upgraded'])} links, {number(result['routes_built'])} routes")
    assert _figure(page, "gpus_added") == number(result["gpus_added"])
    assert _figure(page, "placement_cost_usd") == f"{number(result['placement_cost_usd'])} USD"
    assert _figure(page, "mlu") == f"{percent(result['mlu'])} → {percent(result['mlu_after'])}"
    assert _figure(page, "unmet_gbps") == f"{number(result['unmet_gbps'])} → {number(result['unmet_gbps_after'])} Gb/s"
    assert _figure(page, "failures_with_unmet_demand") == (
        f"{result['failures_with_unmet_demand']} → {result['failures_with_unmet_demand_after']}")

    # what to buy: design_upgrades.csv's rows, as the API serves the file
    served = httpx.get(f"{url}/v1/jobs/{job_id}/files/design_upgrades.csv", headers=headers, timeout=30)
    upgrades = list(csv.DictReader(io.StringIO(served.text)))
    if upgrades:
        assert page.locator("#plan-upgrades tbody tr").count() == len(upgrades)
    else:
        assert page.inner_text("#plan-nothing-to-buy") == "Nothing to buy."
    # the excused states with their reasons, and each state before and after, in plan.json's order
    excused = page.locator("#plan-excused tbody tr")
    assert excused.count() == len(s["not_survivable"])
    for i, state in enumerate(s["not_survivable"]):
        cells = excused.nth(i).locator("td")
        assert [cells.nth(j).inner_text() for j in range(3)] == [state["scenario"], state["reason"], number(state["gbps"])]
    rows = page.locator("#plan-before-after tbody tr")
    assert [rows.nth(i).get_attribute("data-scenario") for i in range(rows.count())] == [
        b["scenario"] for b in result["before_after"]]
    for i, b in enumerate(result["before_after"]):
        cells = [rows.nth(i).locator("td").nth(j).inner_text() for j in range(9)]
        assert cells == [b["scenario"], number(b["impact_gbps_before"]), number(b["impact_gbps_after"]),
                         number(b["unmet_gbps_before"]), number(b["unmet_gbps_after"]), percent(b["mlu_before"]),
                         percent(b["mlu_after"]), "yes" if b["survived_before"] else "no",
                         "yes" if b["survived_after"] else "no"]
    # the plan's failure sweep beside it, as its failures.json ranks the states
    sweep = httpx.get(f"{url}/v1/jobs/{job_id}/files/failures.json", headers=headers, timeout=30).json()
    page.wait_for_selector("#failure-table tbody tr")
    assert page.locator("#failure-table tbody tr").count() == len(sweep["scenarios"])
    page.click("#results-wide")
    page.locator("#plan-summary").scroll_into_view_if_needed()
    page.wait_for_timeout(800)  # the map's last frame after the resize
    screenshot(page, "workspace-plan.png")
    assert page.problems == []

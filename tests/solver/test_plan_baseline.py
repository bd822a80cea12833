"""``backbone plan --baseline DIR``: the report's "compared with" section and ``plan.json``'s ``compared_with``,
the same diff as ``backbone diff DIR OUT``; a bad baseline is refused before anything runs; the API refuses the
option (it names a server folder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backbone.compare import diff
from backbone.errors import ValidationError
from backbone.model import Network
from tests.conftest import SharedRun


@pytest.mark.slow
def test_plan_with_a_baseline_reports_what_changed(small_world: Network, small_world_default_plan: SharedRun,
                                                   tmp_path: Path) -> None:
    from backbone.solver.tasks import run_task

    out = tmp_path / "q3"
    result = run_task("plan", small_world, {"demand_growth": 1.3, "maps": False,
                                            "baseline": str(small_world_default_plan.out)}, out)
    compared = result.summary.compared_with
    again = diff(small_world_default_plan.out, out)  # the same diff, read back from both folders
    assert compared is not None and compared.changed is True and compared.counts == again.counts()
    assert json.loads((out / "plan.json").read_text())["compared_with"]["counts"] == again.counts()
    html = (out / "report.html").read_text()
    assert f"Compared with {small_world_default_plan.out}" in html
    for kpi in again.kpi_changed()["kpi"].head(10):
        assert f">{kpi}<" in html
    for link in again.changeover["link"]:
        assert f">{link}<" in html


def test_a_bad_baseline_is_refused_before_anything_runs(small_world: Network, tmp_path: Path) -> None:
    from backbone.solver.tasks import run_task

    with pytest.raises(ValidationError, match="no such file or folder"):
        run_task("plan", small_world, {"baseline": str(tmp_path / "nope")}, tmp_path / "out")
    assert not (tmp_path / "out" / "plan.json").exists()


def test_the_api_refuses_a_baseline_folder() -> None:
    from backbone.api.input_policy import check_job_options

    with pytest.raises(ValidationError, match="baseline"):
        check_job_options({"baseline": "/srv/plans/q2"})

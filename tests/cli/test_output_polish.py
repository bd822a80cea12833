"""Output polish: counts with their noun in the right number ("1 link", "2 links"), whole things (GPUs, quarters,
modules) without decimals, CSV floats without floating-point noise, and --help without reStructuredText markup."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from backbone.artifacts import ArtifactWriter, csv_rounded
from backbone.report import table_html
from backbone.serialize import count_text


@pytest.mark.parametrize(("n", "word", "text"), [
    (1, "link", "1 link"), (2, "link", "2 links"), (0, "iteration", "0 iterations"), (1, "iteration", "1 iteration"),
    (1.0, "state", "1 state"), (1234, "demand", "1,234 demands"), (1, "family", "1 family"),
    (3, "family", "3 families"), (2, "mismatch", "2 mismatches")])
def test_count_text(n: float, word: str, text: str) -> None:
    plural = "mismatches" if word == "mismatch" else None
    assert count_text(n, word, plural) == text


def test_the_plan_headline_counts_in_the_right_number() -> None:
    from backbone.solver.design.summary import SurvivableDesignSummary
    from backbone.solver.design.survivable.survivability import Survivability
    from backbone.solver.plan.report_data import headline_text

    sv = Survivability(failure_kind="srlg", survived=7, states=7, not_survivable=[], violated=[])
    # only the figures the headline reads (a design's cost, no bound proven)
    design = SurvivableDesignSummary.model_construct(cost_usd=3.4e6, lower_bound_usd=None, gap=None)
    text = headline_text(sv, design, False, 1, 1)
    assert "(3.4 M USD: 1 link upgraded, 1 new route)" in text and "1 links" not in text
    assert "2 links upgraded, 0 new routes)" in headline_text(sv, design, False, 2, 0)


def test_report_tables_show_gpus_quarters_and_modules_as_whole_numbers() -> None:
    html = table_html([{"site": "lagos", "gpus_added": 0.0, "gpus_after": 3072.0, "lead_time_quarters": 2.0,
                        "modules": 3.0, "mw_after": 7.17}])
    cells = [c.rsplit(">", 1)[1] for c in html.split("</td>")[:-1]]
    assert cells == ["lagos", "0", "3,072", "2", "3", "7.17"]


def test_csv_floats_lose_their_noise_not_their_meaning(tmp_path) -> None:
    frame = pd.DataFrame({"link": ["a", "b"], "capacity_gbps": [3925.7000000000007, 0.0000004],
                          "cost_usd": [1234.5678, 2.0], "utilisation": [0.30000000000000004, 1.0 / 3],
                          "gpus_added": [3071.9999999999995, 0.0], "score": [0.1 + 0.2, 123456.78901234567]})
    ArtifactWriter(tmp_path).csv("t.csv", frame)
    text = (tmp_path / "t.csv").read_text()
    assert "3925.7," in text and "0000000" not in text and "9999999" not in text
    back = pd.read_csv(tmp_path / "t.csv")
    assert back["capacity_gbps"].tolist() == [3925.7, 0.0]  # 1 kbps resolution
    assert back["cost_usd"].tolist() == [1234.57, 2.0]
    assert back["utilisation"].tolist() == [0.3, 0.33333333]
    assert back["gpus_added"].tolist() == [3072.0, 0.0]
    assert back["score"].tolist() == [0.3, 123456.789012]
    assert csv_rounded(frame)["link"].tolist() == ["a", "b"]


@pytest.mark.parametrize("command", ["failures", "te", "plan", "design", "roadmap", "validate"])
def test_help_has_no_restructuredtext_markup(command: str) -> None:
    from backbone.api.cli.main import build_app

    r = CliRunner().invoke(build_app(command), [command, "--help"], terminal_width=200)
    assert r.exit_code == 0, r.output
    assert "``" not in r.output and ":func:" not in r.output and ":class:" not in r.output, r.output

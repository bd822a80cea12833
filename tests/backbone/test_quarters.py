"""The model's one reading of a quarter (``backbone.quarters``), shared by validation, the plan and the roadmap."""

from __future__ import annotations

import pytest

from backbone.quarters import quarter_label, quarter_number


def test_quarter_numbers_count_quarters_and_round_trip() -> None:
    assert quarter_number("2027Q3") == 2027 * 4 + 2
    assert quarter_number(" 2028Q1 ") - quarter_number("2027Q4") == 1
    assert [quarter_label(quarter_number(q)) for q in ("2026Q4", "2027Q1", "2030Q2")] == ["2026Q4", "2027Q1", "2030Q2"]


@pytest.mark.parametrize("text", ["2027Q5", "2027Q0", "2027", "27Q1", "2027-Q1", ""])
def test_a_label_that_is_not_a_quarter_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="expected a quarter like '2027Q3'"):
        quarter_number(text)


"""benchmarks/report.py: the benchmarks' common --markdown option writes what they print, with its context."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from benchmarks.report import add_markdown_option, markdown_report


def test_markdown_page_holds_the_printed_table_and_its_context(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    add_markdown_option(parser)
    page = tmp_path / "docs" / "benchmarks" / "x.md"
    args = parser.parse_args(["--markdown", str(page)])
    with markdown_report(args.markdown, "A table", preformatted=True):
        print("size seconds\n  50    1.25")
    assert "  50    1.25" in capsys.readouterr().out  # still printed
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# A table\n")
    for field in ("- date: ", "- machine: ", " cores", "- load before: `", "load average", "- command: `python -m "):
        assert field in text, field
    assert "```text\nsize seconds\n  50    1.25\n```" in text


def test_markdown_tables_are_kept_as_written_and_no_path_writes_nothing(tmp_path: Path) -> None:
    page = tmp_path / "t.md"
    with markdown_report(page, "T", preformatted=False):
        print("a | b\n---|---\n1 | 2")
    assert "\na | b\n---|---\n1 | 2\n" in page.read_text(encoding="utf-8")
    parser = argparse.ArgumentParser()
    add_markdown_option(parser)
    with markdown_report(parser.parse_args([]).markdown, "T"):
        print("x")
    assert list(tmp_path.iterdir()) == [page]

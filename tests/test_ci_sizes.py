"""The size check of .ci/lint (.ci/sizes.py) finds long modules and functions, exempts data tables, and
fails only when enforced."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def sizes():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("ci_sizes", ROOT / ".ci" / "sizes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_long_functions_and_modules_are_reported_and_enforced(sizes, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(130))
    (pkg / "long_function.py").write_text(f"class A:\n    def method(self):\n    {body.replace(chr(10), chr(10) + '    ')}\n"
                                          "\n\ndef short():\n    return 1\n")
    (pkg / "long_module.py").write_text("\n".join(f"X{i} = {i}" for i in range(601)) + "\n")
    (pkg / "fine.py").write_text("def f():\n    return 1\n")
    found = sizes.long_functions(pkg / "long_function.py")
    assert [(name, line) for _, name, line in found] == [("A.method", 2)] and found[0][0] == 131
    monkeypatch.chdir(tmp_path)
    assert sizes.main(["pkg"]) == 0
    out = capsys.readouterr().out
    assert "module over 600 lines: pkg/long_module.py (601)" in out
    assert "pkg/long_function.py:2 A.method (131)" in out and "fine.py" not in out
    assert sizes.main(["--enforce", "pkg"]) == 1
    (pkg / "long_module.py").unlink()
    (pkg / "long_function.py").unlink()
    assert sizes.main(["--enforce", "pkg"]) == 0


def test_data_tables_are_exempt_from_the_module_limit(sizes) -> None:  # type: ignore[no-untyped-def]
    assert sizes.is_data_table(Path("backbone/datasets/global_cables.py"))
    assert not sizes.is_data_table(Path("backbone/datasets/build_global.py"))
    assert not sizes.is_data_table(Path("solver/plan/pipeline.py"))


@pytest.mark.slow
def test_the_repository_holds_the_limits(sizes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """.ci/lint enforces the limits: no module over 600 lines and no function over 120 in backbone, solver, api."""
    monkeypatch.chdir(ROOT)
    assert sizes.main(["--enforce"]) == 0


def test_complex_functions_are_counted_as_radon_counts_and_enforced(sizes, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Each ``if``, conditional expression, loop, handler, boolean operand and comprehension clause adds one."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    conditions = "\n".join(f"    if x == {i} and y:\n        return {i}" for i in range(15))  # 1 + 15 * 2
    (pkg / "branchy.py").write_text(f"def branchy(x, y):\n{conditions}\n    return [z for z in y if z]\n")
    found = sizes.complex_functions(pkg / "branchy.py")
    assert found == [(33, "branchy", 1)]  # 1 + 30 + comprehension (for + if)
    monkeypatch.chdir(tmp_path)
    assert sizes.main(["pkg"]) == 0
    assert "function over complexity 30: pkg/branchy.py:1 branchy (33)" in capsys.readouterr().out
    assert sizes.main(["--enforce", "pkg"]) == 1

"""Size limits: no module over 600 lines (data tables excepted), no function over 120 lines and no function over
cyclomatic complexity 30.

Complexity is counted as radon counts it (1, plus one per ``if``/``elif``/conditional expression, loop (and its
``else``), ``except`` handler, ``try``'s ``else``, boolean operator operand after the first, comprehension ``for``
and its ``if`` clauses, and ``match`` case), so 30 is the top of radon's rank D: the E and F functions issue #30
named (``_place_labels`` 43, ``_target_tree`` 39 ...) fail it. Ruff's C901 (pyproject.toml) counts neither boolean
operators nor comprehensions, so it misses the functions that are complex through their expressions.

Prints every offender, largest first. Without ``--enforce`` it only reports (exit 0); with ``--enforce`` any
offender fails (exit 1). ``.ci/lint`` runs it with ``--enforce`` (the list of offenders is empty), so the
limits hold from now on.

Usage: ``python .ci/sizes.py [--enforce] [folder ...]`` (default folders: backbone solver api).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 120
MAX_FUNCTION_COMPLEXITY = 30
DATA_TABLES = ("backbone/datasets/global_*.py",)
"""Modules that are data (the shipped scenario's facts as Python tables), exempt from the module limit."""


def is_data_table(path: Path) -> bool:
    """Whether ``path`` (relative to the repository root) is one of :data:`DATA_TABLES`."""
    return any(path.match(pattern) for pattern in DATA_TABLES)


def functions(path: Path) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(qualified name, node) of every function and method in ``path``, nested ones included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                out.append((name, child))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def long_functions(path: Path) -> list[tuple[int, str, int]]:
    """(lines, qualified name, first line) of each function or method in ``path`` over the limit.

    A function's length runs from its ``def`` line to its last line (decorators excluded), nested
    functions included in their parent's length and also checked on their own.
    """
    lengths = [((f.end_lineno or f.lineno) - f.lineno + 1, name, f.lineno) for name, f in functions(path)]
    return [x for x in lengths if x[0] > MAX_FUNCTION_LINES]


def cyclomatic_complexity(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Radon's cyclomatic complexity of ``function``'s own body (nested functions and classes count on their own)."""
    total = 1

    def visit(node: ast.AST) -> None:
        nonlocal total
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                continue
            if isinstance(child, ast.If | ast.IfExp):
                total += 1
            elif isinstance(child, ast.For | ast.AsyncFor | ast.While):
                total += 1 + bool(child.orelse)
            elif isinstance(child, ast.Try | ast.TryStar):
                total += len(child.handlers) + bool(child.orelse)
            elif isinstance(child, ast.BoolOp):
                total += len(child.values) - 1
            elif isinstance(child, ast.comprehension):
                total += 1 + len(child.ifs)
            elif isinstance(child, ast.Match):
                total += len(child.cases)
            visit(child)

    visit(function)
    return total


def complex_functions(path: Path) -> list[tuple[int, str, int]]:
    """(complexity, qualified name, first line) of each function or method in ``path`` over the limit."""
    scores = [(cyclomatic_complexity(f), name, f.lineno) for name, f in functions(path)]
    return [x for x in scores if x[0] > MAX_FUNCTION_COMPLEXITY]


def main(argv: list[str]) -> int:
    """Report (and with ``--enforce`` fail on) modules and functions over the limits."""
    enforce = "--enforce" in argv
    folders = [a for a in argv if not a.startswith("--")] or ["backbone", "solver", "api"]
    modules: list[tuple[int, str]] = []
    functions: list[tuple[int, str]] = []
    complex_ones: list[tuple[int, str]] = []
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.py")):
            n_lines = len(path.read_text(encoding="utf-8").splitlines())
            if n_lines > MAX_MODULE_LINES and not is_data_table(path):
                modules.append((n_lines, str(path)))
            functions += [(length, f"{path}:{line} {name}") for length, name, line in long_functions(path)]
            complex_ones += [(cc, f"{path}:{line} {name}") for cc, name, line in complex_functions(path)]
    for n_lines, where in sorted(modules, reverse=True):
        print(f"module over {MAX_MODULE_LINES} lines: {where} ({n_lines})")
    for length, where in sorted(functions, reverse=True):
        print(f"function over {MAX_FUNCTION_LINES} lines: {where} ({length})")
    for complexity, where in sorted(complex_ones, reverse=True):
        print(f"function over complexity {MAX_FUNCTION_COMPLEXITY}: {where} ({complexity})")
    total = len(modules) + len(functions) + len(complex_ones)
    if not total:
        print(f"sizes ok: no module over {MAX_MODULE_LINES} lines, no function over {MAX_FUNCTION_LINES} lines "
              f"or over complexity {MAX_FUNCTION_COMPLEXITY}")
        return 0
    print(f"{len(modules)} module(s), {len(functions)} long function(s) and {len(complex_ones)} complex function(s) "
          "over the limits"
          + ("" if enforce else " (reported, not enforced)"))
    return 1 if enforce else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

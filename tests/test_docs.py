"""The documentation: the generated CLI reference covers every command and option, and the README links only to
pages that exist (the site itself is built with warnings as errors by ``.ci/docs`` in CI)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _hook():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "docs" / "hooks" / "cli_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_lists_every_command_and_option() -> None:
    import typer

    from backbone.api.cli.main import app

    text = _hook().cli_reference_markdown()
    root = typer.main.get_command(app)
    ctx = typer.Context(root)
    for name in root.list_commands(ctx):
        cmd = root.get_command(ctx, name)
        assert f"`backbone {name}`" in text, name
        for param in cmd.params:
            for opt in param.opts:
                if opt.startswith("-"):
                    assert f"`{opt}`" in text, (name, opt)
    assert "`backbone token create`" in text and "`--k-paths`" in text


def test_readme_and_docs_links_resolve() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    link = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
    missing = []
    for page in pages:
        for target in link.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            resolved = (page.parent / target).resolve()
            generated = resolved == (ROOT / "docs" / "reference" / "cli.md").resolve()
            if not resolved.exists() and not generated:
                missing.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not missing, missing


def test_mkdocs_nav_names_existing_pages() -> None:
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def walk(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                yield from walk(value)

    pages = list(walk(config["nav"]))
    assert "reference/cli.md" in pages
    absent = [p for p in pages if p != "reference/cli.md" and not (ROOT / "docs" / p).is_file()]
    assert not absent, absent


@pytest.mark.slow
def test_formulations_page_names_code_that_exists() -> None:
    """docs/maths.md cites the code it describes; when a module, function or constant moves or is renamed, the
    page must follow (every dotted module resolves, every cited call and ``snake_case`` name is in the source,
    every ``UPPER_CASE`` constant is assigned at a module's top level, every ``.py`` path exists under solver/)."""
    import importlib

    text = (ROOT / "docs" / "maths.md").read_text(encoding="utf-8")
    sources = "\n".join(p.read_text(encoding="utf-8") for folder in ("backbone", "solver", "api")
                        for p in sorted((ROOT / folder).rglob("*.py")))
    missing = []
    for dotted in sorted(set(re.findall(r"`(backbone\.solver(?:\.\w+)+)`", text))):
        try:
            importlib.import_module(dotted)
        except ModuleNotFoundError:
            parent, _, name = dotted.rpartition(".")
            if not hasattr(importlib.import_module(parent), name):
                missing.append(dotted)
    for name in sorted(set(re.findall(r"`(_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+)\(", text))):
        if not re.search(rf"^\s*def {name}\(", sources, re.M):
            missing.append(f"{name}()")
    for name in sorted(set(re.findall(r"`(_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+)`", text))):
        if not re.search(rf"\b{name}\b", sources):
            missing.append(name)
    for name in sorted(set(re.findall(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b", text))):
        if not re.search(rf"^{name}\s*[:=]", sources, re.M):
            missing.append(name)
    for path in sorted(set(re.findall(r"`([\w/]+\.py)", text))):
        if not (ROOT / "solver" / path).is_file():
            missing.append(path)
    # a constant quoted with its value ("MASTER_MAX_DEMANDS = 2,500") has that value in some module
    for name, value in sorted(set(re.findall(r"\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+) = ([0-9](?:[0-9.,e-]*[0-9])?)", text))):
        assigned = re.findall(rf"^{name}\s*(?::[^=]+)?=\s*([0-9][0-9_.e-]*)\s*$", sources, re.M)
        if float(value.replace(",", "")) not in {float(v.replace("_", "")) for v in assigned}:
            missing.append(f"{name} = {value} (code: {assigned})")
    assert not missing, missing

"""Release prep: one version everywhere (pyproject.toml reads ``backbone.__version__``, ``backbone --version`` prints
it) and CHANGELOG.md agrees with it: either the version has its own section, or the Unreleased section is the one
being prepared for it (docs/development.md, "Cutting a release")."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import backbone

ROOT = Path(__file__).resolve().parents[1]
VERSION = re.compile(r"^\d+\.\d+\.\d+$")


def test_the_version_is_kept_in_one_place() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "backbone.__version__"}
    # setuptools reads the attribute without importing the package: it must be a literal assignment
    tree = ast.parse((ROOT / "backbone" / "__init__.py").read_text())
    literal = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
               and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
               and isinstance(node.value, ast.Constant)]
    assert literal == [backbone.__version__] and VERSION.match(backbone.__version__)


def test_cli_prints_the_version() -> None:
    out = subprocess.run([sys.executable, "-m", "backbone.api", "--version"], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.strip() == f"backbone {backbone.__version__}"


def test_changelog_agrees_with_the_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    sections = re.findall(r"^## \[([^\]]+)\]", text, flags=re.MULTILINE)
    assert sections and sections[0] == "Unreleased", "CHANGELOG.md starts with its Unreleased section"
    released = sections[1:]
    assert all(VERSION.match(v) for v in released), released
    assert released == sorted(released, key=lambda v: tuple(map(int, v.split("."))), reverse=True)
    unreleased = text.split("## [Unreleased]", 1)[1].split("\n## [", 1)[0]
    version = backbone.__version__
    # after a tag the version has its section; before it, the Unreleased section says it is being prepared
    assert version in released or f"before {version}" in unreleased, (
        f"CHANGELOG.md: no section [{version}] and the Unreleased section does not say it prepares {version}")
    if released:
        top = tuple(map(int, released[0].split(".")))
        assert tuple(map(int, version.split("."))) >= top, "the version is older than the newest release"

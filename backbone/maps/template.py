"""The page of :mod:`backbone.maps.interactive`, assembled from the package files ``templates/map.html``,
``templates/map.css`` and ``templates/map.js`` (package data, read through :mod:`importlib.resources`).

The style sheet and the script are inlined into the page, so the page references nothing outside itself;
the only URI in it is the SVG namespace name, which browsers never fetch. ``%%TITLE%%`` (HTML-escaped),
``%%OCEAN%%`` (a colour) and ``%%DATA%%`` (JSON with ``</`` escaped) are left for the caller to replace.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

TEMPLATE_DIR = "templates"
"""Folder of the page's files inside the ``backbone.maps`` package."""


def read_template(name: str) -> str:
    """The text (UTF-8) of one file of the map page, e.g. ``"map.js"``.

    Raises
    ------
    FileNotFoundError
        When the package was installed without its data files.
    """
    return files("backbone.maps").joinpath(TEMPLATE_DIR, name).read_text(encoding="utf-8")


@cache
def page_template() -> str:
    """The map page with its style sheet and script inlined, placeholders ``%%TITLE%%``, ``%%OCEAN%%`` and
    ``%%DATA%%`` still in it.

    Example
    -------
    >>> "%%DATA%%" in page_template() and "<script src" not in page_template()
    True
    """
    page = read_template("map.html")
    for marker, name in (("%%STYLE%%\n", "map.css"), ("%%SCRIPT%%\n", "map.js")):
        if page.count(marker) != 1:
            raise ValueError(f"map.html must hold {marker.strip()} once on its own line")
        page = page.replace(marker, read_template(name))
    return page

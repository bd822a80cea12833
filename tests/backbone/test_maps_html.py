"""The interactive HTML map: self-contained (nothing fetched), data for both views, and it really
draws in headless Chromium with the network disabled and no console errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backbone.maps import export_map, render_map_bytes
from backbone.maps import style as map_style
from backbone.model import Network
from tests.backbone.test_maps import TRANS_PACIFIC, near, pacific_network, png_pixels, result_for

SVG_NAMESPACE = "http://www.w3.org/2000/svg"
"""The one URI allowed in the page: an XML namespace name, which browsers never fetch."""


@pytest.fixture(scope="module")
def pacific() -> Network:
    return pacific_network()


@pytest.fixture(scope="module")
def page(pacific: Network) -> str:
    return render_map_bytes(pacific, "html", result_for(pacific)).decode("utf-8")


def map_data(page: str) -> dict[str, Any]:
    m = re.search(r'<script id="map-data" type="application/json">(.*?)</script>', page, re.S)
    assert m, "embedded data missing"
    return json.loads(m.group(1))


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "action", "poster", "srcset", "data") and value is not None:
                self.refs.append((tag, name, value))


def external_references(page: str) -> list[str]:
    """Everything in ``page`` that would make a browser fetch something from elsewhere."""
    found = []
    for url in re.findall(r"https?://[^\s\"'<>)]*", page):
        if url != SVG_NAMESPACE:
            found.append(url)
    parser = _Refs()
    parser.feed(page)
    for tag, attr, value in parser.refs:
        if not (value.startswith("data:") or value.startswith("#")):
            found.append(f"<{tag} {attr}={value!r}>")
    for url in re.findall(r"url\(\s*['\"]?([^)'\"]+)", page):
        if not url.startswith(("data:", "#")):
            found.append(f"url({url})")
    found += re.findall(r"@import|\bfetch\(|XMLHttpRequest|\bimport\(|new WebSocket|EventSource", page)
    found += [m for m in re.findall(r"""(?:src|href)\s*=\s*["']?//[^\s"'>]*""", page)]
    return found


def test_page_references_nothing_external(page: str) -> None:
    assert external_references(page) == []
    assert page.count(SVG_NAMESPACE) == 1  # only in createElementNS
    # the checker itself catches the usual ways a page fetches things
    bad = page.replace("<title>", '<script src="//cdn.example.com/d3.js"></script><title>')
    bad = bad.replace("</style>", "body { background: url(https://tiles.example.com/0/0/0.png) }</style>")
    assert len(external_references(bad)) >= 2


def test_page_embeds_both_views_with_continuous_pacific_cables(pacific: Network, page: str) -> None:
    data = map_data(page)
    assert [v["name"] for v in data["views"]] == ["Centred 0°E", "Pacific-centred"]
    ids = [link["id"] for link in data["links"]]
    assert ids == list(pacific.links.index)
    world, pac = data["views"]
    for lid in TRANS_PACIFIC:
        i = ids.index(lid)
        assert world["links"][i].count("M") == 2, lid  # cut at the antimeridian in the 0E view
        assert pac["links"][i].count("M") == 1, lid  # continuous in the Pacific view
    for view in data["views"]:
        assert view["land"].count("M") > 200 and view["outline"]
        for d in view["links"]:
            for part in d.split("M")[1:]:
                xy = np.array(part.replace("L", " ").split(), dtype=float).reshape(-1, 2)
                assert np.abs(np.diff(xy[:, 0])).max(initial=0) < view["width"] / 3
    tokyo = next(s for s in data["sites"] if s["id"] == "TYO")
    assert tokyo["gpus"] == 30000 and tokyo["values"]["gpus_added"] == 5000
    lax_tyo = data["links"][ids.index("lax-tyo")]
    assert lax_tyo["cable"] == "Pacific-1" and lax_tyo["values"]["utilisation"] > 0
    assert data["links"][ids.index("sea-tyo")]["failed"] is True
    assert len(page.encode()) < 3_000_000


def test_page_escapes_names(pacific: Network) -> None:
    evil = pacific.copy_with(sites=pacific.sites.assign(name=pacific.sites["name"].where(
        pacific.sites.index != "TYO", "</script><script>alert(1)</script>")))
    page = render_map_bytes(evil, "html", title="<b>t</b>").decode()
    assert "</script><script>alert(1)" not in page and "<title>&lt;b&gt;t&lt;/b&gt;</title>" in page
    assert map_data(page)["sites"][list(evil.sites.index).index("TYO")]["name"].startswith("</script>")


def test_region_page_has_one_view(pacific: Network) -> None:
    data = map_data(render_map_bytes(pacific, "html", region="apac").decode())
    assert len(data["views"]) == 1 and not data["views"][0]["world"]


# ---------------------------------------------------------------------- headless Chromium
def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("BACKBONE_REQUIRE_CHROMIUM") == "1":
        pytest.fail("BACKBONE_REQUIRE_CHROMIUM=1 but no chromium binary on PATH")
    pytest.skip("headless chromium not installed (apt-get install chromium); set BACKBONE_REQUIRE_CHROMIUM=1 to fail")


def run_chromium(html_file: Path, tmp: Path, *mode: str) -> subprocess.CompletedProcess[str]:
    """Open ``html_file`` with the network disabled; ``mode`` is --dump-dom or --screenshot=..."""
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--disable-extensions", "--mute-audio",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
            f"--user-data-dir={tmp / 'profile'}", "--window-size=1280,720", "--enable-logging=stderr", "--v=0",
            "--virtual-time-budget=3000", *mode, html_file.resolve().as_uri()]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def console_messages(stderr: str) -> list[str]:
    """Page console output and load failures that Chromium logs on stderr."""
    return [ln for ln in stderr.splitlines()
            if ":CONSOLE" in ln or "Uncaught" in ln or "net::ERR_" in ln or "Failed to load resource" in ln]


@pytest.mark.browser
def test_page_draws_in_chromium_without_console_errors(pacific: Network, tmp_path: Path) -> None:
    html_file = export_map(pacific, tmp_path / "map.html", result=result_for(pacific))
    dom = run_chromium(html_file, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_messages(dom.stderr) == []
    assert 'data-ready="1"' in dom.stdout  # the script ran to the end
    n_links = dom.stdout.count('class="link"')
    assert n_links == len(pacific.links)
    assert dom.stdout.count('class="site"') == len(pacific.sites)
    assert re.search(r'<svg id="map"[^>]*viewBox="[-0-9. ]+"', dom.stdout)
    # every shown site label sits next to its site's marker
    circles: dict[str, tuple[float, float]] = {}
    for m in re.finditer(r'<circle cx="([-0-9.e]+)" cy="([-0-9.e]+)" class="site"[^>]*data-i="(\d+)"', dom.stdout):
        circles[pacific.sites["name"].iloc[int(m.group(3))]] = (float(m.group(1)), float(m.group(2)))
    assert len(circles) == len(pacific.sites)
    labels = re.findall(r'<text x="([-0-9.e]+)" y="([-0-9.e]+)" class="label"([^>]*)>([^<]+)</text>', dom.stdout)
    shown = [(float(x), float(y), name) for x, y, attrs, name in labels if "display: none" not in attrs]
    placed = [(x, y, name) for x, y, name in shown if name in circles]
    assert len(placed) >= 5
    for x, y, name in placed:
        cx, cy = circles[name]
        assert abs(x - cx) < 15 and abs(y - cy) < 15, name

    shot = tmp_path / "shot.png"
    run = run_chromium(html_file, tmp_path, f"--screenshot={shot}")
    assert run.returncode == 0 and shot.exists(), run.stderr[-2000:]
    assert console_messages(run.stderr) == []
    img = png_pixels(shot.read_bytes())
    land, ocean = near(img, map_style.LAND, 5).sum(), near(img, map_style.OCEAN, 5).sum()
    assert land > 0.05 * img[..., 0].size and ocean > 0.10 * img[..., 0].size
    assert near(img, map_style.OVERLOAD, 25).sum() > 5  # the overloaded link is drawn in its colour


@pytest.mark.browser
def test_chromium_check_catches_a_broken_page(page: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    marker = '  draw();\n  document.documentElement.setAttribute("data-ready"'
    assert marker in page
    broken.write_text(page.replace(marker, "  undefinedFunction();\n" + marker), encoding="utf-8")
    dom = run_chromium(broken, tmp_path, "--dump-dom")
    assert any("Uncaught" in m for m in console_messages(dom.stderr))
    assert 'data-ready="1"' not in dom.stdout

"""The interactive HTML map: self-contained (nothing fetched), data for both views, and it really
draws in headless Chromium with the network disabled and no console errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backbone.maps import export_map, render_map_bytes
from backbone.maps import style as map_style
from backbone.model import Network
from tests.backbone.test_maps import TRANS_PACIFIC, near, png_pixels, result_for
from tests.browser import chromium
from tests.nets import pacific_network

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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.browser
def test_chromium_check_catches_a_broken_page(page: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    marker = '  draw();\n  document.documentElement.setAttribute("data-ready"'
    assert marker in page
    broken.write_text(page.replace(marker, "  undefinedFunction();\n" + marker), encoding="utf-8")
    dom = run_chromium(broken, tmp_path, "--dump-dom")
    assert any("Uncaught" in m for m in console_messages(dom.stderr))
    assert 'data-ready="1"' not in dom.stdout


# ---------------------------------------------------------------------- interaction over the DevTools pipe
class DevTools:
    """A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (fds 3 and 4)."""

    def __init__(self, profile: Path) -> None:
        cmd_r, cmd_w = os.pipe()
        ev_r, ev_w = os.pipe()

        def child() -> None:
            os.dup2(cmd_r, 3)
            os.dup2(ev_w, 4)

        self.proc = subprocess.Popen(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-quic",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", f"--user-data-dir={profile}",
             "--window-size=1280,720", "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4), preexec_fn=child, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(ev_w)
        self.write_fd, self.read_fd = cmd_w, ev_r
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session = ""

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
        import select
        import time

        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session:
            msg["sessionId"] = self.session
        os.write(self.write_fd, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.read_fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                break
            self.buffer += chunk
            *messages, self.buffer = self.buffer.split(b"\0")
            for raw in messages:
                m = json.loads(raw)
                if m.get("id") == self.next_id:
                    if "error" in m:
                        raise RuntimeError(f"{method}: {m['error']}")
                    return m["result"]
                self.events.append(m)
        raise TimeoutError(method)

    def open(self, url: str) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.send(f"{domain}.enable")
        self.send("Page.navigate", {"url": url})

    def js(self, expression: str) -> Any:
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise AssertionError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def mouse(self, kind: str, x: float, y: float, **kw: Any) -> None:
        self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, **kw})

    def problems(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("method") in ("Runtime.exceptionThrown", "Runtime.consoleAPICalled")
                or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning"))]

    def close(self) -> None:
        try:
            self.session = ""
            self.send("Browser.close", timeout=5)
        except (TimeoutError, RuntimeError, OSError):
            self.proc.kill()
        self.proc.wait(timeout=15)
        os.close(self.write_fd)
        os.close(self.read_fd)


def view_box(dt: DevTools) -> np.ndarray:
    return np.array(dt.js("document.getElementById('map').getAttribute('viewBox')").split(), dtype=float)


@pytest.mark.slow
@pytest.mark.browser
def test_page_pans_zooms_tooltips_toggles_and_switches_view(pacific: Network, tmp_path: Path) -> None:
    import time

    html_file = export_map(pacific, tmp_path / "map.html", result=result_for(pacific))
    dt = DevTools(tmp_path / "profile")
    try:
        dt.open(html_file.resolve().as_uri())
        for _ in range(100):
            if dt.js("document.documentElement && document.documentElement.dataset.ready") == "1":
                break
            time.sleep(0.1)
        assert dt.js("document.documentElement.dataset.ready") == "1"
        width_px = dt.js("document.getElementById('map').getBoundingClientRect().width")
        left_px = dt.js("document.getElementById('map').getBoundingClientRect().left")
        top_px = dt.js("document.getElementById('map').getBoundingClientRect().top")
        home = view_box(dt)

        # wheel: zoom in by exp(0.6) around the cursor, which stays over the same map point
        mx, my = 500.0, 300.0
        k0 = home[2] / width_px
        under = home[:2] + (np.array([mx - left_px, my - top_px])) * k0
        dt.mouse("mouseWheel", mx, my, deltaX=0, deltaY=-400)
        zoomed = view_box(dt)
        assert zoomed[2] == pytest.approx(home[2] * np.exp(-0.6), rel=1e-3)
        k1 = zoomed[2] / width_px
        assert zoomed[:2] + np.array([mx - left_px, my - top_px]) * k1 == pytest.approx(under, abs=0.05)

        # drag 100 px to the right: the view moves 100 px worth of map to the left
        for kind, x in (("mousePressed", 400.0), ("mouseMoved", 450.0), ("mouseMoved", 500.0), ("mouseReleased", 500.0)):
            dt.mouse(kind, x, 300.0, button="left", buttons=0 if kind == "mouseReleased" else 1, clickCount=1)
        dragged = view_box(dt)
        assert dragged[0] == pytest.approx(zoomed[0] - 100 * k1, abs=0.01) and dragged[1] == pytest.approx(zoomed[1])

        # hover a site and a link: tooltips name them
        dt.js("document.getElementById('zreset').click()")
        assert view_box(dt) == pytest.approx(home)
        i_tyo = list(pacific.sites.index).index("TYO")
        cx, cy = dt.js(f"(function(){{var r=document.querySelector('circle.site[data-i=\"{i_tyo}\"]')"
                       ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2];})()")
        dt.mouse("mouseMoved", cx, cy)
        tip = dt.js("document.getElementById('tip').innerText")
        assert dt.js("document.getElementById('tip').style.display") == "block"
        assert "Tokyo" in tip and "30,000" in tip and "Gpus added" in tip
        i_link = list(pacific.links.index).index("nyc-lon")
        lx, ly = dt.js(f"(function(){{var p=document.querySelector('path.hit[data-i=\"{i_link}\"]');"
                       "var q=p.getPointAtLength(p.getTotalLength()/2).matrixTransform(p.getScreenCTM());"
                       "return [q.x, q.y];})()")
        dt.mouse("mouseMoved", lx, ly)
        tip = dt.js("document.getElementById('tip').innerText")
        assert "nyc-lon" in tip and "Atlantic-1" in tip and "3.2 Tbps" in tip and "Utilisation" in tip

        # layer toggle hides the submarine group
        sub = f"document.querySelector('path.hit[data-i=\"{i_link}\"]').parentNode"
        assert dt.js(f"getComputedStyle({sub}).display") != "none"
        dt.js("document.querySelector('input[data-layer=\"submarine\"]').click()")
        assert dt.js(f"getComputedStyle({sub}).display") == "none"

        # switch to the Pacific-centred view: the trans-Pacific cable becomes one piece
        i_pac = list(pacific.links.index).index("lax-tyo")
        d_path = f"document.querySelector('path.hit[data-i=\"{i_pac}\"]').getAttribute('d')"
        assert dt.js(d_path).count("M") == 2
        dt.js("document.querySelectorAll('#views button')[1].click()")
        assert dt.js(d_path).count("M") == 1
        assert dt.js("document.querySelectorAll('#views button')[1].className") == "on"
        assert dt.problems() == []
    finally:
        dt.close()


def test_page_is_assembled_from_the_package_template_files() -> None:
    """The page's style sheet and script are the package data files map.css and map.js, inlined once each;
    only the caller's placeholders are left."""
    from backbone.maps.template import page_template, read_template

    page = page_template()
    css, js = read_template("map.css"), read_template("map.js")
    assert page.count(css) == 1 and page.count(js) == 1
    assert f"<style>\n{css}</style>" in page and f"<script>\n{js}</script>" in page
    assert sorted(set(re.findall(r"%%[A-Z]+%%", page))) == ["%%DATA%%", "%%OCEAN%%", "%%TITLE%%"]
    with pytest.raises(FileNotFoundError):
        read_template("no-such-file.js")

"""The API's JSON answers with and without gzip: the shipped scenario's content, its GeoJSON map and the basemap.

Starts ``backbone serve`` as a subprocess on a free 127.0.0.1 port with a temporary data dir and SQLite (``db
upgrade``, ``db seed``, a team and a viewer token; the same server as ``bench_workspace``), then asks for each
answer (on loopback) ``--repeats`` times with ``Accept-Encoding: identity`` and ``Accept-Encoding: gzip`` in turn (the first
round of each warms the server and is dropped). For each it prints:

* the body's bytes on the wire (as sent, headers not counted) and after decoding, and their ratio;
* the client's wall time from sending the request to holding the decoded body (httpx, one keep-alive
  connection), median and p90;
* the server process's CPU time per answer (user + system from ``/proc/<pid>/stat``, median), which includes
  the compression (a mean: the kernel counts it in clock ticks of 10 ms); the map's drawing runs in a document
  worker process and is not in it;
* the CPU time of compressing the decoded body once as the server does (zlib level 6, gzip wrapper), measured in
  this process with ``time.process_time`` (median of 5), finer than the server's clock ticks;
* the time the wire bytes take at 100 Mbit/s and at 20 Mbit/s, computed from the bytes (no link is emulated:
  loopback moves them in well under a millisecond).

Usage: ``python benchmarks/bench_api_gzip.py [--repeats 15] [--markdown docs/benchmarks/api_gzip.md]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backbone.api.compression import COMPRESS_LEVEL
from benchmarks.bench_workspace import Server
from benchmarks.report import add_markdown_option, load_average, markdown_report

ENCODINGS = ("identity", "gzip")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux ``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(repeats: int) -> tuple[dict[tuple[str, str], dict[str, list[float]]], str]:
    """Each answer's wire bytes, decoded bytes, wall and server CPU seconds per encoding; and the load before."""
    samples: dict[tuple[str, str], dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        server.cli("db", "upgrade")
        server.cli("db", "seed")
        server.cli("team", "create", "Network Planning")
        token = server.cli("token", "create", "--scope", "viewer", "--team", "Network Planning", "--name",
                           "bench").split()[-1]
        server.start()
        assert server.proc is not None
        load_before = load_average()
        try:
            with httpx.Client(base_url=server.url, timeout=120, headers={"Authorization": f"Bearer {token}"}) as c:
                shipped = next(s["id"] for s in c.get("/v1/scenarios").json() if s["read_only"])
                answers = {"GET content": f"/v1/scenarios/{shipped}",
                           "GET map (GeoJSON)": f"/v1/scenarios/{shipped}/map?format=geojson",
                           "GET basemap": "/v1/basemap"}
                for _round in range(repeats + 1):
                    for name, path in answers.items():
                        for encoding in ENCODINGS:
                            cpu0, t0 = cpu_seconds(server.proc.pid), time.perf_counter()
                            r = c.get(path, headers={"Accept-Encoding": encoding})
                            body = r.content  # decoded
                            wall, cpu = time.perf_counter() - t0, cpu_seconds(server.proc.pid) - cpu0
                            r.raise_for_status()
                            if encoding == "gzip" and r.headers.get("content-encoding") != "gzip":
                                raise RuntimeError(f"{path} was not compressed: the server is older than gzip")
                            if _round == 0:
                                continue
                            got = samples.setdefault((name, encoding), {k: [] for k in ("wire", "decoded", "wall",
                                                                                         "cpu")})
                            got["wire"].append(r.num_bytes_downloaded)
                            got["decoded"].append(len(body))
                            got["wall"].append(wall)
                            got["cpu"].append(cpu)
                            if not got.get("compress"):
                                got["compress"] = [compress_cpu_s(body)]
        finally:
            server.stop()
    return samples, load_before


def compress_cpu_s(body: bytes, level: int = COMPRESS_LEVEL, rounds: int = 5) -> float:
    """Median CPU seconds of compressing ``body`` once as :class:`~backbone.api.compression.JsonCompression` does."""
    times = []
    for _ in range(rounds):
        t0 = time.process_time()
        compressor = zlib.compressobj(level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        compressor.compress(body)
        compressor.flush()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def report(samples: dict[tuple[str, str], dict[str, list[float]]], load_before: str, repeats: int) -> None:
    """Print one table: each answer in each encoding."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"API JSON answers on loopback, shipped scenario, with and without gzip ({repeats} of each)")
    for col in ("answer", "encoding", "wire kB", "decoded kB", "wire/decoded", "wall ms median",
                "wall ms p90", "server CPU ms mean", "gzip CPU ms", "at 100 Mbit/s ms", "at 20 Mbit/s ms"):
        table.add_column(col, justify="left" if col in ("answer", "encoding") else "right")
    for (name, encoding), got in samples.items():
        wire, decoded = statistics.median(got["wire"]), statistics.median(got["decoded"])
        table.add_row(name, encoding, f"{wire / 1000:,.1f}", f"{decoded / 1000:,.1f}", f"{wire / decoded:.3f}",
                      f"{statistics.median(got['wall']) * 1000:,.1f}", f"{_p90(got['wall']) * 1000:,.1f}",
                      f"{statistics.fmean(got['cpu']) * 1000:,.1f}",
                      f"{got['compress'][0] * 1000:,.1f}" if encoding == "gzip" else "-", f"{wire * 8 / 100e6 * 1000:,.1f}",
                      f"{wire * 8 / 20e6 * 1000:,.1f}")
    table.caption = (f"{load_before} before; {load_average()} after. Server CPU: the API process only, in clock "
                     f"ticks of {1000 / os.sysconf('SC_CLK_TCK'):.0f} ms; the link times are computed from the "
                     "bytes.")
    Console(width=160).print(table)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=15, help="requests of each answer in each encoding (default 15)")
    add_markdown_option(ap)
    args = ap.parse_args(argv)
    samples, load_before = measure(args.repeats)
    with markdown_report(args.markdown, "API JSON answers with and without gzip"):
        report(samples, load_before, args.repeats)


if __name__ == "__main__":
    main()

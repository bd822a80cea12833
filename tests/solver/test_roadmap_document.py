"""``roadmap.json`` keeps its keys and values now that the roadmap's records are typed (issue #30 item 2).

The documents in ``tests/data/roadmap/`` were written by the roadmap before its periods, builds, designs,
survivability, starting risk, bound and ledger became typed records (commit c963c2e, timings blanked). The typed
summary, dumped only at the edge, must give the same document: the same keys in the same order and the same
values (floats to 1e-9 relative, solver round-off), on the *lead* toy (a candidate route with a lead time, the
starting risk, a restricted design bound), the same with a budget too small for the survivable design and no global
bound (the intact-state fallback, a shortfall, a skipped bound) and the *replica* toy (GPU blocks, a dataset replica,
training jobs).

One key was added to them since, by hand: ``bound.added_states`` (the states the period MIPs added; none here).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from backbone.model import Network
from tests.nets import lead_toy
from tests.solver.test_roadmap import QUIET
from tests.solver.test_roadmap_jobs import replica_toy

DATA = Path(__file__).resolve().parents[1] / "data" / "roadmap"
TIMING = {"seconds", "budget_s", "time_budget", "placement_seconds"}
"""Keys whose values are wall-clock seconds: their place in the document is compared, their value is not."""


def _blank(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: (None if k in TIMING else _blank(v)) for k, v in x.items()}
    if isinstance(x, list):
        return [_blank(v) for v in x]
    return x


def _differences(want: Any, got: Any, where: str = "") -> list[str]:
    """Where ``got`` differs from ``want``: key order, types and values (floats to 1e-9 relative)."""
    if isinstance(want, dict) and isinstance(got, dict):
        if list(want) != list(got):
            return [f"{where}: keys {list(want)} != {list(got)}"]
        return [d for k in want for d in _differences(want[k], got[k], f"{where}.{k}")]
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{where}: {len(want)} items != {len(got)}"]
        return [d for i, (a, b) in enumerate(zip(want, got, strict=True)) for d in _differences(a, b, f"{where}[{i}]")]
    if isinstance(want, float) and isinstance(got, float) and not isinstance(want, bool):
        return [] if math.isclose(want, got, rel_tol=1e-9, abs_tol=1e-6) else [f"{where}: {want!r} != {got!r}"]
    return [] if type(want) is type(got) and want == got else [f"{where}: {want!r} != {got!r}"]


@pytest.mark.parametrize(("name", "net", "options"), [
    ("lead_toy", lead_toy, {**QUIET, "verify": True}),
    ("lead_toy_budget", lead_toy, {**QUIET, "bound_time_limit_s": 0, "budget_usd_per_period": 3e6, "verify": True}),
    ("replica_toy", replica_toy, {**QUIET, "start": "2027Q1", "gpu_lead_quarters": 0,
                                  "place": {"scenario_jobs": True}, "verify": True}),
])
def test_the_typed_summary_dumps_the_document_the_dict_records_made(name: str, net: Any, options: dict[str, Any],
                                                                     tmp_path: Path) -> None:
    from backbone.solver.tasks import run_task

    network: Network = net()
    out = tmp_path if name != "lead_toy_budget" else None  # a run without an output folder: the same document
    res = run_task("roadmap", network, options, out)
    want = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    got = _blank(json.loads(json.dumps(res.document())))
    assert _differences(want, got) == []
    if out is None:
        return
    on_disk = _blank(json.loads((tmp_path / "roadmap.json").read_text(encoding="utf-8")))
    assert _differences({"kind": "roadmap", **want}, {k: v for k, v in on_disk.items() if k != "files"}) == []

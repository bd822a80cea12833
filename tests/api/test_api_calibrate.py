"""The ``calibrate`` job kind: through the planning service and the REST API, defaults included."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from apitest_helpers import FINAL, auth, wait_for
from fastapi.testclient import TestClient

from backbone.calibrate import apply_latency_parameters
from backbone.io import network_from_dict, network_to_dict
from backbone.model import Network
from backbone.route import shortest_route
from backbone.solver.tasks import run_task
from tests.nets import small_world_network

TRUE = {"terrestrial_latency_factor": 1.3, "submarine_latency_factor": 1.05, "equipment_delay_ms": 0.6}


def _pairs() -> list[dict[str, object]]:
    net = small_world_network()
    truth = apply_latency_parameters(net, TRUE)
    return [{"from": a, "to": b, "rtt_ms": round(shortest_route(truth, a, b).rtt_ms, 3), "source": "synthetic"}
            for a, b in itertools.combinations(net.sites.index, 2)]


@pytest.mark.slow
def test_calibrate_task_defaults_on_the_shipped_scenario(shipped: Network, tmp_path: Path) -> None:
    result = run_task("calibrate", shipped, {}, tmp_path)
    assert result.summary.pairs >= 100 and result.summary.errors.after["median_abs_pct"] <= 10
    assert set(result.files) == {"calibrated_scenario.json", "calibration_pairs.csv", "calibrate.json"}
    again = network_from_dict(json.loads((tmp_path / "calibrated_scenario.json").read_text()))
    assert again.meta["calibration"]["parameters"] == result.summary.parameters


@pytest.mark.slow
def test_calibrate_job_through_the_api(client: TestClient, tokens: dict[str, str]) -> None:
    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=network_to_dict(small_world_network()), headers=auth(tok)).json()["id"]
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "calibrate", "options": {"measured": _pairs()}},
                    headers=auth(tok))
    assert r.status_code == 202, r.text
    jid = r.json()["id"]
    job = wait_for(lambda: client.get(f"/v1/jobs/{jid}", headers=auth(tok)).json(),
                   lambda j: j["status"] in FINAL, timeout_s=120)
    assert job["status"] == "succeeded", job
    res = client.get(f"/v1/jobs/{jid}/result", headers=auth(tok)).json()
    for name, value in TRUE.items():
        assert res["parameters"][name] == pytest.approx(value, rel=2e-3, abs=2e-3), name
    assert res["errors"]["after"]["worst_abs_pct"] < 0.5
    doc = client.get(f"/v1/jobs/{jid}/files/calibrated_scenario.json", headers=auth(tok)).json()
    new = client.post("/v1/scenarios", json=doc, headers=auth(tok))  # the calibrated scenario uploads as is
    assert new.status_code == 201, new.text


@pytest.mark.parametrize(("options", "field"), [
    ({"measured": [{"from": "ashburn", "to": "london", "rtt_ms": -1}]}, "rtt_ms"),
    ({"loss": "l3"}, "loss"),
    ({"fit": ["group_index"]}, "fit"),
    ({"measured_file": "/etc/passwd"}, "measured_file"),
])
def test_bad_calibrate_options_are_422(client: TestClient, tokens: dict[str, str], options: dict[str, object],
                                       field: str) -> None:
    tok = tokens["planner"]
    sid = client.post("/v1/scenarios", json=network_to_dict(small_world_network()), headers=auth(tok)).json()["id"]
    r = client.post(f"/v1/scenarios/{sid}/jobs", json={"kind": "calibrate", "options": options}, headers=auth(tok))
    assert r.status_code == 422, r.text
    assert field in r.text


def test_calibrate_options_fit_default_is_every_parameter() -> None:
    from backbone.calibrate import FITTED_PARAMETERS
    from backbone.solver.tasks.calibrate import CalibrateOptions

    assert tuple(CalibrateOptions().fit) == FITTED_PARAMETERS

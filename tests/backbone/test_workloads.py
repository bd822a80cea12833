"""The workload flows (issue #29 item 2), each against figures computed by hand from its formula."""

from __future__ import annotations

import numpy as np
import pytest

from backbone.workloads import (
    checkpoint_replication_gbps,
    dataset_read_gbps,
    dataset_replication_gbps,
    gradient_sync_gbps,
)

LLAMA3_405B = 405e9  # parameters (Llama 3 paper)


def test_data_parallel_all_reduce_between_sites() -> None:
    # 405e9 BF16 parameters = 810e9 bytes; two sites: 2 * 810e9 * (1 - 1/2) = 810e9 bytes a step; over 10 s:
    # 810e9 * 8 / 10 = 648e9 bit/s = 648 Gbps per site
    assert gradient_sync_gbps(LLAMA3_405B, 2, 10.0, 2) == pytest.approx(648.0)
    # four sites: 2 * 810e9 * 3/4 = 1.215e12 bytes a step -> 972 Gbps
    assert gradient_sync_gbps(LLAMA3_405B, 2, 10.0, 4) == pytest.approx(972.0)
    assert gradient_sync_gbps(LLAMA3_405B, 2, 10.0, 1) == 0.0  # one site: nothing crosses the WAN


def test_diloco_synchronises_every_h_steps() -> None:
    # the data-parallel volume once every 500 inner steps: 648 / 500 = 1.296 Gbps
    assert gradient_sync_gbps(LLAMA3_405B, 2, 10.0, 2, "diloco", inner_steps=500) == pytest.approx(1.296)
    assert gradient_sync_gbps(LLAMA3_405B, 2, 10.0, 2, "diloco", inner_steps=1) == pytest.approx(648.0)


def test_streaming_diloco_sends_one_fragment_at_a_time() -> None:
    # H = 100, P = 4 fragments of 202.5e9 bytes; default overlap H / P = 25 steps = 250 s:
    # 2 * 202.5e9 * 1/2 * 8 / 250 = 6.48 Gbps, DiLoCo's average rate (648 / 100)
    base = gradient_sync_gbps(LLAMA3_405B, 2, 10.0, 2, "streaming-diloco", inner_steps=100, fragments=4)
    assert base == pytest.approx(6.48)
    assert base == pytest.approx(gradient_sync_gbps(LLAMA3_405B, 2, 10.0, 2, "diloco", inner_steps=100))
    # 4-bit outer gradients instead of 16-bit: a quarter, 1.62 Gbps
    assert gradient_sync_gbps(LLAMA3_405B, 2, 10.0, 2, "streaming-diloco", inner_steps=100, fragments=4,
                              compression_bits=4) == pytest.approx(1.62)
    # each fragment within one inner step (tau = 1): a burst of 202.5e9 * 8 / 10 = 162 Gbps
    assert gradient_sync_gbps(LLAMA3_405B, 2, 10.0, 2, "streaming-diloco", inner_steps=100, fragments=4,
                              overlap_steps=1) == pytest.approx(162.0)


def test_the_flows_broadcast_over_arrays() -> None:
    got = gradient_sync_gbps(LLAMA3_405B, 2, 10.0, np.array([1, 2, 4]))
    np.testing.assert_allclose(got, [0.0, 648.0, 972.0])


def test_dataset_reads_only_from_a_remote_replica() -> None:
    # 20,000 GPUs reading 0.5 Gbps per 1,000: 10 Gbps, none when a replica is on site
    np.testing.assert_allclose(dataset_read_gbps([20_000, 20_000], 0.5, [False, True]), [10.0, 0.0])


def test_checkpoint_replication() -> None:
    # Llama 3 405B with BF16 weights and FP32 master weights and Adam moments: 405e9 * (2 + 12) = 5.67e12 bytes,
    # every 30 minutes: 5.67e12 * 8 / 1,800 = 25.2 Gbps to each replica site
    assert checkpoint_replication_gbps(LLAMA3_405B * 14, 1_800.0) == pytest.approx(25.2)


def test_dataset_replication_of_growth() -> None:
    # 10 PB a year: 10e15 * 8 / 31,557,600 s = 2.535 Gbps to each other replica
    assert dataset_replication_gbps(10.0) == pytest.approx(8e16 / 31_557_600 / 1e9)
    assert dataset_replication_gbps(10.0) == pytest.approx(2.535, abs=1e-3)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: gradient_sync_gbps(1e9, 2, 1.0, 2, "ring"), "unknown synchronisation method"),  # type: ignore[arg-type]
    (lambda: gradient_sync_gbps(1e9, 2, 0.0, 2), "step_time_s"),
    (lambda: gradient_sync_gbps(1e9, 2, 1.0, 0), "sites"),
    (lambda: gradient_sync_gbps(1e9, 2, 1.0, 2, "diloco", inner_steps=0), "inner_steps"),
    (lambda: checkpoint_replication_gbps(1e12, 0.0), "interval_s"),
    (lambda: dataset_read_gbps(-1, 0.5), "negative"),
    (lambda: dataset_replication_gbps(-1.0), "negative"),
])
def test_bad_figures_are_refused_by_name(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]

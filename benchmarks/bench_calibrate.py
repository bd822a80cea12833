"""Latency calibration: fit time and accuracy on the shipped scenario, by measurement-set size.

Fits the shipped scenario's topology (uncalibrated: fibre floor + 0.05 ms per link) to the shipped
public RTT set (``data/calibration/public_rtt.csv``) and to random subsets of it, and prints, per
size, the fit time (including the leave-one-out refits), the fitted parameters and the median
error before, after and leave-one-out; then the loss functions side by side on the full set.

Usage::

    python benchmarks/bench_calibrate.py [--sizes 50,100,200,436] [--seed 1]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from backbone.calibrate import LOSSES, calibrate, load_measured
from backbone.datasets.build_global import build_topology
from backbone.paths import public_rtt_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,100,200,0", help="pair counts (0: all)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    net = build_topology()
    measured = load_measured(public_rtt_path())
    rng = np.random.default_rng(args.seed)
    print(f"{'pairs':>6} {'seconds':>8} {'terr.':>7} {'sub.':>7} {'ms/link':>8} {'before %':>9} {'after %':>8} "
          f"{'LOO %':>7} {'rounds':>6}")
    for size in (int(s) for s in args.sizes.split(",")):
        sub = measured if size <= 0 or size >= len(measured) else measured.iloc[
            np.sort(rng.choice(len(measured), size, replace=False))]
        t0 = time.perf_counter()
        r = calibrate(net, sub)
        dt = time.perf_counter() - t0
        p = r.parameters
        print(f"{len(sub):>6} {dt:>8.2f} {p['terrestrial_latency_factor']:>7.3f} {p['submarine_latency_factor']:>7.3f} "
              f"{p['equipment_delay_ms']:>8.3f} {r.before['median_abs_pct']:>9.1f} {r.after['median_abs_pct']:>8.1f} "
              f"{r.leave_one_out['median_abs_pct']:>7.1f} {r.iterations:>6}")
    print()
    print(f"{'loss':>8} {'terr.':>7} {'sub.':>7} {'ms/link':>8} {'after %':>8} {'worst %':>8} {'LOO %':>7}")
    for loss in LOSSES:
        r = calibrate(net, measured, loss=loss)
        p = r.parameters
        print(f"{loss:>8} {p['terrestrial_latency_factor']:>7.3f} {p['submarine_latency_factor']:>7.3f} "
              f"{p['equipment_delay_ms']:>8.3f} {r.after['median_abs_pct']:>8.1f} {r.after['worst_abs_pct']:>8.1f} "
              f"{r.leave_one_out['median_abs_pct']:>7.1f}")


if __name__ == "__main__":
    main()

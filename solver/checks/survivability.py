"""Independent check of a survivable plan: re-sweep the planned network and confirm every state is carried.

The check reads only the planned network (``scenario_after``: loaded from its folder when given a
path) and the list of excused states. Every state of the failure kind is applied to the network
and re-routed from scratch -- fresh candidate paths on the failed topology (no reuse of the intact
network's, unlike the sweep), min-MLU and, when that overloads a link, max-throughput at 100 %
utilisation, by the one definition of :mod:`backbone.solver.impact` -- and its unmet traffic is compared with
the intact network's over the same demands.
A state that is not excused and leaves more unmet than the intact network (beyond LP round-off)
is a violation.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from backbone.deprecation import renamed
from backbone.model import Network
from backbone.solver.checks import CheckReport, Violation
from backbone.solver.progress import ProgressFn, no_progress

__all__ = ["check_survivability"]


def _unmet(net: Network, k_paths: int, backend: str, time_limit_s: float) -> tuple[pd.Series, float]:
    """The state's unmet traffic by the one definition (:func:`backbone.solver.impact.assess_state`), routed from
    scratch: fresh candidate paths, no routing reused from the sweep. NaN where the shortfall is not measured."""
    from backbone.solver.impact import assess_state

    state = assess_state(net, k_paths, backend, time_limit_s)
    return state.unmet_gbps.astype(float), state.mlu


def check_survivability(network: Network | str | Path, survive: str | None = None, excused: Iterable[str] = (),
                        k_paths: int = 4, backend: str = "highs", time_limit_s: float = 60.0,
                        progress: ProgressFn | None = None, *, failure_kind: str | None = None,
                        k: int | None = None) -> CheckReport:
    """Re-sweep every ``survive`` failure state of the planned network; violations name the states not carried.

    Parameters
    ----------
    network
        The planned network, or the path of its canonical scenario folder (``scenario_after``).
    survive
        The failure kind: ``link``, ``srlg`` or ``site`` (required).
    excused
        Scenario ids the plan declares not survivable (with a reason); they are not violations.
    k_paths
        Candidate paths per demand.
    failure_kind, k
        Deprecated spellings of ``survive`` and ``k_paths`` (they warn with :class:`DeprecationWarning`).

    Returns
    -------
    CheckReport
        ``ok`` when every non-excused state leaves no more traffic unmet than the intact network.
    """
    from backbone.solver.failures import enumerate_scenarios

    survive = renamed("check_survivability", "failure_kind", failure_kind, "survive", survive, None)
    k_paths = int(renamed("check_survivability", "k", k, "k_paths", k_paths, 4))
    if survive is None:
        raise TypeError("check_survivability: missing the failure kind (survive=)")
    progress = progress or no_progress
    if not isinstance(network, Network):
        from backbone.io import load_scenario

        network = load_scenario(str(network))
    net = network
    report = CheckReport("survivability")
    skip = set(excused)
    base, _ = _unmet(net, k_paths, backend, time_limit_s)
    tol = max(0.01, 1e-6 * float(net.demands["demand_gbps"].sum()))
    scenarios = enumerate_scenarios(net, survive)  # type: ignore[arg-type]
    checked = 0
    for i, sc in enumerate(scenarios):
        progress(i / max(1, len(scenarios)), f"checking {sc.id}")
        if sc.id in skip:
            continue
        state = sc.apply(net)
        unmet, mlu = _unmet(state, k_paths, backend, time_limit_s)
        extra = float(unmet.sum() - base.reindex(unmet.index).fillna(0.0).sum())
        checked += 1
        if bool(unmet.isna().any()):  # overloaded at a scale where the shortfall is not measured
            report.add(Violation("state_carried", "scenarios", sc.id,
                                 f"overloaded (needs {100 * mlu:.1f} %) and its shortfall is not measured at this "
                                 "scale: not confirmed carried"))
        elif extra > tol:
            report.add(Violation("state_carried", "scenarios", sc.id,
                                 f"{extra:,.1f} Gbps cannot be carried at <= 100 % utilisation (needs "
                                 f"{100 * mlu:.1f} %)", value=extra, limit=tol))
    report.checked.append(f"{checked} of {len(scenarios)} {survive} failure states carried at <= 100 % "
                          f"utilisation ({len(scenarios) - checked} excused)")
    progress(1.0, "checked")
    return report

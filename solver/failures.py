"""Failure and what-if analysis: sweep failure scenarios, re-route each and measure its impact.

A scenario fails links, SRLGs or sites, or derates them to a fraction of capacity (degraded,
not broken). Each scenario is re-routed on the failed topology -- candidate paths regenerated
for it -- and assessed exactly as the intact baseline is (:func:`backbone.solver.impact.assess_state`:
min-MLU utilisation, and the traffic that cannot be carried at <= 100 % utilisation), then compared
with it (:func:`backbone.solver.impact.failure_impact`): unmet traffic per class, latency-SLO
violations and traffic lost with failed sites, each apart, their sum ``impact_gbps`` (the ranking),
the utilisation the traffic needs (``mlu``; above 1.0 it is overload, never hidden), latency
inflation per demand (p50, p99, worst) and whether the state ``survived``.

Execution
---------
Scenarios run in batches on a local process pool (``engine="local"``) or on a Dask distributed
cluster (``engine="dask"``; with no scheduler address a local cluster is started). A worker
keeps a :class:`SweepContext` per network -- the intact network, its baseline result and its
cached candidate paths -- and per scenario only re-derives what the failure changes: candidate
paths are those of the intact network minus the ones crossing failed links, with only the
pairs that lost a path searched again on the failed topology
(:func:`backbone.solver.paths.paths_after_failure`). Results do not depend on the engine or the batch
size: every scenario is evaluated by the same deterministic function.
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from backbone.errors import Problem, SolverError, ValidationError
from backbone.model import Network
from backbone.solver.backends import BackendName
from backbone.solver.impact import (
    StateAssessment,
    assess_state,
    failure_impact,
    impact_key,
    survive_tolerance_gbps,
)
from backbone.solver.processes import capped_workers, die_with_parent, spawn_unsafe_reason
from backbone.solver.progress import ProgressFn, no_progress

logger = logging.getLogger(__name__)

FailureKind = Literal["link", "srlg", "site", "srlg-pairs", "list"]

DEFAULT_MAX_SCENARIOS = 5000
"""Bound on the number of scenarios (``srlg-pairs`` grows quadratically)."""


# ---------------------------------------------------------------------- scenarios
@dataclass(frozen=True)
class FailureScenario:
    """One what-if: elements down or derated.

    Attributes
    ----------
    id
        Stable identifier, e.g. ``srlg:red-sea`` or ``srlg:a+srlg:b``.
    kind
        ``link``, ``srlg``, ``site``, ``srlg-pairs`` or ``list``.
    failed
        The named elements (link, SRLG or site ids) as the planner gave them.
    links
        Link ids cut (or derated).
    sites
        Site ids lost (their links and demands go with them).
    derate
        When set, ``links`` keep this fraction of their capacity instead of failing.
    """

    id: str
    kind: str
    failed: tuple[str, ...]
    links: tuple[str, ...] = ()
    sites: tuple[str, ...] = ()
    derate: float | None = None

    def apply(self, net: Network) -> Network:
        """The network as this scenario leaves it."""
        if self.derate is not None:
            return net.derate_links(self.links, self.derate) if self.links else net
        out = net.fail_sites(self.sites) if self.sites else net
        links = [lk for lk in self.links if lk in out.links.index]
        return out.fail_links(links) if links else out


def enumerate_scenarios(net: Network, kind: FailureKind, derate: float | None = None,
                        scenarios: Sequence[dict[str, Any]] | None = None,
                        max_scenarios: int = DEFAULT_MAX_SCENARIOS) -> list[FailureScenario]:
    """The failure set of ``kind``.

    Parameters
    ----------
    kind
        ``link`` (every link), ``srlg`` (every SRLG), ``site`` (every site), ``srlg-pairs``
        (every pair of SRLGs), ``list`` (the planner's ``scenarios``).
    derate
        Derate the elements to this fraction of capacity instead of failing them (not for sites).
    scenarios
        For ``list``: records ``{"id": ..., "links": [...], "srlgs": [...], "sites": [...],
        "derate": f}`` (any of the element lists).
    max_scenarios
        Refuse sweeps larger than this (a clear error, not hours of work).

    Raises
    ------
    ValidationError
        Unknown element ids, a bad derate, or too many scenarios.
    """
    if derate is not None and not 0.0 < derate < 1.0:
        raise ValidationError(Problem(f"derate must be in (0, 1), got {derate}", table="options", field="derate"))
    if derate is not None and kind == "site":
        raise ValidationError(Problem("sites cannot be derated; derate links or SRLGs", table="options",
                                      field="derate"))
    out: list[FailureScenario] = []
    tag = "derate" if derate is not None else None
    if kind == "link":
        for lk in net.links.index:
            out.append(FailureScenario(_sid(tag, "link", lk), kind, (lk,), (lk,), derate=derate))
    elif kind == "srlg":
        for s in net.srlgs.index:
            out.append(FailureScenario(_sid(tag, "srlg", s), kind, (s,), tuple(net.srlg_links([s])), derate=derate))
    elif kind == "site":
        for s in net.sites.index:
            out.append(FailureScenario(f"site:{s}", kind, (s,), sites=(s,)))
    elif kind == "srlg-pairs":
        n = len(net.srlgs)
        total = n * (n - 1) // 2
        if total > max_scenarios:
            raise ValidationError(Problem(
                f"{total} SRLG pairs exceed the bound of {max_scenarios} scenarios; raise max_scenarios",
                table="options", field="max_scenarios"))
        for a, b in itertools.combinations(net.srlgs.index, 2):
            out.append(FailureScenario(_sid(tag, "srlg", a) + "+" + f"srlg:{b}", kind, (a, b),
                                       tuple(net.srlg_links([a, b])), derate=derate))
    elif kind == "list":
        out = _list_scenarios(net, scenarios or [], derate)
    else:
        raise ValidationError(Problem(f"unknown failure kind {kind!r}", table="options", field="kind"))
    if len(out) > max_scenarios:
        raise ValidationError(Problem(f"{len(out)} scenarios exceed the bound of {max_scenarios}",
                                      table="options", field="max_scenarios"))
    return out


def _sid(tag: str | None, kind: str, element: str) -> str:
    return f"{tag + ':' if tag else ''}{kind}:{element}"


def _list_scenarios(net: Network, records: Sequence[dict[str, Any]], derate: float | None) -> list[FailureScenario]:
    problems: list[Problem] = []
    out: list[FailureScenario] = []
    if not records:
        problems.append(Problem("kind 'list' needs scenarios", table="options", field="scenarios"))
    for i, rec in enumerate(records):
        rid = str(rec.get("id") or f"scenario-{i + 1}")
        unknown_keys = set(rec) - {"id", "links", "srlgs", "sites", "derate"}
        problems += [Problem(f"unknown key {k!r}", table="scenarios", record=rid, field=k) for k in sorted(unknown_keys)]
        links = [str(x) for x in rec.get("links") or []]
        srlgs = [str(x) for x in rec.get("srlgs") or []]
        sites = [str(x) for x in rec.get("sites") or []]
        for table, ids, index in (("links", links, net.links.index), ("srlgs", srlgs, net.srlgs.index),
                                  ("sites", sites, net.sites.index)):
            problems += [Problem(f"unknown {table[:-1]} {x!r}", table="scenarios", record=rid, field=table)
                         for x in ids if x not in index]
        f = rec.get("derate", derate)
        if f is not None:
            try:
                f = float(f)
            except (TypeError, ValueError):
                problems.append(Problem(f"derate must be a number, got {f!r}", table="scenarios", record=rid,
                                        field="derate"))
                continue
            if not 0.0 < f < 1.0:
                problems.append(Problem(f"derate must be in (0, 1), got {f}", table="scenarios", record=rid,
                                        field="derate"))
            if sites:
                problems.append(Problem("sites cannot be derated", table="scenarios", record=rid, field="derate"))
        if not (links or srlgs or sites):
            problems.append(Problem("scenario fails nothing", table="scenarios", record=rid))
        if problems:
            continue
        all_links = list(dict.fromkeys([*links, *net.srlg_links(srlgs)]))
        out.append(FailureScenario(rid, "list", tuple([*links, *srlgs, *sites]), tuple(all_links), tuple(sites),
                                   derate=f))
    if problems:
        raise ValidationError(problems)
    return out


def load_scenario_list(path: str | Path) -> list[dict[str, Any]]:
    """Read a planner's scenario list: YAML/JSON (a list of records, or ``{"scenarios": [...]}``).

    Raises
    ------
    ValidationError
        When the file is unreadable or not a list of records.
    """
    import json

    import yaml

    p = Path(path)
    if not p.exists():
        raise ValidationError(Problem("file not found", file=str(p)))
    try:
        text = p.read_text(encoding="utf-8")
        doc = json.loads(text) if p.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ValidationError(Problem(f"not valid {p.suffix.lstrip('.').upper() or 'YAML'}: {exc}".splitlines()[0],
                                      file=str(p))) from None
    if isinstance(doc, dict):
        doc = doc.get("scenarios")
    if not isinstance(doc, list) or not all(isinstance(r, dict) for r in doc):
        raise ValidationError(Problem("expected a list of scenario records", file=str(p)))
    return doc


# ---------------------------------------------------------------------- options
class FailureOptions(BaseModel):
    """Options of the ``failures`` task (CLI flags and API body use the same names)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    kind: FailureKind = Field("srlg", description="Failure set: link, srlg, site, srlg-pairs or list.")
    derate: float | None = Field(None, gt=0, lt=1, description="Derate to this fraction instead of failing.")
    scenarios: list[dict[str, Any]] | None = Field(None, description="For kind=list: scenario records.")
    k_paths: int = Field(4, ge=1, le=32, validation_alias=AliasChoices("k_paths", "paths"),
                         description="Candidate paths per demand; also accepted as 'paths'.")
    backend: BackendName = Field("highs", description="Solver backend.")
    time_limit_s: float = Field(60.0, gt=0, le=86_400, validation_alias=AliasChoices("time_limit_s", "time_limit"),
                                description="Time limit per scenario solve, seconds.")
    engine: Literal["local", "dask", "serial"] = Field("local", description="Where scenarios run.")
    workers: int | None = Field(None, ge=1, le=256, description="Worker processes (default: CPU count; the API server caps it).")
    scheduler: str | None = Field(None, description="Dask scheduler address (engine=dask).")
    batch_size: int | None = Field(None, ge=1, description="Scenarios per task (default: balanced).")
    max_scenarios: int = Field(DEFAULT_MAX_SCENARIOS, ge=1, description="Refuse larger sweeps.")
    reuse: bool = Field(True, description="Reuse the intact network's candidate paths across scenarios.")
    verify: bool = Field(False, description="Run the independent TE checker on every scenario's result.")
    shortfall: bool = Field(True, description="Measure the shortfall of overloaded states per class (max-throughput "
                                              "at 100 %); false only flags them (unmet null, not survived).")


# ---------------------------------------------------------------------- evaluation
@dataclass
class SweepContext:
    """What a worker keeps per network: the intact network and its baseline (assessed once)."""

    net: Network
    options: FailureOptions
    baseline: StateAssessment
    tolerance_gbps: float

    @classmethod
    def build(cls, net: Network, options: FailureOptions) -> SweepContext:
        """Assess the intact network once (this also warms the candidate-path cache)."""
        return cls(net, options, _assess(net, options, None, shortfall=True), survive_tolerance_gbps(net))

    @property
    def baseline_latency_ms(self) -> pd.Series:
        """Traffic-weighted one-way latency per demand in the intact network."""
        return self.baseline.routing.demands["latency_ms"].astype(float)

    def baseline_record(self) -> dict[str, Any]:
        """The baseline's figures (the same definitions as every scenario's)."""
        b = self.baseline
        return {**b.summary(), "carried_gbps": float(b.routing.demands["demand_gbps"].sum() - b.unmet_gbps.sum()),
                "link_utilisation": {str(k): float(v) for k, v in b.link_utilisation.items()}}


def _assess(net: Network, options: FailureOptions, scenario: FailureScenario | None,
            intact: Network | None = None, shortfall: bool | None = None) -> StateAssessment:
    provider = None
    if intact is not None and options.reuse and scenario is not None and scenario.derate is None and not scenario.sites:
        provider = _failure_path_provider(intact, scenario.links)
    try:
        return assess_state(net, options.k_paths, options.backend, options.time_limit_s, path_provider=provider,
                            shortfall=options.shortfall if shortfall is None else shortfall)
    except SolverError as exc:  # e.g. a busy machine: one more try with more time
        logger.warning("scenario %s: %s; solving again with %g s", scenario.id if scenario else "intact", exc,
                       FAILURE_RETRY_FACTOR * options.time_limit_s)
        return assess_state(net, options.k_paths, options.backend, FAILURE_RETRY_FACTOR * options.time_limit_s,
                            path_provider=provider, shortfall=options.shortfall if shortfall is None else shortfall)


FAILURE_RETRY_FACTOR = 4.0
"""A scenario whose solve runs out of time is solved once more with this multiple of ``time_limit_s``."""


def _failure_path_provider(intact: Network, failed_links: Sequence[str]) -> Callable[..., Any]:
    """Candidate paths on the failed topology from the intact network's cached ones.

    :func:`backbone.solver.paths.paths_after_failure` keeps the intact link index; the failed network's
    index drops the failed links, so the incidences are re-indexed onto it (failed columns are
    empty for every surviving path).
    """
    from backbone.solver.paths import paths_after_failure

    def provider(net: Network, pairs: pd.DataFrame, k: int, max_latency_ms: Any, disjoint: bool) -> Any:
        from backbone.solver.paths import candidate_paths

        if disjoint:
            return candidate_paths(net, pairs, k=k, max_latency_ms=max_latency_ms, disjoint=True)
        ps = paths_after_failure(intact, list(failed_links), pairs, k=k, max_latency_ms=max_latency_ms)
        return ps.reindex_links(net.links.index)

    return provider


def evaluate_scenario(ctx: SweepContext, scenario: FailureScenario) -> dict[str, Any]:
    """Re-route one scenario and measure its impact against the baseline.

    Returns a plain record: ``scenario``, ``kind``, ``failed``, ``links_down``, ``derate``,
    ``status``, the impact figures of :func:`backbone.solver.impact.failure_impact` (``impact_gbps``,
    ``unmet_gbps`` beyond the baseline's and by class, ``slo_violation_gbps``/``slo_violations``,
    ``lost_gbps``, ``mlu``, ``overloaded``, ``survived``), ``carried_gbps``,
    ``p50/p99/worst_latency_inflation_ms``, ``link_utilisation`` (dict), ``seconds``.
    """
    t0 = time.perf_counter()
    failed_net = scenario.apply(ctx.net)
    lost = ctx.net.demands.index.difference(failed_net.demands.index)
    state = _assess(failed_net, ctx.options, scenario, intact=ctx.net)
    res = state.routing
    d = res.demands
    if ctx.options.verify:
        from backbone.solver.checks.te import check_te

        report = check_te(failed_net, res)
        if not report.ok:
            from backbone.errors import VerificationError

            raise VerificationError(f"scenario {scenario.id}: independent check failed: {report}")
    lost_gbps = float(ctx.net.demands.loc[lost, "demand_gbps"].sum()) if len(lost) else 0.0
    impact = failure_impact(ctx.baseline, state, lost_gbps, ctx.tolerance_gbps)
    base_lat = ctx.baseline_latency_ms.reindex(d.index)
    both = d["carried_gbps"].to_numpy(float) > 1e-9
    infl = (d["latency_ms"] - base_lat).to_numpy(float)[both & base_lat.notna().to_numpy()]
    infl = infl[np.isfinite(infl)]
    util = state.link_utilisation
    return {
        "scenario": scenario.id,
        "kind": scenario.kind,
        "failed": list(scenario.failed),
        "links_down": len(scenario.links) if scenario.derate is None else 0,
        "links_derated": len(scenario.links) if scenario.derate is not None else 0,
        "sites_down": len(scenario.sites),
        "derate": scenario.derate,
        "status": state.status,
        **impact,
        "carried_gbps": float(d["demand_gbps"].sum() - state.unmet_gbps.sum()),
        "p50_latency_inflation_ms": _pct(infl, 50),
        "p99_latency_inflation_ms": _pct(infl, 99),
        "worst_latency_inflation_ms": float(infl.max()) if infl.size else 0.0,
        "link_utilisation": {str(k): round(float(v), 6) for k, v in util.items()},
        "seconds": time.perf_counter() - t0,
    }


def _pct(x: np.ndarray, q: float) -> float:
    return float(np.percentile(x, q)) if x.size else 0.0


# ---------------------------------------------------------------------- engines
_WORKER_CONTEXTS: dict[str, SweepContext] = {}
"""Per-process contexts, keyed by (network fingerprint, options): built once per worker."""


def _context_key(net: Network, options: FailureOptions) -> str:
    return net.fingerprint() + ":" + options.model_dump_json(exclude={"engine", "workers", "scheduler", "batch_size"})


def _worker_context(net: Network, options: FailureOptions) -> SweepContext:
    key = _context_key(net, options)
    ctx = _WORKER_CONTEXTS.get(key)
    if ctx is None:
        _WORKER_CONTEXTS.clear()
        ctx = _WORKER_CONTEXTS[key] = SweepContext.build(net, options)
    return ctx


def _run_batch(net: Network, options: FailureOptions, batch: list[FailureScenario],
               ctx: SweepContext | None = None) -> list[dict[str, Any]]:
    if ctx is not None:  # the parent's baseline: adopt it instead of solving it again
        key = _context_key(net, options)
        if key not in _WORKER_CONTEXTS:
            _WORKER_CONTEXTS.clear()
            _WORKER_CONTEXTS[key] = ctx
    ctx = _worker_context(net, options)
    return [evaluate_scenario(ctx, s) for s in batch]


_POOL_NET: Network | None = None
_POOL_OPTIONS: FailureOptions | None = None


def _pool_init(net: Network, options: FailureOptions, ctx: SweepContext | None = None) -> None:
    global _POOL_NET, _POOL_OPTIONS
    die_with_parent()  # a pool process never outlives the sweep's process
    _POOL_NET, _POOL_OPTIONS = net, options
    _run_batch(net, options, [], ctx)  # adopt (or build) the context once per worker


def _pool_batch(batch: list[FailureScenario]) -> list[dict[str, Any]]:
    assert _POOL_NET is not None and _POOL_OPTIONS is not None
    return _run_batch(_POOL_NET, _POOL_OPTIONS, batch)


def _batches(scenarios: list[FailureScenario], workers: int, batch_size: int | None) -> list[list[FailureScenario]]:
    size = batch_size or max(1, min(16, math.ceil(len(scenarios) / max(1, workers * 4))))
    return [scenarios[i:i + size] for i in range(0, len(scenarios), size)]


def run_sweep(net: Network, scenarios: list[FailureScenario], options: FailureOptions,
              progress: ProgressFn | None = None, ctx: SweepContext | None = None) -> list[dict[str, Any]]:
    """Evaluate every scenario with the chosen engine; records in scenario order.

    ``ctx`` (the intact network's baseline, when the caller has it) is shipped to the workers so
    they do not solve the baseline again; each still computes the intact candidate paths once.

    Raises
    ------
    SolverError
        When the Dask scheduler cannot be reached or a worker fails.
    """
    progress = progress or no_progress
    if not scenarios:
        return []
    workers = capped_workers(options.workers)  # the CPU count, at most the process limit (API: per job)
    engine = options.engine
    if engine == "local" and workers == 1:
        engine = "serial"
    if engine == "local":
        import multiprocessing as mp

        if mp.current_process().daemon:  # a daemonic process (e.g. an API job worker) cannot start a pool
            logger.info("failure sweep in a daemonic process: running serially")
            engine = "serial"
        elif (reason := spawn_unsafe_reason()) is not None:  # worker processes would break or hang
            logger.warning("failure sweep runs serially: %s (use %d worker processes by running the sweep under "
                           "'if __name__ == \"__main__\":')", reason, workers)
            engine = "serial"
    batches = _batches(scenarios, workers, options.batch_size)
    done = 0
    results: dict[int, list[dict[str, Any]]] = {}
    if engine == "serial":
        for i, b in enumerate(batches):
            results[i] = _run_batch(net, options, b, ctx)
            done += len(b)
            progress(done / len(scenarios), f"{done}/{len(scenarios)} scenarios")
    elif engine == "local":
        import multiprocessing as mp

        with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"), initializer=_pool_init,
                                 initargs=(net, options, ctx)) as pool:
            futures = {pool.submit(_pool_batch, b): i for i, b in enumerate(batches)}
            for fut in as_completed(futures):
                i = futures[fut]
                results[i] = fut.result()
                done += len(batches[i])
                progress(done / len(scenarios), f"{done}/{len(scenarios)} scenarios")
    else:
        results = _run_dask(net, options, batches, workers, len(scenarios), progress, ctx)
    return [r for i in range(len(batches)) for r in results[i]]


def _run_dask(net: Network, options: FailureOptions, batches: list[list[FailureScenario]], workers: int,
              total: int, progress: ProgressFn, ctx: SweepContext | None = None) -> dict[int, list[dict[str, Any]]]:
    from backbone.errors import SolverError

    try:
        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError as exc:  # pragma: no cover - distributed is a dependency
        raise SolverError(f"engine 'dask' needs the 'distributed' package: {exc}") from None
    cluster = None
    try:
        if options.scheduler:
            client = Client(options.scheduler, timeout="10s")
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
    except (OSError, TimeoutError) as exc:
        raise SolverError(f"cannot reach Dask scheduler {options.scheduler!r}: {exc}") from None
    try:
        net_future = client.scatter(net, broadcast=True)
        ctx_future = client.scatter(ctx, broadcast=True) if ctx is not None else None
        futures = [client.submit(_run_batch, net_future, options, b, ctx_future,
                                 key=f"failures-batch-{i}-{id(batches)}", pure=False) for i, b in enumerate(batches)]
        index = {f.key: i for i, f in enumerate(futures)}
        results: dict[int, list[dict[str, Any]]] = {}
        done = 0
        for fut in dask_completed(futures):
            i = index[fut.key]
            results[i] = fut.result()
            done += len(batches[i])
            progress(done / total, f"{done}/{total} scenarios (dask)")
        return results
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


# ---------------------------------------------------------------------- reporting
@dataclass
class SweepResult:
    """Scenario records plus the tables planners read."""

    scenarios: list[dict[str, Any]]
    baseline: dict[str, Any]
    seconds: float

    def table(self) -> pd.DataFrame:
        """One row per scenario, worst impact first (impact, unmet + SLO, MLU, p99 inflation)."""
        df = scenario_table(self.scenarios)
        return worst_first(df)

    def worst_by_link(self) -> pd.DataFrame:
        """Per link: the highest utilisation over all scenarios and the scenario that drives it."""
        if not self.scenarios:
            return pd.DataFrame(columns=["link", "worst_utilisation", "worst_scenario", "baseline_utilisation"])
        util = pd.DataFrame({r["scenario"]: r["link_utilisation"] for r in self.scenarios})
        worst = util.max(axis=1)
        arg = util.fillna(-1.0).idxmax(axis=1)
        base = pd.Series(self.baseline.get("link_utilisation", {}), dtype=float)
        out = pd.DataFrame({"worst_utilisation": worst, "worst_scenario": arg,
                            "baseline_utilisation": base.reindex(util.index)})
        return out.rename_axis("link").reset_index().sort_values("worst_utilisation", ascending=False,
                                                                  kind="stable")

    def summary(self, top: int = 20) -> dict[str, Any]:
        """The JSON summary: every scenario, the worst ones, per-link worst, and the map values."""
        table = self.table()
        by_link = self.worst_by_link()
        worst = max(self.scenarios, key=impact_key) if self.scenarios else None
        records = [{k: v for k, v in r.items() if k != "link_utilisation"} for r in self.scenarios]
        survived = sum(1 for r in self.scenarios if r["survived"])
        return {
            "status": "ok",
            "scenarios_run": len(self.scenarios),
            "survived": survived,
            "not_survived": len(self.scenarios) - survived,
            "overloaded": sum(1 for r in self.scenarios if r["overloaded"]),
            "seconds": self.seconds,
            "scenarios_per_second": len(self.scenarios) / self.seconds if self.seconds > 0 else None,
            "baseline": {k: v for k, v in self.baseline.items() if k != "link_utilisation"},
            "worst": table.head(top).to_dict("records"),
            "scenarios": records,
            "worst_by_link": by_link.head(top).to_dict("records"),
            "map": {
                "link_values": {"utilisation": {str(r.link): float(r.worst_utilisation)
                                                for r in by_link.itertuples() if np.isfinite(r.worst_utilisation)}},
                "failed_links": list(worst["failed"]) if worst and worst["kind"] == "link" else [],
                "title": f"Worst utilisation over {len(self.scenarios)} failure scenarios",
            },
        }


SCENARIO_COLUMNS = ("scenario", "kind", "failed", "status", "impact_gbps", "unmet_gbps", "slo_violation_gbps",
                    "lost_gbps", "mlu", "overloaded", "survived", "slo_violations", "unmet_disconnected_gbps",
                    "unmet_gbps_total", "p50_latency_inflation_ms", "p99_latency_inflation_ms",
                    "worst_latency_inflation_ms", "seconds")
"""Columns of the per-scenario table (``failures_scenarios.csv``); ``unmet_<class>_gbps`` follow."""


def scenario_table(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Scenario records as a table (``failed`` joined by ``;``, unmet per class as columns)."""
    from backbone.schema import TRAFFIC_CLASSES

    df = pd.DataFrame([{c: r[c] for c in SCENARIO_COLUMNS} for r in records], columns=list(SCENARIO_COLUMNS))
    df["failed"] = df["failed"].map(lambda x: ";".join(x))
    for c in TRAFFIC_CLASSES:
        df[f"unmet_{c}_gbps"] = [float((r.get("unmet_by_class") or {}).get(c, 0.0)) for r in records]
    return df


def worst_first(df: pd.DataFrame) -> pd.DataFrame:
    """Sort scenario rows by impact, worst first (ties by scenario id for stability)."""
    return df.sort_values(["impact_gbps", "unmet_gbps", "mlu", "p99_latency_inflation_ms", "scenario"],
                          ascending=[False, False, False, False, True], kind="stable").reset_index(drop=True)


def sweep(net: Network, options: FailureOptions, progress: ProgressFn | None = None) -> SweepResult:
    """Enumerate the failure set, evaluate the baseline and every scenario, and collect results."""
    progress = progress or no_progress
    t0 = time.perf_counter()
    scenarios = enumerate_scenarios(net, options.kind, options.derate, options.scenarios, options.max_scenarios)
    progress(0.02, f"baseline of {len(scenarios)} scenarios")
    ctx = _worker_context(net, options)
    baseline = ctx.baseline_record()

    def sub(f: float, m: str) -> None:
        progress(0.05 + 0.93 * f, m)

    records = run_sweep(net, scenarios, options, sub, ctx)
    progress(1.0, "done")
    return SweepResult(records, baseline, time.perf_counter() - t0)

"""The backbone traffic of a scenario's training jobs and datasets, as demand rows (issue #29).

:func:`workload_demands` turns the ``training_jobs`` and ``datasets`` tables, and where each job runs, into demands
of the classes ``training-sync``, ``dataset``, ``checkpoint`` and ``replication``, each rate from one function of
:mod:`backbone.workloads`. :func:`without_workload_sites` keeps the tables valid when sites fail.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

__all__ = ["without_workload_sites"]


def without_workload_sites(datasets: pd.DataFrame, training_jobs: pd.DataFrame, site_ids: Iterable[str]
                           ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The workload tables without the given sites: replicas and pinned job sites at them are dropped; a dataset
    left without any replica is dropped too, and the jobs forget it (its data is gone with the sites).

    Returns
    -------
    tuple of pandas.DataFrame
        ``(datasets, training_jobs)``, the inputs themselves when nothing refers to the sites.
    """
    gone = set(site_ids)
    if not gone or (not len(datasets) and not len(training_jobs)):
        return datasets, training_jobs
    datasets = datasets.copy()
    datasets["home_sites"] = [tuple(s for s in homes if s not in gone) for homes in datasets["home_sites"]]
    lost = set(datasets.index[datasets["home_sites"].map(len) == 0])
    datasets = datasets[datasets["home_sites"].map(len) > 0]
    jobs = training_jobs.copy()
    jobs["sites"] = [tuple(s for s in sites if s not in gone) for sites in jobs["sites"]]
    jobs["datasets"] = [tuple(d for d in used if d not in lost) for used in jobs["datasets"]]
    return datasets, jobs

"""Validation rules of the workload tables (``datasets``, ``training_jobs``) that reach across records and tables.

:func:`backbone.validate.build_network` calls :func:`check_workload_references` with the other cross-table rules;
every problem names the file, the table, the record and the field.

The rules:

* a dataset's ``home_sites`` are known sites, each satisfying the dataset's ``residency`` (a site satisfies it
  when its region or its country is listed; an empty residency allows anywhere);
* a training job's ``datasets`` are known datasets, its ``sites`` known sites, at most ``max_sites`` of them, each in
  one of the job's ``regions`` (when it lists any) and satisfying the residency of every dataset it reads (training
  on data streams it to the job's site, so the data would leave its residency otherwise);
* a job ends no earlier than it starts (``start`` and ``end`` are quarters like ``2027Q3``);
* each ``residency`` entry is a region or an ISO 3166-1 alpha-2 country code, each ``regions`` entry a region.

:func:`dataset_allowed_sites` and :func:`job_allowed_sites` give the same rules as site-by-site tables of a built
network, for placement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from backbone.errors import Problem
from backbone.quarters import quarter_number
from backbone.schema import COUNTRY_CODES, REGIONS
from backbone.tables import parse_idlist

if TYPE_CHECKING:
    from backbone.model import Network


def site_satisfies(region: str, country: str, residency: Sequence[str]) -> bool:
    """Whether a site of ``region`` and ``country`` satisfies a ``residency`` list (empty: anywhere).

    Example
    -------
    >>> site_satisfies("EMEA", "DE", ["FR", "DE"]), site_satisfies("EMEA", "AE", ["IN"]), site_satisfies("NA", "US", [])
    (True, False, True)
    """
    return not residency or region in residency or (bool(country) and country in residency)


def check_workload_codes(table: str, field: str, record: str, value: Any, file: str) -> list[Problem]:
    """Problems of one ``residency`` (regions or country codes) or ``regions`` (regions) cell."""
    problems = []
    for code in parse_idlist(value):
        if code in REGIONS or (field == "residency" and code in COUNTRY_CODES):
            continue
        allowed = (f"a region ({', '.join(REGIONS)}) or an ISO 3166-1 alpha-2 country code such as DE or IN"
                   if field == "residency" else f"a region ({', '.join(REGIONS)})")
        problems.append(Problem(f"unknown code {code!r}: expected {allowed}", file=file, table=table,
                                record=record, field=field))
    return problems


def _site_places(sites: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """``{site id: (region, country)}`` of the sites table as validation sees it (raw cells)."""
    if "id" not in sites.columns or "region" not in sites.columns:
        return {}
    countries = sites["country"] if "country" in sites.columns else pd.Series([""] * len(sites), index=sites.index)
    return {str(i): (str(r).strip(), "" if not isinstance(c, str) else c.strip())
            for i, r, c in zip(sites["id"], sites["region"], countries, strict=True)}


def _column(df: pd.DataFrame, name: str) -> list[Any]:
    return df[name].tolist() if name in df.columns else [None] * len(df)


def check_workload_references(frames: Mapping[str, pd.DataFrame], files: Mapping[str, str]) -> list[Problem]:
    """Every cross-record and cross-table problem of ``datasets`` and ``training_jobs`` (see the module docstring).

    Parameters
    ----------
    frames
        The raw tables as :func:`backbone.validate.build_network` checked them (an ``id`` column each).
    files
        File name per table, for the problems.
    """
    places = _site_places(frames["sites"])
    datasets, jobs = frames["datasets"], frames["training_jobs"]
    problems: list[Problem] = []
    residency: dict[str, tuple[str, ...]] = {}
    if "id" in datasets.columns:
        problems += _check_datasets(datasets, places, files.get("datasets", "datasets"), residency)
    if "id" in jobs.columns:
        problems += _check_jobs(jobs, places, residency, files.get("training_jobs", "training_jobs"))
    return problems


def _check_datasets(datasets: pd.DataFrame, places: Mapping[str, tuple[str, str]], file: str,
                    residency_out: dict[str, tuple[str, ...]]) -> list[Problem]:
    problems: list[Problem] = []
    for rid, homes, res in zip(datasets["id"], _column(datasets, "home_sites"), _column(datasets, "residency"),
                               strict=True):
        codes = parse_idlist(res)
        problems += check_workload_codes("datasets", "residency", rid, res, file)
        residency_out[str(rid)] = codes
        for site in parse_idlist(homes):
            if site not in places:
                problems.append(Problem(f"unknown site {site!r}", file=file, table="datasets", record=rid,
                                        field="home_sites"))
            elif not site_satisfies(*places[site], codes):
                problems.append(Problem(f"home site {site!r} ({'/'.join(x for x in places[site] if x)}) is outside the "
                                        f"dataset's residency {';'.join(codes)}", file=file, table="datasets",
                                        record=rid, field="home_sites"))
    return problems


def _check_jobs(jobs: pd.DataFrame, places: Mapping[str, tuple[str, str]],
                residency: Mapping[str, tuple[str, ...]], file: str) -> list[Problem]:
    problems: list[Problem] = []
    rows = zip(jobs["id"], _column(jobs, "datasets"), _column(jobs, "sites"), _column(jobs, "regions"),
               _column(jobs, "max_sites"), _column(jobs, "start"), _column(jobs, "end"), strict=True)
    for rid, used, pinned, regions, max_sites, start, end in rows:
        where = {"file": file, "table": "training_jobs", "record": rid}
        problems += check_workload_codes("training_jobs", "regions", rid, regions, file)
        read = parse_idlist(used)
        problems += [Problem(f"unknown dataset {d!r}", **where, field="datasets") for d in read if d not in residency]
        sites = parse_idlist(pinned)
        limit = _whole(max_sites, default=1)
        if limit is not None and len(sites) > limit:
            problems.append(Problem(f"{len(sites)} sites pinned but max_sites is {limit}", **where, field="sites"))
        allowed = parse_idlist(regions)
        for site in sites:
            problems += _pinned_site_problems(site, places, allowed, read, residency, where)
        s, e = ("" if not isinstance(x, str) else x.strip() for x in (start, end))
        if s and e and _quarter_key(e) < _quarter_key(s):
            problems.append(Problem(f"ends ({e}) before it starts ({s})", **where, field="end"))
    return problems


def _pinned_site_problems(site: str, places: Mapping[str, tuple[str, str]], allowed: Sequence[str],
                          read: Sequence[str], residency: Mapping[str, tuple[str, ...]],
                          where: Mapping[str, str]) -> list[Problem]:
    if site not in places:
        return [Problem(f"unknown site {site!r}", **where, field="sites")]
    problems = []
    region, _country = places[site]
    if allowed and region not in allowed:
        problems.append(Problem(f"site {site!r} is in {region}, outside the job's regions {';'.join(allowed)}",
                                **where, field="sites"))
    for d in read:
        if d in residency and not site_satisfies(*places[site], residency[d]):
            problems.append(Problem(f"site {site!r} is outside the residency {';'.join(residency[d])} of dataset "
                                    f"{d!r} the job reads", **where, field="sites"))
    return problems


def _whole(value: Any, default: int) -> int | None:
    """``value`` as a whole number (``default`` when blank); None when it is not one (reported elsewhere)."""
    if value is None or (isinstance(value, str) and not value.strip()) or (isinstance(value, float) and value != value):
        return default
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return int(x) if x == x and x == round(x) else None


def _quarter_key(quarter: str) -> int:
    """``'2027Q3'`` -> its quarter number (:func:`~backbone.quarters.quarter_number`); an unreadable quarter sorts
    first (it is reported by the column check)."""
    try:
        return quarter_number(quarter)
    except ValueError:
        return -1


def dataset_allowed_sites(net: Network) -> pd.DataFrame:
    """Where each dataset may sit: a boolean table (index: dataset ids, columns: site ids), true where the site
    satisfies the dataset's ``residency`` (:func:`site_satisfies`, vectorised: a site's region or country is listed,
    or the residency is empty)."""
    ds, sites = net.datasets, net.sites
    codes = ds["residency"].rename("code").rename_axis("dataset").explode().dropna().reset_index()
    by_region = codes.merge(sites["region"].rename("code").rename_axis("site").reset_index(), on="code")
    by_country = codes.merge(sites["country"].rename("code").rename_axis("site").reset_index(), on="code")
    hits = pd.concat([by_region, by_country])[["dataset", "site"]].drop_duplicates()
    grid = np.zeros((len(ds), len(sites)), dtype=bool)
    grid[ds.index.get_indexer(hits["dataset"]), sites.index.get_indexer(hits["site"])] = True
    grid[(ds["residency"].map(len) == 0).to_numpy()] = True
    return pd.DataFrame(grid, index=ds.index, columns=sites.index)


def job_allowed_sites(net: Network) -> pd.DataFrame:
    """Where each training job may run: a boolean table (index: job ids, columns: site ids), true where the site is
    in one of the job's ``regions`` (any when empty) and satisfies the residency of every dataset the job reads
    (the rule validation applies to a pinned job's ``sites``). GPUs, power and ``max_sites`` are the placement's."""
    jobs, sites = net.training_jobs, net.sites
    site_region = sites["region"].to_numpy()
    grid = np.repeat((jobs["regions"].map(len) == 0).to_numpy()[:, None], len(sites), axis=1)
    for region in REGIONS:  # a loop over the five regions, never over sites
        listed = jobs["regions"].map(lambda r, region=region: region in r).to_numpy(dtype=bool)
        grid |= listed[:, None] & (site_region == region)[None, :]
    region_ok = pd.DataFrame(grid, index=jobs.index, columns=sites.index)
    per_dataset = dataset_allowed_sites(net)
    reads = jobs["datasets"].rename("dataset").rename_axis("job").explode().dropna()
    if len(reads):
        blocked = ~per_dataset.loc[reads.to_numpy()].to_numpy()
        forbidden = pd.DataFrame(blocked, index=reads.index, columns=sites.index).groupby(level=0).any()
        region_ok &= ~forbidden.reindex(jobs.index, fill_value=False)
    return region_ok

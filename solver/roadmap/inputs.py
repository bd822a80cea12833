"""The roadmap's inputs per period: today's demand grown to the period, and the option ids checked against the
scenario."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from backbone.errors import Problem, ValidationError
from backbone.model import Network
from backbone.solver.roadmap.options import RoadmapOptions

__all__ = ["check_references", "grow_network"]


def grow_network(net: Network, opts: RoadmapOptions, t: int) -> Network:
    """``net`` with its demands and metro inference GPUs grown to period ``t`` (0: as given).

    A demand grows at its source site's region rate times its class factor; a metro's inference
    GPUs at the metro's own rate (``metro_growth_per_year``) or its region's times the inference factor.
    """
    years = t * opts.years_per_period
    d = net.demands.copy()
    region = net.sites["region"].reindex(d["src"]).to_numpy()
    rate = pd.Series(region).map(opts.growth_per_year).fillna(0.0).to_numpy(float) * \
        d["traffic_class"].map(lambda c: opts.class_growth_factor.get(str(c), 1.0)).to_numpy(float)
    d["demand_gbps"] = d["demand_gbps"].to_numpy(float) * (1.0 + rate) ** years
    m = net.metros.copy()
    if len(m):
        inf = opts.class_growth_factor.get("inference", 1.0)
        mrate = m["region"].map(opts.growth_per_year).fillna(0.0).to_numpy(float) * inf
        own = m.index.to_series().map(opts.metro_growth_per_year)
        mrate = np.where(own.notna().to_numpy(), own.fillna(0.0).to_numpy(float), mrate)
        m["inference_gpus"] = m["inference_gpus"].to_numpy(float) * (1.0 + mrate) ** years
    return replace(net, demands=d, metros=m)


def check_references(net: Network, opts: RoadmapOptions) -> None:
    """Ids the options name must exist in the scenario.

    Raises
    ------
    ValidationError
        Naming ``metro_growth_per_year.<id>`` or ``power_steps[i].site``.
    """
    problems = [Problem(f"unknown metro {m!r}", table="options", field=f"metro_growth_per_year.{m}")
                for m in opts.metro_growth_per_year if m not in net.metros.index]
    problems += [Problem(f"unknown site {s.site!r}", table="options", field=f"power_steps.{i}.site")
                 for i, s in enumerate(opts.power_steps) if s.site not in net.sites.index]
    if problems:
        raise ValidationError(problems)

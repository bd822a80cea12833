"""A tour of the notebook facade on the shipped global scenario (docs/notebook.md walks through it).

Run it as a plain script (no ``if __name__ == "__main__":`` needed) or paste its cells into a notebook::

    python docs/examples/notebook_tour.py [OUT_DIR]

OUT_DIR (default: a temporary folder) receives the plan's report, tables and ``plan.json``.
tests/test_notebook_tour.py runs this file and checks what it prints.
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import backbone
from backbone.errors import FrozenTableError

# %% Load the shipped scenario: a Network of read-only tables keyed by id
net = backbone.load_scenario()
print(f"scenario {net.name}: {len(net.sites)} sites, {len(net.links)} links, {len(net.demands)} demands")
try:
    net.links.loc[net.links.index[0], "capacity_gbps"] = 1.0
except FrozenTableError:
    print("tables are read-only: change a copy and call copy_with")

# %% Derived columns follow their inputs; overrides are kept
link = net.links.index[0]
links = net.links.copy()
links.loc[link, "length_km"] = 2 * net.links.at[link, "length_km"]
longer = net.copy_with(links=links)
print(f"{link}: length {net.links.at[link, 'length_km']:.0f} -> {longer.links.at[link, 'length_km']:.0f} km, "
      f"latency {net.links.at[link, 'latency_ms']:.2f} -> {longer.links.at[link, 'latency_ms']:.2f} ms")
print(f"overrides in the shipped links table: {int(net.overrides('links').notna().to_numpy().sum())} values")

# %% Route today's demand: min-MLU over 4 candidate paths per demand
te = backbone.solve_te(net, objective="min-mlu", k_paths=4)
hot = te.links["utilisation"].idxmax()
print(f"min-MLU: MLU {te.links['utilisation'].max():.3f} on {hot}; "
      f"carried {te.demands['carried_gbps'].sum():,.0f} of {te.demands['demand_gbps'].sum():,.0f} Gbps")
print(te.links.sort_values("utilisation", ascending=False).head(5)[["site_a", "site_b", "utilisation"]])

# %% What if the busiest links were upgraded to their limit? (absolute capacities; net is unchanged)
busiest = te.links.index[np.isclose(te.links["utilisation"], te.links["utilisation"].max())]
bigger = net.with_capacity({link_id: net.links.at[link_id, "max_capacity_gbps"] for link_id in busiest})
te2 = backbone.solve_te(bigger, objective="min-mlu", k_paths=4)
print(f"{len(busiest)} link(s) at their max_capacity_gbps: MLU {te.links['utilisation'].max():.3f} -> "
      f"{te2.links['utilisation'].max():.3f}; {hot} {net.links.at[hot, 'capacity_gbps']:,.0f} -> "
      f"{bigger.links.at[hot, 'capacity_gbps']:,.0f} Gbps (net keeps {net.links.at[hot, 'capacity_gbps']:,.0f})")

# %% Fail every shared-risk group (SRLG) in turn
sweep = backbone.sweep(net, kind="srlg")
worst = sweep.table().head(5)
print(f"SRLG sweep: {len(sweep.table())} scenarios; worst by impact:")
print(worst[["scenario", "impact_gbps", "unmet_gbps", "mlu", "survived"]].to_string(index=False))

# %% Place inference and training GPUs
placement = backbone.place(net)
print(f"placement: {placement.status}, objective {placement.objective:,.0f} USD, "
      f"fully served: {placement.fully_served}")

# %% The whole pipeline, with its report, into a folder. skip_upgrades=True leaves out the survivable design
# stage, which with the defaults takes several minutes on a laptop; drop it for the full plan.
out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="backbone-tour-"))
plan = backbone.plan(net, out_dir=out, maps=False, skip_upgrades=True)
print(f"plan: {len(plan.files)} files in {out} (report.html: {(out / 'report.html').exists()})")

"""Placement and demand use one access rule: on the shipped scenario every metro reaches the same site in both,
and the placement's independent checker agrees."""

from __future__ import annotations

import numpy as np

from backbone.demand import home_sites
from backbone.model import Network, access_latency_ms
from backbone.solver.placement.inputs import access_sites, demand_units, metro_site_rtt
from backbone.solver.placement.options import PlaceOptions


def test_placement_and_demand_agree_on_every_metro_of_the_shipped_scenario(shipped: Network) -> None:
    home = home_sites(shipped)
    site, km = access_sites(shipped)
    assert len(home) == len(shipped.metros) > 0
    assert list(site) == list(home.reindex(shipped.metros.index))
    units = demand_units(shipped, PlaceOptions())
    assert (units["access_site"].to_numpy() == home.loc[units["metro"]].to_numpy()).all()
    # the RTT from a metro to its own access site is the access fibre alone (there and back)
    rtt = metro_site_rtt(shipped)
    own = rtt.to_numpy()[np.arange(len(home)), shipped.sites.index.get_indexer(home.to_numpy())]
    assert np.allclose(own, 2.0 * access_latency_ms(km, shipped.parameters))


def test_the_generated_inference_demand_ends_at_the_metros_home_sites(shipped: Network) -> None:
    home = set(home_sites(shipped))
    inf = shipped.demands[shipped.demands["traffic_class"] == "inference"]
    dcs = set(shipped.sites.index[shipped.sites["kind"] == "datacenter"])
    ends = set(inf["src"]) | set(inf["dst"])
    assert ends <= home | dcs
    assert ends & home  # the home sites do carry inference traffic

"""Small networks for the API's planner-flow tests (placement needs datacenters and metros)."""

from __future__ import annotations

from typing import Any


def placement_doc() -> dict[str, Any]:
    """New York inference demand of 3000 GPUs; two datacenters that can host it (1024-GPU blocks)."""
    return {
        "name": "placement-mini",
        "sites": [
            {"id": "NY", "name": "NY", "lon": -74.0, "lat": 40.7, "region": "NA", "metro": "nyc", "kind": "pop"},
            {"id": "DC1", "name": "DC1", "lon": -77.0, "lat": 38.9, "region": "NA", "kind": "datacenter",
             "gpus_max": 8192, "power_max_mw": 40, "power_available_mw": 5},
            {"id": "DC2", "name": "DC2", "lon": -87.6, "lat": 41.9, "region": "NA", "kind": "datacenter",
             "gpus_max": 8192, "power_max_mw": 40, "power_available_mw": 5},
        ],
        "links": [
            {"id": "ny-dc1", "site_a": "NY", "site_b": "DC1", "capacity_gbps": 1000},
            {"id": "ny-dc2", "site_a": "NY", "site_b": "DC2", "capacity_gbps": 1000},
            {"id": "dc1-dc2", "site_a": "DC1", "site_b": "DC2", "capacity_gbps": 1000},
        ],
        "metros": [{"id": "nyc", "name": "New York", "lon": -74.0, "lat": 40.7, "region": "NA", "country": "US",
                    "site": "NY", "inference_gpus": 3000}],
    }


PLACEMENT_GPUS = 3000.0
BLOCK_GPUS = 1024

"""SNDlib native network importer: hand-written files, error reporting, every shared instance."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from backbone.errors import ValidationError
from backbone.io import load_scenario
from backbone.io.sndlib import load_sndlib, parse_sndlib, region_of
from tests.conftest import conformance_dir

DATA = Path(__file__).resolve().parent.parent / "data" / "sndlib"


def test_parse_every_section() -> None:
    snd = parse_sndlib(DATA / "routing.txt")
    assert list(snd.nodes.index) == ["A", "B", "C"]
    ab = snd.links.loc["AB"]
    assert (ab["source"], ab["target"]) == ("A", "B")
    assert (ab["preinstalled_capacity"], ab["preinstalled_cost"], ab["routing_cost"], ab["setup_cost"]) == (10, 100, 1, 0)
    assert snd.modules.to_dict("records")[0] == {"link": "AB", "capacity": 10.0, "cost": 5.0}
    d = snd.demands.loc["D_AC"]
    assert (d["routing_unit"], d["demand_value"], d["max_path_length"]) == (2, 6, 3)
    assert snd.demand_units.tolist() == [12.0]
    assert snd.paths["links"].tolist() == [("AC",), ("AB", "BC")]


def test_format_doc_example_parses() -> None:
    base = conformance_dir() / "sndlib" / "format-docs"
    snd = parse_sndlib(base / "example-network.txt")
    assert len(snd.links) == 8 and len(snd.demands) == 3 and len(snd.paths) == 9
    assert snd.demands.loc["D_AB", "max_path_length"] == 2
    assert math.isnan(snd.demands.loc["D_AC", "max_path_length"])


def test_load_maps_to_network_tables() -> None:
    net = load_sndlib(DATA / "routing.txt")
    links = net.links
    assert links.loc["AB", "capacity_gbps"] == 10  # pre-installed
    assert links.loc["BC", "capacity_gbps"] == 10  # no pre-installed: the largest module
    assert float(links.loc["AB", "sndlib_preinstalled_gbps"]) == 10  # extra columns are kept (as text)
    assert links.loc["AC", "routing_cost_per_gbps"] == 4
    assert links.loc["AB", "preinstalled_cost_usd"] == 100
    assert links.loc["AB", "module_gbps"] == 10 and links.loc["AB", "module_cost_usd"] == 5
    assert net.demands.loc["D_AC", "demand_gbps"] == 12
    assert net.meta["sndlib"]["coordinates"] == "planar-rescaled"
    assert net.sites["lon"].between(0, 10).all() and net.sites["lat"].between(45, 55).all()
    assert (net.links["latency_ms"] > 0).all()


def test_unit_conversion_from_meta() -> None:
    net = load_sndlib(DATA / "survivable.txt")  # unit = MBITPERSEC
    assert net.meta["sndlib"]["gbps_per_unit"] == pytest.approx(1e-3)
    assert net.demands["demand_gbps"].tolist() == pytest.approx([0.01])
    assert net.links["module_gbps"].tolist() == pytest.approx([0.01] * 3)


def test_cheapest_module_per_unit_is_chosen() -> None:
    net = load_sndlib(DATA / "explicit.txt")  # 10 @ 4 and 30 @ 9: 30 is cheaper per unit
    assert net.links["module_gbps"].tolist() == [30.0] * 3
    assert net.links["module_cost_usd"].tolist() == [9.0] * 3


def test_load_scenario_dispatches_txt() -> None:
    assert load_scenario(DATA / "triangle.txt").name == "triangle"


def test_errors_name_file_line_and_field() -> None:
    with pytest.raises(ValidationError) as info:
        parse_sndlib(DATA / "broken.txt")
    found = {(p.record, p.field) for p in info.value.problems}
    assert ("line 4 (B)", "y") in found
    assert ("line 9 (AZ)", "modules") in found
    assert ("line 9 (AZ)", "target") in found
    assert ("line 10 (AB)", "id") in found
    assert ("line 14 (D1)", "demand_value") in found
    assert all(p.file.endswith("broken.txt") for p in info.value.problems)


def test_not_an_sndlib_file(tmp_path: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_text("hello\n")
    with pytest.raises(ValidationError, match="not an SNDlib"):
        load_sndlib(f)


def test_missing_sections(tmp_path: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_text("?SNDlib native format; type: network; version: 1.0\nNODES (\n A ( 1 2 )\n)\n")
    with pytest.raises(ValidationError) as info:
        load_sndlib(f)
    assert {p.message for p in info.value.problems} >= {"missing section LINKS", "missing section DEMANDS"}


def test_region_rule() -> None:
    lon = np.array([-74.0, -46.6, 2.35, 31.2, 46.7, 103.8, 151.2])
    lat = np.array([40.7, -23.5, 48.9, 30.0, 24.7, 1.35, -33.9])
    assert region_of(lon, lat).tolist() == ["NA", "LATAM", "EMEA", "AFRICA", "EMEA", "APAC", "APAC"]


@pytest.mark.slow
def test_every_shared_network_loads() -> None:
    native = conformance_dir() / "sndlib" / "native"
    files = sorted(native.glob("*/*.txt"))
    assert len(files) >= 20
    import csv

    stats = {r["network"]: r for r in csv.DictReader((conformance_dir() / "sndlib" / "NETWORK_STATS.csv").open())}
    for f in files:
        net = load_sndlib(f)
        row = stats[f.stem]
        assert (len(net.sites), len(net.links), len(net.demands)) == (
            int(row["nodes"]), int(row["links"]), int(row["demands"])), f.stem
        assert net.demands["demand_gbps"].sum() / net.meta["sndlib"]["gbps_per_unit"] == pytest.approx(
            float(row["total_demand_value"]), rel=1e-6, abs=0.01), f.stem
        assert (net.links["capacity_gbps"] > 0).all()


@pytest.mark.slow
def test_every_shared_network_cut_in_half_is_rejected_naming_the_section() -> None:
    """Cut each instance at a line boundary halfway through each of its sections: never a silent
    subset of nodes, links or demands, always the section and line that is not closed."""
    native = conformance_dir() / "sndlib" / "native"
    files = sorted(native.glob("*/*.txt"))
    assert files
    for f in files:
        lines = f.read_text(encoding="utf-8").splitlines()
        for section in ("NODES", "LINKS", "DEMANDS"):
            start = next(i for i, line in enumerate(lines) if line.strip().startswith(section))
            end = next(i for i in range(start, len(lines)) if lines[i].strip() == ")")
            cut = "\n".join(lines[: (start + end) // 2 + 1]) + "\n"
            with pytest.raises(ValidationError) as err:
                parse_sndlib(f, text=cut)
            not_closed = [p for p in err.value.problems if f"section {section} is not closed" in p.message]
            assert not_closed and not_closed[0].record == f"line {start + 1} ({section})", (f.stem, section)


def test_geographic_file_with_a_node_off_the_globe(tmp_path: Path) -> None:
    text = (DATA / "triangle.txt").read_text(encoding="utf-8").replace("C ( 12.0 50.0 )", "C ( 212.0 -95.0 )")
    with pytest.raises(ValidationError) as err:
        parse_sndlib(tmp_path / "t.txt", text=text)
    assert {(p.record, p.field) for p in err.value.problems} == {("line 11 (C)", "lon"), ("line 11 (C)", "lat")}

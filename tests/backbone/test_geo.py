"""Geodesy, latency, route factor, waypoints and the antimeridian (backbone.geo, derived link columns)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from backbone import geo
from tests.nets import make_network

# City centres (lon, lat), as commonly published (Wikipedia / GeoNames city coordinates).
LONDON = (-0.1276, 51.5072)
PARIS = (2.3522, 48.8566)
NEW_YORK = (-74.0060, 40.7128)
LOS_ANGELES = (-118.2437, 34.0522)
TOKYO = (139.6917, 35.6895)
SYDNEY = (151.2093, -33.8688)
SINGAPORE = (103.8198, 1.3521)

WGS84_A = 6378137.0
WGS84_F = 1 / 298.257223563


def vincenty_km(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Vincenty's (1975) inverse formula on the WGS84 ellipsoid, written out independently of
    pyproj (which uses Karney's algorithm); the two agree to well under a millimetre for
    non-antipodal points."""
    a, f = WGS84_A, WGS84_F
    b = a * (1 - f)
    u1 = math.atan((1 - f) * math.tan(math.radians(lat1)))
    u2 = math.atan((1 - f) * math.tan(math.radians(lat2)))
    big_l = math.radians(lon2 - lon1)
    lam = big_l
    for _ in range(200):
        sin_lam, cos_lam = math.sin(lam), math.cos(lam)
        sin_sigma = math.hypot(math.cos(u2) * sin_lam,
                               math.cos(u1) * math.sin(u2) - math.sin(u1) * math.cos(u2) * cos_lam)
        cos_sigma = math.sin(u1) * math.sin(u2) + math.cos(u1) * math.cos(u2) * cos_lam
        sigma = math.atan2(sin_sigma, cos_sigma)
        sin_alpha = math.cos(u1) * math.cos(u2) * sin_lam / sin_sigma
        cos2_alpha = 1 - sin_alpha**2
        cos_2sm = cos_sigma - 2 * math.sin(u1) * math.sin(u2) / cos2_alpha
        c = f / 16 * cos2_alpha * (4 + f * (4 - 3 * cos2_alpha))
        lam_prev = lam
        lam = big_l + (1 - c) * f * sin_alpha * (
            sigma + c * sin_sigma * (cos_2sm + c * cos_sigma * (-1 + 2 * cos_2sm**2)))
        if abs(lam - lam_prev) < 1e-13:
            break
    u_sq = cos2_alpha * (a**2 - b**2) / b**2
    big_a = 1 + u_sq / 16384 * (4096 + u_sq * (-768 + u_sq * (320 - 175 * u_sq)))
    big_b = u_sq / 1024 * (256 + u_sq * (-128 + u_sq * (74 - 47 * u_sq)))
    d_sigma = big_b * sin_sigma * (cos_2sm + big_b / 4 * (
        cos_sigma * (-1 + 2 * cos_2sm**2) - big_b / 6 * cos_2sm * (-3 + 4 * sin_sigma**2) * (-3 + 4 * cos_2sm**2)))
    return b * big_a * (sigma - d_sigma) / 1000.0


# Published great-circle distances between the city centres (mean-radius sphere, as quoted by
# common distance tables); the WGS84 geodesic differs from a sphere by up to ~0.5 %, so 0.5 %.
PUBLISHED_KM = [
    ("London-Paris", LONDON, PARIS, 344.0),
    ("New York-London", NEW_YORK, LONDON, 5570.0),
    ("Los Angeles-Tokyo", LOS_ANGELES, TOKYO, 8815.0),
    ("Sydney-Singapore", SYDNEY, SINGAPORE, 6300.0),
]


@pytest.mark.parametrize(("name", "a", "b", "km"), PUBLISHED_KM, ids=[p[0] for p in PUBLISHED_KM])
def test_city_pair_distance_within_half_a_percent(name: str, a: tuple[float, float], b: tuple[float, float],
                                                   km: float) -> None:
    d = float(geo.geodesic_km(*a, *b))
    assert d == pytest.approx(km, rel=0.005), name
    # and to a metre against an independent WGS84 implementation (Vincenty's inverse formula)
    assert d == pytest.approx(vincenty_km(*a, *b), abs=1e-3), name


def test_geodesic_is_vectorized_symmetric_and_zero_on_the_diagonal() -> None:
    lons1 = np.array([LONDON[0], NEW_YORK[0], SYDNEY[0]])
    lats1 = np.array([LONDON[1], NEW_YORK[1], SYDNEY[1]])
    lons2 = np.array([PARIS[0], LONDON[0], SINGAPORE[0]])
    lats2 = np.array([PARIS[1], LONDON[1], SINGAPORE[1]])
    fwd = geo.geodesic_km(lons1, lats1, lons2, lats2)
    back = geo.geodesic_km(lons2, lats2, lons1, lats1)
    assert fwd.shape == (3,)
    np.testing.assert_allclose(fwd, back, rtol=1e-12)
    assert float(geo.geodesic_km(*TOKYO, *TOKYO)) == 0.0
    # one degree of latitude at the equator: 110.574 km on WGS84 (meridian arc)
    assert float(geo.geodesic_km(0, 0, 0, 1)) == pytest.approx(110.574, abs=0.001)
    # across the antimeridian the short way round: 2 degrees of equator = 222.639 km
    assert float(geo.geodesic_km(179, 0, -179, 0)) == pytest.approx(2 * 111.3195, abs=0.001)


def test_fibre_delay_is_4_90_us_per_km() -> None:
    assert geo.fibre_delay_ms_per_km() * 1000 == pytest.approx(4.90, abs=0.005)
    # 1 468 / 299 792.458 exactly
    assert geo.fibre_delay_ms_per_km(1.468) == pytest.approx(1.468 / 299.792458, rel=1e-12)
    lat = geo.latency_ms(np.array([0.0, 1000.0, 5570.0]))
    np.testing.assert_allclose(lat, [0.05, 4.8967 + 0.05, 5570 * 1.468 / 299.792458 + 0.05], atol=1e-4)
    assert float(geo.latency_ms(100.0, group_index=1.5, equipment_delay_ms=0.0)) == pytest.approx(
        100 * 1.5 / 299.792458)


def test_derived_length_uses_the_route_factor_and_waypoints_use_the_polyline() -> None:
    sites = [{"id": "LON", "lon": LONDON[0], "lat": LONDON[1], "region": "EMEA"},
             {"id": "PAR", "lon": PARIS[0], "lat": PARIS[1], "region": "EMEA"}]
    links = [{"id": "direct", "site_a": "LON", "site_b": "PAR", "capacity_gbps": 100},
             {"id": "via", "site_a": "LON", "site_b": "PAR", "capacity_gbps": 100, "waypoints": "1.0 51.0"},
             {"id": "given", "site_a": "LON", "site_b": "PAR", "capacity_gbps": 100, "length_km": 500,
              "latency_ms": 3.0}]
    net = make_network(sites, links)
    geodesic = float(geo.geodesic_km(*LONDON, *PARIS))
    assert net.links.at["direct", "length_km"] == pytest.approx(geodesic * geo.DEFAULT_ROUTE_FACTOR, abs=1e-3)
    via = geo.polyline_km([LONDON, (1.0, 51.0), PARIS])
    assert net.links.at["via", "length_km"] == pytest.approx(via, abs=1e-3)
    assert via > geodesic
    assert net.links.at["given", "length_km"] == 500 and net.links.at["given", "latency_ms"] == 3.0
    expected = geodesic * 1.25 * geo.fibre_delay_ms_per_km() + geo.DEFAULT_EQUIPMENT_DELAY_MS
    assert net.links.at["direct", "latency_ms"] == pytest.approx(expected, abs=1e-4)
    # a scenario's own route factor and group index win
    custom = make_network(sites, links[:1], parameters={"route_factor": 1.5, "group_index": 1.47,
                                                        "equipment_delay_ms": 0.0})
    assert custom.links.at["direct", "length_km"] == pytest.approx(geodesic * 1.5, abs=1e-3)
    assert custom.links.at["direct", "latency_ms"] == pytest.approx(geodesic * 1.5 * 1.47 / 299.792458, abs=1e-4)


def test_parse_waypoints_forms_and_errors() -> None:
    assert geo.parse_waypoints("") == []
    assert geo.parse_waypoints("   ") == []
    assert geo.parse_waypoints("-50 45; -20 50") == [(-50.0, 45.0), (-20.0, 50.0)]
    assert geo.parse_waypoints("-50,45;-20 , 50;") == [(-50.0, 45.0), (-20.0, 50.0)]
    assert geo.parse_waypoints("180 -90; -180 90") == [(180.0, -90.0), (-180.0, 90.0)]
    for bad in ("10", "10 20 30", "a b", "200 10", "10 95", "nan 1", "10 20; x"):
        with pytest.raises(ValueError):
            geo.parse_waypoints(bad)


def test_format_waypoints_round_trips_and_wraps() -> None:
    pts = [(-50.0, 45.0), (179.5, -10.25)]
    assert geo.parse_waypoints(geo.format_waypoints(pts)) == pts
    assert geo.format_waypoints([(190.0, 0.0)]) == "-170.0000 0.0000"
    assert geo.format_waypoints([(-185.0, 1.0)]) == "175.0000 1.0000"


def test_nearest_point() -> None:
    lons = np.array([LONDON[0], PARIS[0], NEW_YORK[0]])
    lats = np.array([LONDON[1], PARIS[1], NEW_YORK[1]])
    i, d = geo.nearest_point(-0.45, 51.47, lons, lats)  # Heathrow
    assert i == 0 and d == pytest.approx(float(geo.geodesic_km(-0.45, 51.47, *LONDON)))


# ---------------------------------------------------------------------------------- antimeridian
def _assert_continuous(coords: np.ndarray) -> None:
    assert np.all(np.abs(np.diff(coords[:, 0])) < 180.0)


@pytest.mark.parametrize(("a", "b"), [(TOKYO, LOS_ANGELES), (LOS_ANGELES, TOKYO), (SYDNEY, (-149.57, -17.53)),
                                      ((179.0, 10.0), (-179.0, -10.0))])
def test_route_coords_is_continuous_across_the_antimeridian(a: tuple[float, float], b: tuple[float, float]) -> None:
    c = geo.route_coords([a, b])
    _assert_continuous(c)
    assert tuple(c[0]) == pytest.approx(a)
    # the last point is the destination, possibly shifted by 360 degrees
    assert (c[-1, 0] - b[0]) % 360.0 == pytest.approx(0.0, abs=1e-9) or (c[-1, 0] - b[0]) % 360 == pytest.approx(360)
    assert c[-1, 1] == pytest.approx(b[1])
    # densified: no segment longer than the densify spacing (plus rounding)
    seg = geo.geodesic_km(c[:-1, 0], c[:-1, 1], c[1:, 0], c[1:, 1])
    assert seg.max() <= geo.DENSIFY_KM + 1e-6
    assert seg.sum() == pytest.approx(float(geo.geodesic_km(*a, *b)), rel=1e-9)


def _check_parts(parts: list[np.ndarray]) -> None:
    for part in parts:
        assert len(part) >= 2
        assert np.all(part[:, 0] >= -180.0) and np.all(part[:, 0] <= 180.0)
        _assert_continuous(part)
    for left, right in zip(parts[:-1], parts[1:], strict=True):
        assert abs(left[-1, 0]) == 180.0 and right[0, 0] == -left[-1, 0]
        assert left[-1, 1] == pytest.approx(right[0, 1], abs=1e-12)


def test_split_antimeridian_eastbound_and_westbound() -> None:
    east = geo.route_coords([TOKYO, LOS_ANGELES])
    parts = geo.split_antimeridian(east)
    assert len(parts) == 2
    _check_parts(parts)
    assert parts[0][-1, 0] == 180.0 and parts[1][0, 0] == -180.0
    west = geo.route_coords([LOS_ANGELES, TOKYO])
    parts_w = geo.split_antimeridian(west)
    assert len(parts_w) == 2
    _check_parts(parts_w)
    assert parts_w[0][-1, 0] == -180.0 and parts_w[1][0, 0] == 180.0
    # no points lost: the parts hold every input point plus two crossing points
    assert sum(len(p) for p in parts) == len(east) + 2


def test_split_antimeridian_crossing_latitude_is_interpolated() -> None:
    parts = geo.split_antimeridian(np.array([[178.0, 0.0], [182.0, 4.0]]))
    assert [p.tolist() for p in parts] == [[[178.0, 0.0], [180.0, 2.0]], [[-180.0, 2.0], [-178.0, 4.0]]]


def test_split_antimeridian_multiple_crossings() -> None:
    # a zig-zag cable: Fiji -> Samoa -> Tuvalu-ish -> Tonga side, crossing four times
    pts = [(175.0, -18.0), (-172.0, -14.0), (178.0, -8.0), (-175.0, -21.0), (170.0, -15.0)]
    coords = geo.route_coords(pts)
    _assert_continuous(coords)
    parts = geo.split_antimeridian(coords)
    assert len(parts) == 5
    _check_parts(parts)
    # every crossing happens at +-180 and the parts alternate sides
    assert [np.sign(p[-1, 0]) for p in parts[:-1]] == [1, -1, 1, -1]


def test_split_antimeridian_leaves_other_lines_alone() -> None:
    c = geo.route_coords([LONDON, NEW_YORK])
    parts = geo.split_antimeridian(c)
    assert len(parts) == 1
    np.testing.assert_array_equal(parts[0], c)
    # a line given in shifted longitudes is brought back into range
    shifted = geo.split_antimeridian(c + np.array([360.0, 0.0]))
    np.testing.assert_allclose(shifted[0], c)
    assert geo.split_antimeridian(np.empty((0, 2))) == []


def test_unwrap_lons() -> None:
    np.testing.assert_allclose(geo.unwrap_lons(np.array([170.0, -170.0, -150.0, 170.0])),
                               [170.0, 190.0, 210.0, 170.0])
    np.testing.assert_allclose(geo.unwrap_lons(np.array([-170.0, 170.0])), [-170.0, -190.0])
    assert geo.unwrap_lons(np.array([5.0])).tolist() == [5.0]


@pytest.mark.parametrize(("coords", "expected"), [
    ([[180.0, 0.0], [179.0, 0.0]], [[[180.0, 0.0], [179.0, 0.0]]]),
    ([[179.0, 0.0], [180.0, 0.0], [181.0, 0.0]], [[[179.0, 0.0], [180.0, 0.0]], [[-180.0, 0.0], [-179.0, 0.0]]]),
    ([[180.0, 1.0], [181.0, 2.0]], [[[-180.0, 1.0], [-179.0, 2.0]]]),
    ([[10.0, 1.0], [10.0, 1.0], [11.0, 1.0]], [[[10.0, 1.0], [11.0, 1.0]]]),
])
def test_split_antimeridian_on_the_seam_makes_no_degenerate_parts(coords: list[list[float]],
                                                                  expected: list[list[list[float]]]) -> None:
    assert [p.tolist() for p in geo.split_antimeridian(np.array(coords))] == expected

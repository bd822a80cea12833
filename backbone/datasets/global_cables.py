"""Named submarine cable systems of the shipped global scenario, segment by segment.

Each :class:`CableSystem` carries the public facts used (ready-for-service year, published system
length, design capacity, landing points as listed by TeleGeography's Submarine Cable Map and the
owners' press releases; see ``data/README.md``) and the segments this scenario models between
landing stations. A segment's route goes through sea-lane waypoints (the named ``SEA`` chains
below): Gibraltar, the Mediterranean, the Red Sea and Bab-el-Mandeb, the Arabian Sea, the Strait
of Malacca, the South China Sea, the Luzon Strait, around Japan, great-circle-ish Pacific arcs
(continuous across the antimeridian), the Bass Strait... Lengths are that geometry times a
slack factor calibrated on published system lengths (see ``build_global.cable_slack_factors``).

``lit_gbps`` is the capacity per direction this operator has lit on the system (its own fibre
pairs or leased spectrum): an **estimate**, a share of the design capacity.
The Egyptian land crossing between the Mediterranean and the Red Sea is modelled as terrestrial
links (see :mod:`backbone.datasets.global_terrestrial`), as the cables really cross Egypt by land.
"""

# ruff: noqa: RUF005  (waypoint lists read best as chain + chain)
from __future__ import annotations

from dataclasses import dataclass, field

Point = tuple[float, float]
"""(lon, lat) in degrees."""

# ---------------------------------------------------------------------------------------- sea lanes
# Reusable waypoint chains, (lon, lat), west->east or as named. Longitudes stay in [-180, 180]; the
# geometry code unwraps them so trans-Pacific routes are continuous across the antimeridian.
SEA: dict[str, list[Point]] = {
    # Western Mediterranean and Gibraltar
    "gibraltar": [(-9.3, 36.8), (-7.5, 36.3), (-6.2, 35.95), (-5.6, 35.97), (-4.8, 36.1), (-2.5, 36.3),
                  (0.0, 37.2), (2.5, 38.3), (5.0, 39.5)],
    # Marseille south past Sardinia, the Sicily channel, south of Crete
    "med-marseille": [(5.3, 43.0), (6.6, 41.0), (8.6, 38.3), (11.5, 37.4)],
    "med-genoa": [(8.9, 44.1), (9.4, 43.5), (9.9, 42.1), (11.0, 40.0), (11.9, 38.3), (11.6, 37.5)],
    "med-central": [(13.2, 36.3), (14.3, 35.45), (16.0, 35.0), (19.0, 34.3), (25.0, 34.3)],
    "to-abu-talat": [(28.5, 32.1), (29.4, 31.5)],
    "to-port-said": [(30.0, 32.2), (32.3, 31.7)],
    "to-tel-aviv": [(30.0, 33.0), (34.2, 32.3)],
    # Red Sea, north to south (Gulf of Suez, Strait of Gubal, ... Bab-el-Mandeb)
    "gulf-of-suez": [(32.8, 28.9), (33.3, 28.3), (33.7, 27.95), (34.1, 27.6)],
    "red-sea-north": [(34.7, 26.3), (36.0, 24.2), (37.6, 22.0)],
    "red-sea-south": [(39.6, 19.0), (40.8, 16.5), (41.8, 14.7), (42.6, 13.6), (43.1, 12.9), (43.33, 12.55)],
    "gulf-of-aqaba": [(34.85, 29.1), (34.65, 28.4), (34.43, 27.96)],
    "jeddah-approach": [(38.8, 21.5)],
    "djibouti-approach": [(43.5, 12.0), (43.35, 11.75)],
    # Gulf of Aden east to the Arabian Sea (north of Socotra)
    "gulf-of-aden": [(44.5, 12.3), (48.0, 13.1), (51.2, 13.2), (53.5, 13.4)],
    # Oman: round Ras al Hadd into the Gulf of Oman
    "oman-south": [(58.5, 17.0), (60.2, 20.0), (60.6, 22.5), (59.2, 23.8)],
    "to-barka": [(58.2, 23.9)],
    "to-fujairah": [(57.2, 24.9), (56.6, 25.1)],
    # Strait of Hormuz into the Gulf, to Doha (from the Gulf of Oman)
    "hormuz": [(56.75, 26.0), (56.55, 26.55), (55.6, 26.35), (54.0, 26.0), (52.0, 25.9)],
    "to-doha": [(51.75, 25.35)],
    # Arabian Sea: Gulf of Aden <-> Mumbai; Gulf of Oman <-> Mumbai
    "arabian-sea": [(60.0, 15.5), (68.0, 18.0)],
    "to-mumbai": [(72.4, 19.0)],
    "gulf-of-oman-east": [(58.0, 24.9), (60.8, 23.3), (66.0, 21.5)],
    # West coast of India round Sri Lanka to Chennai
    "india-west": [(72.4, 18.6), (73.0, 14.0), (75.2, 9.0), (77.5, 7.3)],
    "sri-lanka-south": [(79.8, 5.5), (81.6, 5.6), (82.3, 7.6)],
    "to-chennai": [(81.0, 11.5), (80.6, 13.0)],
    # Arabian Sea to Sri Lanka via the Eight Degree Channel (Minicoy / Maldives)
    "eight-degree": [(62.0, 12.5), (73.3, 7.7), (77.5, 6.6)],
    # Bay of Bengal to the Strait of Malacca (Great Channel between Nicobar and Sumatra)
    "bay-of-bengal": [(86.0, 5.6), (92.5, 6.3), (94.8, 6.0)],
    "chennai-to-nicobar": [(81.0, 13.0), (85.0, 11.2), (92.0, 7.0), (94.8, 6.0)],
    "malacca": [(96.5, 5.9), (98.7, 4.9), (99.6, 4.2), (100.5, 3.3), (101.3, 2.6), (102.3, 1.9),
                (103.2, 1.3), (103.6, 1.17), (103.9, 1.2)],
    # Singapore east into the South China Sea, up to Hong Kong
    "singapore-east": [(104.4, 1.35), (104.6, 1.7)],
    "south-china-sea": [(105.5, 3.5), (107.5, 7.0), (109.6, 10.6), (110.3, 12.5), (111.0, 15.3),
                        (113.3, 20.2)],
    "to-tko": [(114.4, 22.0)],
    # Hong Kong east through the Luzon Strait (Bashi Channel), east of Taiwan
    "luzon-strait": [(116.5, 21.3), (119.5, 21.0), (121.0, 21.3)],
    "taiwan-east": [(122.3, 22.8), (122.6, 24.0)],
    "to-toucheng": [(122.1, 24.8)],
    # Ryukyu arc (Miyako Strait) up the Pacific side of Japan
    "ryukyu-pacific": [(124.0, 23.7), (126.3, 24.9), (128.3, 25.6), (131.0, 28.5), (132.0, 31.0), (133.3, 32.2),
                       (134.8, 32.9)],
    "to-shima": [(136.9, 34.0)],
    "to-boso": [(137.5, 33.4), (139.7, 33.5), (140.2, 34.4)],
    # Korea Strait from the south of Kyushu (Osumi Strait, west of Kyushu, Tsushima east channel)
    "kyushu-west": [(131.8, 31.0), (130.75, 30.8), (129.9, 31.2), (129.35, 31.6), (128.3, 32.3), (128.7, 33.4),
                    (129.0, 34.2), (129.0, 34.8)],
    # East China Sea from Busan south-west
    "east-china-sea": [(129.0, 34.8), (128.0, 33.8), (126.0, 32.5), (123.5, 29.5)],
    "to-toucheng-north": [(122.5, 26.2), (122.1, 25.0)],
    "taiwan-strait": [(121.0, 26.3), (120.3, 25.2), (119.9, 24.3), (118.9, 23.0), (116.5, 22.2), (114.6, 22.1)],
    # Java Sea, Gaspar Strait, Sunda Strait; Indian Ocean off Western Australia
    "singapore-south": [(105.0, 1.2), (105.3, 0.3), (106.2, -0.8), (107.3, -2.3), (107.0, -4.5)],
    "to-jakarta": [(106.9, -5.8)],
    "sunda-strait": [(105.95, -5.8), (105.78, -6.1), (105.0, -6.3), (104.5, -7.5)],
    "west-australia": [(110.0, -15.0), (112.5, -25.0), (114.5, -30.0), (115.3, -31.7)],
    # Southern Australia: Cape Leeuwin, the Great Australian Bight, Bass Strait, up to Sydney
    "south-australia": [(115.3, -32.0), (114.6, -35.0), (120.0, -35.8), (131.0, -33.8), (137.0, -36.5),
                        (141.0, -39.0), (143.6, -39.3), (145.5, -39.6), (147.0, -39.3), (149.0, -38.2),
                        (150.3, -37.7), (150.6, -36.5), (151.6, -34.2)],
    # North Atlantic approaches
    "nj-out": [(-73.6, 40.1)],
    "li-out": [(-72.9, 40.5)],
    "ma-out": [(-70.5, 42.45), (-69.6, 42.3)],
    "va-out": [(-74.8, 36.7)],
    "ns-out": [(-63.3, 44.3), (-55.0, 45.2)],
    "to-bude": [(-8.0, 50.6), (-4.8, 50.85)],
    "to-bilbao": [(-8.0, 44.5), (-4.0, 43.8), (-3.0, 43.6)],
    "to-brean": [(-8.0, 51.1), (-5.5, 51.2), (-4.3, 51.4), (-3.4, 51.3)],
    "to-cork": [(-9.5, 51.25), (-8.6, 51.45)],
    "north-of-scotland": [(-10.5, 56.5), (-8.0, 59.2), (-4.0, 59.6), (-2.1, 59.45),
                          (0.5, 58.5), (5.5, 56.6), (7.7, 55.8)],
    # Western Atlantic south: US East Coast to Brazil (outside the Antilles, round Cabo Branco)
    "brazil-northeast": [(-38.0, 0.0), (-37.5, -2.4), (-34.6, -4.6), (-33.8, -7.0)],
    "brazil-east": [(-34.6, -9.5), (-37.0, -13.5), (-37.9, -17.0), (-39.0, -20.5), (-41.0, -23.6), (-45.0, -24.6),
                    (-46.3, -24.3)],
    "to-fortaleza": [(-38.3, -3.4)],
    # Eastern Atlantic: Portugal south past the Canaries and Cape Verde
    "sines-out": [(-9.3, 37.9), (-13.5, 33.5), (-18.8, 29.5), (-19.0, 26.0)],
    "west-africa": [(-19.5, 20.0), (-18.5, 12.0), (-10.0, 3.0), (2.0, 3.0), (3.4, 6.1)],
    "lagos-to-cape": [(3.4, 6.1), (4.5, 2.0), (6.0, -3.0), (10.0, -20.0), (16.0, -32.5), (18.0, -33.6)],
    # East Africa: Gulf of Aden round Cape Guardafui to Mombasa, Mozambique Channel to Cape Town
    "guardafui": [(44.5, 12.3), (48.0, 12.6), (51.7, 12.0), (52.2, 11.0)],
    "somalia": [(49.5, 4.0), (44.0, -2.0), (40.6, -4.1)],
    "mozambique-channel": [(40.8, -5.5), (42.0, -12.0), (40.0, -20.0), (35.5, -28.0), (27.0, -35.5),
                           (20.0, -35.6), (17.8, -34.3), (18.1, -33.7)],
    # Pacific approaches
    "la-out": [(-118.6, 33.75), (-119.2, 33.7), (-121.0, 33.3)],
    "grover-out": [(-121.2, 34.9)],
    "bandon-out": [(-124.8, 43.0)],
    "pacific-city-out": [(-124.4, 45.1)],
    "alberni-out": [(-125.3, 48.8)],
    "oahu-north": [(-157.8, 22.0), (-158.5, 21.6)],
    "guam-north": [(144.6, 13.8)],
    # Shared trunks of branched systems (branches leave at a branching unit at the chain's end)
    "plcn-trunk": [(-140.0, 33.0), (-160.0, 35.0), (-180.0, 34.5), (160.0, 30.5), (140.0, 25.3)],
    "jupiter-trunk": [(-140.0, 38.5), (-160.0, 41.0), (-180.0, 41.0), (170.0, 39.5), (155.0, 36.0),
                      (145.0, 34.3)],
    "faster-trunk": [(-140.0, 45.5), (-160.0, 46.5), (-180.0, 45.5), (165.0, 42.0), (150.0, 37.5),
                     (143.0, 34.5)],
    "grace-hopper-trunk": [(-60.0, 42.0), (-40.0, 46.0), (-15.0, 47.5)],
    "amitie-trunk": [(-60.0, 42.8), (-40.0, 47.0), (-15.0, 48.0)],
    "havfrue-trunk": [(-60.0, 42.8), (-40.0, 50.0), (-20.0, 54.0)],
    "exa-trunk": [(-40.0, 49.5), (-20.0, 51.0), (-12.0, 51.0)],
    "sydney-east": [(151.6, -33.9)],
}


def via(*parts: str | list[Point]) -> list[Point]:
    """Concatenate named ``SEA`` chains and literal point lists into one waypoint list."""
    out: list[Point] = []
    for p in parts:
        out.extend(SEA[p] if isinstance(p, str) else p)
    return out


def rev(*parts: str | list[Point]) -> list[Point]:
    """Like :func:`via`, reversed (for a segment drawn the other way)."""
    return list(reversed(via(*parts)))


@dataclass(frozen=True)
class Segment:
    """One modelled segment between two landing sites (``site_a`` -> ``site_b`` along ``waypoints``)."""

    site_a: str
    site_b: str
    waypoints: list[Point]
    lit_gbps: float | None = None  # None: the system's lit_gbps


@dataclass(frozen=True)
class CableSystem:
    """A named submarine cable system and the segments modelled.

    Attributes
    ----------
    name
        System name as on TeleGeography's Submarine Cable Map.
    rfs_year
        Ready-for-service year (first segment).
    published_length_km
        System length as published (all branches), or None when not published.
    design_tbps
        Design capacity as announced by the owners (Tbps, all fibre pairs).
    complete
        Whether the modelled segments cover the published system (so their length must match it
        within ~15 %); otherwise only a part is modelled and its length must not exceed it.
    lit_gbps
        Capacity per direction this operator has lit on each segment (estimate).
    landings
        Landing points as published (for the record; only those in this scenario are modelled).
    segments
        Modelled segments.
    """

    name: str
    rfs_year: int
    published_length_km: float | None
    design_tbps: float
    complete: bool
    lit_gbps: float
    landings: str
    segments: list[Segment] = field(default_factory=list)


S = Segment
CABLES: list[CableSystem] = [
    # ---------------------------------------------------------------- trans-Atlantic
    CableSystem("MAREA", 2018, 6605, 200, True, 40_000, "Virginia Beach (US); Sopelana/Bilbao (ES)", [
        S("virginia-beach", "bilbao", via("va-out", [(-60.0, 39.5), (-40.0, 43.0), (-20.0, 45.0)], "to-bilbao")),
    ]),
    CableSystem("Dunant", 2021, 6400, 250, True, 40_000, "Virginia Beach (US); Saint-Hilaire-de-Riez (FR)", [
        S("virginia-beach", "saint-hilaire",
          via("va-out", [(-60.0, 40.0), (-40.0, 44.5), (-20.0, 46.5), (-5.0, 46.6), (-2.6, 46.6)])),
    ]),
    CableSystem("Grace Hopper", 2022, None, 352, True, 40_000,
                "Bellport NY (US); Bude (GB); Sopelana/Bilbao (ES)", [
        S("bellport-ny", "bude", via("li-out", "grace-hopper-trunk", "to-bude")),
        S("bellport-ny", "bilbao", via("li-out", "grace-hopper-trunk", "to-bilbao"), 30_000),
    ]),
    CableSystem("Amitié", 2023, 6783, 400, True, 40_000, "Lynn MA (US); Bude (GB); Le Porge (FR)", [
        S("lynn-ma", "bude", via("ma-out", "amitie-trunk", "to-bude")),
        S("lynn-ma", "le-porge", via("ma-out", "amitie-trunk", [(-5.0, 45.5), (-1.6, 44.9)]), 30_000),
    ]),
    CableSystem("Havfrue/AEC-2", 2020, 7200, 108, True, 20_000,
                "Wall Township NJ (US); Blaabjerg (DK); Kristiansand (NO); Old Head (IE)", [
        S("wall-nj", "blaabjerg", via("nj-out", "havfrue-trunk", "north-of-scotland")),
        S("wall-nj", "cork", via("nj-out", "havfrue-trunk", [(-12.0, 51.5)], "to-cork"), 10_000),
    ]),
    CableSystem("EXA Express", 2015, 4600, 53, True, 15_000,
                "Halifax NS (CA); Brean (GB); Cork (IE) branch (Hibernia Express)", [
        S("halifax", "brean", via("ns-out", "exa-trunk", "to-brean")),
        S("halifax", "cork", via("ns-out", "exa-trunk", "to-cork"), 5_000),
    ]),
    CableSystem("Seabras-1", 2017, 10800, 72, True, 15_000, "Wall Township NJ (US); Praia Grande (BR)", [
        S("wall-nj", "praia-grande", via("nj-out", [(-70.0, 37.0), (-55.0, 20.0)], "brazil-northeast",
                                         "brazil-east")),
    ]),
    CableSystem("Firmina", 2023, None, 240, False, 20_000,
                "Myrtle Beach SC (US); Praia Grande (BR); Las Toninas (AR); Punta del Este (UY)", [
        S("myrtle-beach", "praia-grande", via([(-78.4, 33.5), (-72.0, 30.0), (-55.0, 18.0)], "brazil-northeast",
                                              "brazil-east")),
    ]),
    CableSystem("Monet", 2017, 10556, 64, True, 10_000, "Boca Raton FL (US); Fortaleza, Praia Grande (BR)", [
        S("boca-raton", "fortaleza", via([(-79.8, 27.0), (-79.5, 27.6), (-77.0, 28.2), (-70.0, 24.5), (-58.0, 20.0),
                                          (-52.0, 10.0), (-41.0, -1.8)], "to-fortaleza")),
        S("fortaleza", "praia-grande", via("to-fortaleza", [(-34.3, -5.5), (-33.8, -7.0)], "brazil-east")),
    ]),
    CableSystem("EllaLink", 2021, 6200, 100, True, 10_000,
                "Sines (PT); Fortaleza (BR); Madeira, Cape Verde branches", [
        S("sines", "fortaleza", via([(-9.3, 37.9), (-14.0, 33.5), (-19.5, 26.0), (-21.5, 14.0), (-33.0, 0.0)],
                                    "to-fortaleza")),
    ]),
    CableSystem("Curie", 2020, 10476, 72, True, 15_000, "El Segundo CA (US); Valparaíso (CL); Panama branch", [
        S("la-south-bay", "valparaiso", via([(-118.45, 33.7), (-118.2, 33.45), (-117.7, 32.7), (-117.9, 31.0),
                                             (-117.5, 29.5), (-108.0, 10.0), (-85.0, -10.0),
                                             (-74.0, -30.0), (-72.0, -33.0)])),
    ]),
    CableSystem("AMX-1", 2013, 17800, 50, False, 8_000,
                "Miami, Jacksonville (US); Barranquilla, Cartagena, San Andrés (CO); Cancún (MX); "
                "Puerto Barrios (GT); Puerto Plata (DO); San Juan (PR); Fortaleza, Salvador, Rio de Janeiro (BR)", [
        S("barranquilla", "miami", [(-74.95, 11.15), (-74.6, 14.5), (-74.1, 18.6), (-73.8, 20.0), (-74.6, 21.0),
                                    (-76.2, 21.6), (-77.6, 22.4), (-78.6, 22.85), (-79.6, 23.35), (-79.45, 24.0),
                                    (-79.75, 25.0), (-80.05, 25.7)]),
    ]),
    # ---------------------------------------------------------------- Europe and Africa
    CableSystem("Equiano", 2023, 15000, 144, False, 15_000,
                "Sines (PT); Lomé (TG); Lagos (Lekki, Elegushi beach; NG); Swakopmund (NA); Melkbosstrand (ZA); St Helena", [
        S("sines", "lekki", via("sines-out", "west-africa")[:-1] + [(3.49, 6.2)]),
        S("lekki", "cape-town", [(3.49, 6.2)] + via("lagos-to-cape")[1:]),
    ]),
    CableSystem("2Africa", 2023, 45000, 180, False, 20_000,
                "46 landings round Africa, Europe (Bude, Carcavelos, Marseille, Genoa, Barcelona), Port Said, "
                "Ras Ghareb, Jeddah/Yanbu, Djibouti, Mombasa, Mtunzini, Yzerfontein, Lagos; 2Africa Pearls to the Gulf "
                "(Barka, Doha, Al Khobar) and India (Mumbai)", [
        S("bude", "sines", [(-5.0, 50.85), (-6.5, 50.4), (-7.0, 48.5), (-10.5, 43.5), (-10.3, 40.0), (-9.3, 38.2)]),
        S("sines", "lagos", via([(-9.4, 37.8), (-13.7, 33.4), (-19.0, 29.4), (-19.2, 26.0), (-19.7, 20.0),
                                 (-18.7, 12.0), (-10.0, 2.8), (2.0, 2.8)], [(3.5, 6.1)])),
        S("lagos", "cape-town", [(3.3, 6.1), (4.3, 2.0), (5.8, -3.0), (9.8, -20.0), (15.8, -32.6), (17.9, -33.7)]),
        S("cape-town", "mombasa", rev("mozambique-channel")),
        S("mombasa", "djibouti", rev("guardafui", "somalia") + via("djibouti-approach")),
        S("djibouti", "jeddah", rev("red-sea-south", "djibouti-approach") + via("jeddah-approach")),
        S("jeddah", "ras-ghareb", via("jeddah-approach") + rev("gulf-of-suez", "red-sea-north")[:-1]),
        S("port-said", "marseille", rev("med-marseille", "med-central", "to-port-said")),
        S("marseille", "genoa", [(5.4, 42.95), (6.4, 42.8), (7.3, 43.35), (8.9, 44.1)]),
        S("djibouti", "barka", via("djibouti-approach")[::-1] + via("gulf-of-aden", "oman-south", "to-barka")),
        S("barka", "doha", via("to-barka")[::-1] + [(58.0, 24.3), (56.9, 25.2)] + via("hormuz", "to-doha")),
        S("doha", "dammam", [(51.85, 25.8), (51.5, 26.4), (50.75, 26.55), (50.35, 26.45)]),
        S("barka", "mumbai-landing", [(58.6, 24.0), (60.8, 23.0), (66.0, 21.5), (72.4, 19.0)]),
    ]),
    CableSystem("PEACE", 2022, 15000, 192, False, 20_000,
                "Marseille (FR); Cyprus; Abu Talat, Zafarana (EG); Djibouti; Mombasa (KE); Karachi (PK); "
                "Seychelles; Maldives; Singapore", [
        S("marseille", "abu-talat", via("med-marseille", "med-central", "to-abu-talat")),
        S("zafarana", "djibouti", via("gulf-of-suez", "red-sea-north", "red-sea-south", "djibouti-approach")),
        S("djibouti", "mombasa", via("djibouti-approach")[::-1] + via("guardafui", "somalia")),
        S("djibouti", "singapore-landing", via("djibouti-approach")[::-1]
          + via("gulf-of-aden", "eight-degree", "sri-lanka-south")[:-1] + via("bay-of-bengal", "malacca")),
    ]),
    CableSystem("SEA-ME-WE 5", 2016, 20000, 24, False, 8_000,
                "Toulon (FR); Catania (IT); Zafarana (EG); Jeddah (SA); Djibouti; Kalba (AE); Karachi (PK); "
                "Matara (LK); Cox's Bazar (BD); Ngwe Saung (MM); Melaka (MY); Dumai (ID); Tuas (SG)", [
        S("marseille", "abu-talat", via([(5.6, 43.0), (6.8, 41.0), (8.8, 38.3), (11.6, 37.3)], "med-central",
                                        "to-abu-talat")),
        S("zafarana", "jeddah", via("gulf-of-suez", "red-sea-north", "jeddah-approach")),
        S("jeddah", "djibouti", via("jeddah-approach", "red-sea-south", "djibouti-approach")),
        S("djibouti", "fujairah", via("djibouti-approach")[::-1] + via("gulf-of-aden", "oman-south", "to-fujairah")),
        S("fujairah", "singapore-landing", rev("to-fujairah") + [(60.8, 23.0), (66.0, 17.0)]
          + via("eight-degree")[1:] + via("sri-lanka-south")[:-1] + via("bay-of-bengal", "malacca")),
    ]),
    CableSystem("SEA-ME-WE 6", 2025, 19200, 126, False, 25_000,
                "Marseille (FR); Egypt; Djibouti; Saudi Arabia; Mumbai, Chennai (IN); Sri Lanka; Bangladesh; "
                "Maldives; Malaysia; Singapore", [
        S("marseille", "abu-talat", via([(5.2, 43.0), (6.4, 41.0), (8.4, 38.3), (11.4, 37.5)], "med-central",
                                        "to-abu-talat")),
        S("zafarana", "djibouti", via("gulf-of-suez", "red-sea-north", "red-sea-south", "djibouti-approach")),
        S("djibouti", "mumbai-landing", via("djibouti-approach")[::-1] + via("gulf-of-aden", "arabian-sea",
                                                                              "to-mumbai")),
        S("mumbai-landing", "chennai-landing", via("india-west", "sri-lanka-south", "to-chennai")),
        S("chennai-landing", "singapore-landing", via("chennai-to-nicobar", "malacca")),
    ]),
    CableSystem("AAE-1", 2017, 25000, 40, False, 10_000,
                "Marseille (FR); Chania (GR); Bari (IT); Abu Talat, Zafarana (EG); Jeddah (SA); Djibouti; "
                "Aden (YE); Doha (QA); Fujairah (AE); Barka (OM); Karachi (PK); Mumbai (IN); Myanmar; "
                "Thailand; Malaysia; Singapore; Cambodia; Vietnam; Hong Kong", [
        S("marseille", "abu-talat", via("med-marseille", "med-central", "to-abu-talat")),
        S("zafarana", "jeddah", via("gulf-of-suez", "red-sea-north", "jeddah-approach")),
        S("jeddah", "djibouti", via("jeddah-approach", "red-sea-south", "djibouti-approach")),
        S("djibouti", "fujairah", via("djibouti-approach")[::-1] + via("gulf-of-aden", "oman-south", "to-fujairah")),
        S("fujairah", "doha", via("to-fujairah")[1:] + via("hormuz", "to-doha")),
        S("fujairah", "mumbai-landing", via("to-fujairah")[::-1] + via("gulf-of-oman-east", "to-mumbai")),
        S("mumbai-landing", "singapore-landing", via("india-west") + via("sri-lanka-south")[:-1]
          + via("bay-of-bengal", "malacca")),
        S("singapore-landing", "tseung-kwan-o", via("singapore-east", "south-china-sea", "to-tko")),
    ]),
    CableSystem("IMEWE", 2010, 12091, 5.6, True, 2_000,
                "Mumbai (IN); Karachi (PK); Fujairah (AE); Jeddah (SA); Zafarana, Alexandria (EG); Tripoli (LB); "
                "Catania (IT); Marseille (FR)", [
        S("mumbai-landing", "fujairah", via("to-mumbai") + rev("gulf-of-oman-east", "to-fujairah")[1:]),
        S("fujairah", "jeddah", rev("gulf-of-aden", "oman-south", "to-fujairah") + [(43.8, 12.3)]
          + rev("red-sea-south") + via("jeddah-approach")),
        S("jeddah", "zafarana", via("jeddah-approach") + rev("gulf-of-suez", "red-sea-north")),
        S("abu-talat", "marseille", rev("med-marseille", "med-central", "to-abu-talat")),
    ]),
    CableSystem("EIG", 2011, 15000, 3.84, False, 1_500,
                "Bude (GB); Sesimbra (PT); Gibraltar; Monaco; Tripoli (LY); Abu Talat, Zafarana (EG); Jeddah (SA); "
                "Djibouti; Barka (OM); Fujairah (AE); Mumbai (IN)", [
        S("bude", "sines", [(-5.2, 50.9), (-6.7, 50.3), (-7.3, 48.4), (-10.7, 43.5), (-10.5, 40.0), (-9.4, 38.0)]),
        S("sines", "marseille", via("gibraltar", [(5.4, 42.8)])),
        S("marseille", "abu-talat", via([(5.5, 42.9), (6.9, 41.0), (8.2, 38.5), (11.7, 37.3)], "med-central",
                                        "to-abu-talat")),
        S("zafarana", "jeddah", via("gulf-of-suez", "red-sea-north", "jeddah-approach")),
        S("jeddah", "djibouti", via("jeddah-approach", "red-sea-south", "djibouti-approach")),
        S("djibouti", "fujairah", via("djibouti-approach")[::-1] + via("gulf-of-aden", "oman-south", "to-fujairah")),
        S("fujairah", "mumbai-landing", via("to-fujairah")[::-1] + via("gulf-of-oman-east", "to-mumbai")),
    ]),
    CableSystem("Blue", 2024, None, 218, False, 25_000,
                "Genoa (IT); Corsica (FR); Chania (GR); Tel Aviv (IL) (Blue-Raman north half)", [
        S("genoa", "tel-aviv-landing", via("med-genoa", "med-central", "to-tel-aviv")),
    ]),
    CableSystem("Raman", 2025, None, 218, False, 25_000,
                "Aqaba (JO); Duba (SA); Salalah, Barka (OM); Mumbai (IN) (Blue-Raman south half)", [
        S("aqaba", "barka", via("gulf-of-aqaba", "red-sea-north", [(38.3, 20.8)], "red-sea-south", "gulf-of-aden",
                                "oman-south", "to-barka")),
        S("barka", "mumbai-landing", [(58.5, 23.95), (60.8, 23.1), (66.0, 21.3), (72.4, 18.9)]),
    ]),
    CableSystem("IEX", 2025, 9775, 200, False, 25_000,
                "Savona (IT); Tympaki (GR); Egypt; Jeddah (SA); Djibouti; Salalah (OM); Mumbai (IN)", [
        S("genoa", "port-said", via("med-genoa", "med-central", "to-port-said")),
        S("ras-ghareb", "jeddah", via("gulf-of-suez")[1:] + via("red-sea-north", "jeddah-approach")),
        S("jeddah", "djibouti", via("jeddah-approach", "red-sea-south", "djibouti-approach")),
        S("djibouti", "mumbai-landing", via("djibouti-approach")[::-1] + via("gulf-of-aden", "arabian-sea",
                                                                              "to-mumbai")),
    ]),
    CableSystem("Concerto", 2001, None, 1.6, False, 600, "Sizewell/Lowestoft (GB); Zandvoort (NL); Belgium", [
        S("lowestoft", "zandvoort", [(2.5, 52.45)]),
    ]),
    CableSystem("CeltixConnect", 2012, 131, 8, True, 3_200, "Dublin (IE); Holyhead (GB)", [
        S("dublin", "holyhead", [(-6.05, 53.33), (-5.6, 53.22), (-5.0, 53.2), (-4.75, 53.33)]),
    ]),
    CableSystem("CrossChannel Fibre", 2021, None, 100, False, 16_000, "Peacehaven/Brighton (GB); Veules-les-Roses (FR)", [
        S("peacehaven", "veules", [(0.2, 50.5), (0.7, 50.0)]),
    ]),
    # ---------------------------------------------------------------- India and intra-Asia
    CableSystem("MIST", 2024, 8100, 216, False, 30_000,
                "Mumbai, Chennai (IN); Myanmar; Thailand; Malaysia; Singapore", [
        S("mumbai-landing", "chennai-landing", via([(72.3, 18.6), (72.9, 14.0), (75.1, 9.0), (77.4, 7.2),
                                                    (79.8, 5.4), (81.7, 5.5), (82.4, 7.6)], "to-chennai")),
        S("chennai-landing", "singapore-landing", via([(81.0, 13.1), (85.0, 11.4), (92.0, 7.1)], [(94.8, 6.0)],
                                                      "malacca")),
    ]),
    CableSystem("IAX", 2024, 5800, 200, False, 30_000,
                "Mumbai, Chennai (IN); Sri Lanka; Morib (MY); Satun (TH); Singapore", [
        S("mumbai-landing", "chennai-landing", via("india-west", "sri-lanka-south", "to-chennai")),
        S("chennai-landing", "singapore-landing", via("chennai-to-nicobar", "malacca")),
    ]),
    CableSystem("SJC2", 2021, 10500, 144, False, 25_000,
                "Chikura (JP); Busan (KR); Lingang (CN); Fangshan (TW); Tseung Kwan O (HK); Quy Nhon (VN); "
                "Songkhla (TH); Changi (SG)", [
        S("chikura", "busan", via([(140.1, 34.6), (140.2, 34.3), (139.7, 33.5), (137.5, 33.4)], "to-shima")[:-1]
          + rev("ryukyu-pacific")[:2] + via("kyushu-west")),
        S("busan", "tseung-kwan-o", via("east-china-sea", "taiwan-strait")),
        S("tseung-kwan-o", "singapore-landing", rev("singapore-east", "south-china-sea", "to-tko")),
    ]),
    CableSystem("APG", 2016, 10400, 54.8, False, 10_000,
                "Maruyama, Shima (JP); Busan (KR); Nanhui, Chongming (CN); Toucheng (TW); Tseung Kwan O (HK); "
                "Da Nang (VN); Kuantan (MY); Tuas (SG)", [
        S("maruyama", "busan", [(139.8, 34.8)] + rev("to-boso")[1:] + rev("ryukyu-pacific")[:2]
          + via("kyushu-west")),
        S("busan", "toucheng", via("east-china-sea", "to-toucheng-north")),
        S("toucheng", "tseung-kwan-o", via("to-toucheng") + rev("luzon-strait", "taiwan-east") + rev("to-tko")),
        S("tseung-kwan-o", "singapore-landing", rev("singapore-east", "south-china-sea", "to-tko")),
    ]),
    CableSystem("ASE", 2012, 7800, 40, False, 8_000,
                "Maruyama (JP); Batangas (PH); Chung Hom Kok (HK); Mersing (MY); Singapore", [
        S("maruyama", "tseung-kwan-o", [(139.8, 34.8)] + rev("ryukyu-pacific", "to-boso")[2:]
          + rev("luzon-strait") + rev("to-tko")),
        S("tseung-kwan-o", "singapore-landing", rev("singapore-east", "south-china-sea", "to-tko")),
        S("batangas", "tseung-kwan-o", [(120.98, 13.6), (120.6, 13.5), (119.8, 13.9), (116.5, 19.5)]
          + via("to-tko"), 5_000),
    ]),
    CableSystem("Apricot", 2024, 12000, 190, False, 25_000,
                "Minamiboso (JP); Toucheng (TW); Guam; Philippines; Indonesia; Singapore", [
        S("chikura", "toucheng", via([(140.1, 34.6)]) + rev("ryukyu-pacific", "to-boso")[1:] + rev("to-toucheng")),
        S("toucheng", "singapore-landing", via("to-toucheng") + rev("south-china-sea", "luzon-strait",
                                                                     "taiwan-east")[2:] + rev("singapore-east")),
    ]),
    # ---------------------------------------------------------------- trans-Pacific
    CableSystem("JUPITER", 2020, 14557, 60, False, 20_000,
                "Hermosa Beach CA (US); Maruyama, Shima (JP); Daet (PH)", [
        S("la-south-bay", "maruyama", via("la-out", "jupiter-trunk", [(140.5, 34.6), (139.8, 34.85)])),
        S("la-south-bay", "shima", via("la-out", "jupiter-trunk", [(141.0, 33.1), (138.0, 33.5)], "to-shima")),
    ]),
    CableSystem("FASTER", 2016, 11629, 60, False, 20_000,
                "Bandon OR (US); Chikura, Shima (JP); Tanshui (TW) extension", [
        S("bandon", "chikura", via("bandon-out", "faster-trunk", [(140.3, 34.7)])),
        S("bandon", "shima", via("bandon-out", "faster-trunk", [(141.0, 33.3), (138.0, 33.4)], "to-shima")),
    ]),
    CableSystem("Unity", 2010, 9620, 7.68, True, 3_000, "Redondo Beach CA (US); Chikura (JP)", [
        S("la-south-bay", "chikura", via("la-out", [(-140.0, 38.2), (-160.0, 40.8), (-180.0, 40.8), (170.0, 39.2),
                                                    (155.0, 36.2), (145.0, 34.6), (140.3, 34.6)])),
    ]),
    CableSystem("PLCN", 2022, 12971, 144, True, 25_000,
                "El Segundo CA (US); Toucheng (TW); Baler (PH)", [
        S("la-south-bay", "toucheng", via("la-out", "plcn-trunk", [(130.0, 24.3), (124.0, 23.5), (122.5, 24.0)],
                                          "to-toucheng")),
        S("la-south-bay", "baler", via("la-out", "plcn-trunk", [(130.0, 19.0), (122.0, 15.8)])),
    ]),
    CableSystem("Topaz", 2023, None, 240, False, 30_000,
                "Port Alberni BC (CA); Shima, Takahagi (JP)", [
        S("port-alberni", "shima", via("alberni-out", [(-140.0, 49.5), (-165.0, 50.0), (-180.0, 49.0),
                                                       (165.0, 45.0), (150.0, 38.5), (142.5, 34.0), (138.0, 33.6)],
                                       "to-shima")),
    ]),
    CableSystem("NCP", 2018, 13618, 70, False, 15_000,
                "Pacific City OR (US); Maruyama (JP); Busan (KR); Chongming (CN); Toucheng (TW)", [
        S("pacific-city", "maruyama", via("pacific-city-out", [(-140.0, 47.0), (-160.0, 48.0), (-180.0, 47.0),
                                                               (165.0, 43.0), (150.0, 38.0), (142.0, 35.2),
                                                               (140.5, 34.6), (139.8, 34.8)])),
        S("maruyama", "busan", [(139.7, 34.8), (140.1, 34.3), (139.6, 33.4), (137.5, 33.3)]
          + rev("ryukyu-pacific")[:2] + via("kyushu-west")),
        S("busan", "toucheng", via([(128.9, 34.8), (127.9, 33.7), (125.9, 32.4), (123.4, 29.4)],
                                   "to-toucheng-north")),
    ]),
    CableSystem("SEA-US", 2017, 14500, 20, False, 5_000,
                "Hermosa Beach CA (US); Makaha HI (US); Piti (GU); Davao (PH); Manado (ID)", [
        S("la-south-bay", "oahu", via("la-out", [(-140.0, 27.0)], "oahu-north")),
        S("oahu", "guam", [(-158.5, 21.2), (-170.0, 19.0), (180.0, 18.0), (165.0, 16.0), (150.0, 14.0)]
          + via("guam-north")),
    ]),
    CableSystem("Hawaiki", 2018, 15000, 67, False, 15_000,
                "Pacific City OR (US); Kapolei HI (US); Tafuna (AS); Mangawhai (NZ); Sydney (AU)", [
        S("pacific-city", "oahu", via("pacific-city-out", [(-140.0, 33.0)], "oahu-north")),
        S("oahu", "mangawhai", [(-158.4, 21.0), (-165.0, 5.0), (-170.0, -14.0), (-170.2, -14.7), (-176.5, -25.0),
                                (176.5, -33.5), (175.0, -35.9), (174.75, -36.15)]),
        S("mangawhai", "sydney-landing", [(174.75, -36.15), (174.9, -35.5), (174.2, -34.6), (173.0, -33.9),
                                          (168.0, -33.5), (155.0, -34.0)] + via("sydney-east")),
    ]),
    CableSystem("Southern Cross NEXT", 2022, 15840, 72, False, 15_000,
                "Hermosa Beach CA (US); Kiritimati (KI); Tokelau; Savusavu (FJ); Takapuna (NZ); Sydney (AU)", [
        S("la-south-bay", "sydney-landing", via("la-out", [(-140.0, 15.0), (-157.0, 1.0), (-172.0, -9.0),
                                                           (178.0, -17.0), (170.0, -25.0), (160.0, -31.0)],
                                                "sydney-east")),
    ]),
    CableSystem("TGA", 2017, None, 20, True, 5_000, "Raglan (NZ); Narrabeen, Sydney (AU) (Tasman Global Access)", [
        S("raglan", "sydney-landing", [(174.7, -37.8), (172.0, -37.0), (165.0, -35.0), (158.0, -34.2)]
          + via("sydney-east")),
    ]),
    CableSystem("JGA-N", 2020, 2600, 36, True, 14_400, "Minamiboso (JP); Piti (GU) (Japan-Guam-Australia North)", [
        S("maruyama", "guam", [(139.8, 34.8), (140.8, 33.5), (141.5, 30.0), (143.5, 20.0)] + via("guam-north")),
    ]),
    CableSystem("JGA-S", 2020, 7000, 36, True, 14_400, "Piti (GU); Maroochydore, Sydney (AU) (JGA South)", [
        S("guam", "sydney-landing", [(144.6, 13.2), (149.0, 3.0), (156.5, -3.0), (161.5, -7.5), (163.3, -10.4),
                                     (157.5, -15.5), (155.0, -25.0), (153.5, -31.5)] + via("sydney-east")),
    ]),
    CableSystem("Bifrost", 2024, None, 180, False, 20_000,
                "Grover Beach CA (US); Guam; Davao (PH); Manado, Jakarta (ID); Singapore", [
        S("grover-beach", "guam", via("grover-out", [(-140.0, 27.0), (-150.0, 20.0), (-156.0, 17.8), (-175.0, 17.5),
                                                     (165.0, 15.0), (150.0, 13.9)], "guam-north")),
        S("guam", "jakarta", [(144.4, 13.2), (135.0, 8.0), (127.4, 5.5), (125.9, 5.2), (122.0, 4.5), (119.8, 1.5),
                              (118.6, -1.5), (116.5, -4.5), (110.0, -5.0)] + via("to-jakarta")),
        S("jakarta", "singapore-landing", via("to-jakarta") + rev("singapore-south") + [(104.45, 1.35)]),
    ]),
    # ---------------------------------------------------------------- Asia-Australia
    CableSystem("INDIGO-West", 2019, 4600, 36, True, 10_000, "Singapore; Jakarta (ID); Perth (AU)", [
        S("singapore-landing", "jakarta", [(104.45, 1.35)] + via("singapore-south", "to-jakarta")),
        S("jakarta", "perth", via("to-jakarta", [(106.4, -5.6)], "sunda-strait", "west-australia")),
    ]),
    CableSystem("INDIGO-Central", 2019, 4600, 36, True, 10_000, "Perth; Sydney (AU)", [
        S("perth", "sydney-landing", via("south-australia", "sydney-east")),
    ]),
    CableSystem("ASC", 2018, 4600, 40, True, 8_000, "Perth (AU); Tanjung Pakis (ID) branch; Singapore", [
        S("perth", "singapore-landing", rev("singapore-south", "sunda-strait", "west-australia")
          + [(104.45, 1.35)]),
    ]),
]

"""Candidate routes of the shipped global scenario: buildable capacity that does not exist yet.

Five groups (the ``kind`` of :data:`backbone.schema.CANDIDATES`):

* ``spectrum``: 1.6 Tbps modules of spectrum on a lit cable system between landings it serves where
  the operator has no capacity today (including systems that land at a second station of a metro,
  the "second metro entry" of Hong Kong, Taipei, Seoul, Mumbai, Chennai...).
* ``fibre_pair``: a whole fibre pair (~20 Tbps with today's SLTE) on a lit system the operator already
  rides, bought as an IRU and lit with its own line terminals.
* ``terrestrial``: new long-haul routes (dark-fibre IRU plus line system, or wavelengths across
  third-party national networks) that bypass a landing, a corridor or a metro.
* ``backhaul``: a diverse second route between a metro and its landing station (separate duct and
  building entry), the usual cure for a single backhaul link.
* ``cable``: announced systems not yet in service (Medusa, Humboldt), with their ready-for-service
  quarter in ``available_from``.

The figures are public where a source is named (:data:`SOURCES`) and **estimates** otherwise; every
candidate names its source key, and ``data/README.md`` lists them. Geometry follows the same sea-lane
chains as the cables (:mod:`backbone.datasets.global_cables`); where a candidate stands for "a cable
landing at another station plus its backhaul" the waypoints run through that landing, so length and
latency include the backhaul. SRLGs are derived by the builder with the links' own rules
(:func:`backbone.datasets.build_global.candidate_srlgs`): the cable system's SRLG, the landing SRLGs of
its ends, and every corridor its route crosses.
"""

# ruff: noqa: RUF005  (waypoint lists read best as chain + chain)
from __future__ import annotations

from dataclasses import dataclass, field

from backbone.datasets.global_cables import Point, rev, via

SCENARIO_QUARTER = "2026Q4"
"""The quarter the scenario describes (its ``version`` 2026.12); lead times of announced cables count
from here."""

# ---------------------------------------------------------------------------------------- cost model
SPECTRUM_MODULE_GBPS = 1600.0
"""One spectrum module: 4 x 400G waves (the same block as a submarine upgrade module of a link)."""
SPECTRUM_MODULE_FIXED_USD = 500_000.0
SPECTRUM_MODULE_USD_PER_KM = 400.0
"""Spectrum bought on a system the operator does not own: 500 k USD + 400 USD/km per 1.6 Tbps, a
36-month equivalent of the public wavelength prices (Atlantic 100G at 4-6 k USD a month: 16 x 100G x
5 k x 36 = 2.9 M USD for ~6,600 km). An estimate anchored on that figure."""
SPECTRUM_FIXED_USD = 2_000_000.0
"""One-off cost of joining a system: line terminals and transponder shelves, colocation and cross-
connects at two landing stations (estimate)."""
FIBRE_PAIR_GBPS = 20_000.0
"""One fibre pair with current SLTE: 20 Tbps (Medusa: 24 pairs x 20 Tbps; MAREA: 200 Tbps on 8 pairs)."""
FIBRE_PAIR_USD_PER_KM = 2_000.0
"""IRU of one fibre pair of a new SDM cable: ~1,640 USD/km (Medusa: 343 M USD / 8,700 km / 24 pairs;
Humboldt: 450-650 M USD for 14,800 km), rounded up for O&M (estimate from those figures)."""
FIBRE_PAIR_LIGHTING_USD = 6_000_000.0
"""Line terminals to light one pair end to end (estimate)."""
NEW_CABLE_FIXED_USD = 15_000_000.0
"""One-off cost of joining a new system: landing-party fees, backhaul, SLTE sites (estimate)."""
TERRESTRIAL_MODULE_GBPS = 400.0
"""One 400G wave, as the terrestrial upgrade module of a link."""
TERRESTRIAL_MODULE_FIXED_USD = 60_000.0
TERRESTRIAL_MODULE_USD_PER_KM = 30.0
"""A 400G wave (transponder pair plus line-system share): the scenario's own terrestrial module cost."""
TERRESTRIAL_ROUTE_USD_PER_KM = 4_000.0
"""A new long-haul route: dark-fibre IRU plus an amplified line system every ~80 km (estimate)."""
TERRESTRIAL_MAX_MODULES = 64
"""64 x 400G: a full C-band line system (25.6 Tbps)."""
BACKHAUL_USD_PER_KM = 8_000.0
BACKHAUL_ENTRY_USD = 1_500_000.0
"""A diverse backhaul: a new duct route (8 k USD/km) and a second building entry at both ends (estimate)."""

SOURCES: dict[str, str] = {
    "pricing": "Atlantic 100G wavelength 4-6 k USD MRC (subseacables.blogspot.com, Buyer Pricing Guidance: "
               "The Atlantic, 2024-10); spectrum cost is an estimate anchored on it",
    "fibre-pair": "Medusa: 24 fibre pairs x 20 Tbps, 8,700 km, EUR 326 M / USD 343 M (CommsUpdate 2022-06-24); "
                  "Humboldt 14,800 km, 450-650 M USD (DCD 2024-01-12); per-pair IRU and lighting are estimates",
    "terrestrial": "Estimate: dark-fibre IRU plus line system at 4 k USD/route-km; 400G waves at the scenario's "
                   "terrestrial module cost",
    "backhaul": "Estimate: diverse duct route 8 k USD/km plus 1.5 M USD for second building entries",
    "telegeography": "TeleGeography Submarine Cable Map (submarinecablemap.com): landing points of the system",
    "medusa": "Medusa: AFR-IX Telecom; 8,700 km, 24 pairs x 20 Tbps, EUR 326 M (CommsUpdate 2022-06-24); first "
              "landing Marseille Oct 2025, first phase early 2026, Port Said landing (MEA Tech Watch 2025-10-13; "
              "Subtel Forum 2023-10-02); ready-for-service quarters are estimates",
    "humboldt": "Humboldt: Desarrollo País, Google, OPT; Valparaíso-French Polynesia-Sydney, 14,800 km, "
                "450-650 M USD (DCD 2024-01-12); completion estimated 2026 by the US State Department; the "
                "quarter used (2027Q4) is an estimate allowing for delay",
}


@dataclass(frozen=True)
class CandidateRoute:
    """One candidate of the global scenario (see :data:`backbone.schema.CANDIDATES` for the columns).

    ``module_cost_usd`` / ``fixed_cost_usd`` of ``None`` are filled by the builder from the cost model
    above and the route length; ``cable_system`` names the system whose SRLG the candidate joins.
    """

    id: str
    name: str
    site_a: str
    site_b: str
    kind: str
    link_kind: str
    waypoints: list[Point] = field(default_factory=list)
    cable_system: str = ""
    max_modules: int = 8
    lead_time_quarters: int = 2
    available_from: str = ""
    sources: tuple[str, ...] = ()
    module_gbps: float | None = None
    module_cost_usd: float | None = None
    fixed_cost_usd: float | None = None


def C(id: str, name: str, a: str, b: str, kind: str, link_kind: str, waypoints: list[Point] | None = None,
      **kw: object) -> CandidateRoute:
    """Shorthand constructor (ids get the ``c-`` prefix)."""
    return CandidateRoute(f"c-{id}", name, a, b, kind, link_kind, list(waypoints or []), **kw)  # type: ignore[arg-type]


SPECTRUM_SOURCES = ("telegeography", "pricing")

# ------------------------------------------------------------------------------ the catalogue
CANDIDATES: list[CandidateRoute] = [
    # ----------------------------------------------------------- spectrum on lit systems, East Asia
    C("sjc2-tko-toucheng", "SJC2: spectrum Tseung Kwan O - Toucheng (Taiwan Strait)", "tseung-kwan-o", "toucheng",
      "spectrum", "submarine", rev("taiwan-strait") + via("to-toucheng-north"), cable_system="SJC2",
      sources=SPECTRUM_SOURCES),
    C("sjc2-johor-tko", "SJC2: spectrum Songkhla (TH) - Tseung Kwan O, backhaul Johor - Songkhla", "johor",
      "tseung-kwan-o", "spectrum", "submarine",
      [(103.45, 3.8), (103.45, 6.05), (101.5, 6.6), (100.6, 7.2), (102.5, 7.6), (106.0, 9.0), (109.6, 12.0),
       (111.0, 15.3), (113.3, 20.2)] + via("to-tko"), cable_system="SJC2", sources=SPECTRUM_SOURCES),
    C("adc-hk-batangas", "ADC: spectrum Batangas (PH) - Hong Kong, second Hong Kong landing", "batangas", "hong-kong",
      "spectrum", "submarine", [(120.98, 13.6), (120.6, 13.5), (119.8, 13.9), (116.5, 19.5), (114.3, 21.9),
                                (114.2, 22.2)],
      cable_system="ADC", sources=SPECTRUM_SOURCES),
    C("adc-hk-singapore", "ADC: spectrum Hong Kong - Singapore, second landings at both ends", "hong-kong",
      "singapore", "spectrum", "submarine", [(114.2, 22.2), (114.1, 21.8)] + rev("singapore-east", "south-china-sea"),
      cable_system="ADC", sources=SPECTRUM_SOURCES),
    C("bifrost-jakarta-singapore", "Bifrost: spectrum Jakarta - Singapore (second Singapore landing)", "jakarta",
      "singapore", "spectrum", "submarine", rev("singapore-south", "to-jakarta") + [(104.3, 1.25)],
      cable_system="Bifrost", sources=SPECTRUM_SOURCES),
    C("eac-hk-taipei", "EAC-C2C: spectrum Hong Kong - Pa Li (Taiwan Strait), second landings at both ends",
      "hong-kong", "taipei", "spectrum", "submarine", [(114.3, 22.15)] + rev("taiwan-strait")[1:-1]
      + [(120.6, 25.4), (121.3, 25.3)], cable_system="EAC-C2C", sources=SPECTRUM_SOURCES),
    C("eac-seoul-shima", "EAC-C2C: spectrum Shindu-ri (KR) - Shima (JP) south of Jeju and Kyushu, backhaul to "
      "Seoul", "seoul", "shima", "spectrum", "submarine",
      [(126.3, 36.8), (125.3, 35.5), (125.8, 33.0), (127.5, 32.4), (129.5, 30.6), (131.0, 30.4), (132.0, 31.0),
       (133.3, 32.2), (134.8, 32.9)] + via("to-shima"), cable_system="EAC-C2C", sources=SPECTRUM_SOURCES),
    C("faster-taipei-chikura", "FASTER: spectrum Tanshui (Taiwan) - Chikura, backhaul to Taipei", "taipei", "chikura",
      "spectrum", "submarine",
      [(121.4, 25.25), (121.9, 25.5), (122.6, 25.2), (124.0, 24.4)] + via("ryukyu-pacific")[1:] + via("to-boso"),
      cable_system="FASTER", sources=SPECTRUM_SOURCES),
    C("eac-seoul-taipei", "EAC-C2C: spectrum Shindu-ri (KR) - Pa Li (TW), backhaul to Seoul and Taipei", "seoul",
      "taipei", "spectrum", "submarine",
      [(126.3, 36.8), (125.3, 35.5), (124.5, 32.5), (123.2, 28.5), (122.0, 26.2), (121.4, 25.3)],
      cable_system="EAC-C2C", sources=SPECTRUM_SOURCES),
    C("ajc-shima-guam", "AJC: spectrum Shima - Guam", "shima", "guam", "spectrum", "submarine",
      [(136.9, 34.0), (138.5, 31.5), (141.0, 25.0), (143.8, 16.0)] + via("guam-north"), cable_system="AJC",
      max_modules=4, sources=SPECTRUM_SOURCES),
    C("ajc-guam-sydney", "AJC: spectrum Guam - Sydney", "guam", "sydney-landing", "spectrum", "submarine",
      [(144.8, 13.0), (150.0, 2.0), (157.0, -5.0), (162.0, -12.0), (158.0, -25.0), (153.0, -33.0)]
      + via("sydney-east"), cable_system="AJC", max_modules=4, sources=SPECTRUM_SOURCES),
    # ----------------------------------------------------------- spectrum, South and South-East Asia, Gulf, Africa
    C("mist-chennai-johor", "MIST: spectrum Chennai (second landing) - Satun (TH), backhaul across the isthmus to "
      "Johor", "chennai", "johor", "spectrum", "submarine",
      [(80.3, 12.9), (85.0, 11.4), (92.0, 8.6), (97.0, 7.2), (100.07, 6.65), (102.25, 6.12), (103.45, 6.05),
       (103.45, 3.8)], cable_system="MIST", sources=SPECTRUM_SOURCES),
    C("2africa-mumbai-barka", "2Africa Pearls: spectrum Mumbai (second landing) - Barka", "mumbai", "barka",
      "spectrum", "submarine", [(72.7, 18.9), (66.0, 21.0), (60.8, 22.9), (58.6, 23.9)], cable_system="2Africa",
      max_modules=16, sources=SPECTRUM_SOURCES),  # spectrum on two of the Pearls segment's fibre pairs
    C("teams-mombasa-fujairah", "TEAMS: spectrum Mombasa - Fujairah", "mombasa", "fujairah", "spectrum",
      "submarine", [(41.5, -3.0), (48.0, 3.0), (53.0, 10.5), (58.0, 17.5), (60.2, 20.0), (60.6, 22.5), (59.2, 23.8)]
      + via("to-fujairah"), cable_system="TEAMS", max_modules=4, sources=SPECTRUM_SOURCES),
    C("2africa-rasghareb-riyadh", "2Africa: spectrum Ras Ghareb - Duba (SA), backhaul to Riyadh", "ras-ghareb",
      "riyadh", "spectrum", "submarine",
      [(33.4, 28.0), (34.3, 27.7), (35.69, 27.35), (37.5, 27.0), (41.7, 27.5), (43.97, 26.33)],
      cable_system="2Africa", sources=SPECTRUM_SOURCES),
    # ----------------------------------------------------------- spectrum, Europe and the Atlantic
    C("wacs-lagos-brean", "WACS: spectrum Lagos - Highbridge (GB), landing beside Brean", "lagos", "brean",
      "spectrum", "submarine",
      rev("west-africa")[1:] + [(-19.0, 26.0), (-18.8, 29.5), (-13.5, 34.0), (-12.0, 39.0), (-11.5, 44.0),
                                (-8.6, 48.5)] + via("to-brean"),
      cable_system="WACS", max_modules=4, sources=SPECTRUM_SOURCES),
    C("jonah-telaviv-milan", "Jonah: spectrum Tel Aviv - Bari, backhaul Bari - Milan", "tel-aviv-landing", "milan",
      "spectrum", "submarine",
      [(33.0, 33.2), (28.0, 34.0), (23.0, 35.6), (20.0, 37.5), (18.7, 39.9), (16.87, 41.13), (14.2, 42.46),
       (12.6, 43.9), (11.34, 44.49)], cable_system="Jonah", max_modules=8, sources=SPECTRUM_SOURCES),
    C("rockabill-dublin-london", "Rockabill: spectrum Dublin - Southport, backhaul to London", "dublin", "london",
      "spectrum", "submarine", [(-6.05, 53.45), (-4.5, 53.6), (-3.0, 53.65), (-2.24, 53.48), (-1.5, 52.4)],
      cable_system="Rockabill", sources=SPECTRUM_SOURCES),
    C("crosschannel-london-paris", "CrossChannel Fibre: express wavelengths London - Peacehaven - Veules-les-Roses - "
      "Paris (bypassing the Channel Tunnel)", "london", "paris", "spectrum", "submarine",
      [(-0.00, 50.79), (0.2, 50.5), (0.7, 50.0), (0.80, 49.87), (1.10, 49.44)], cable_system="CrossChannel Fibre",
      max_modules=16, sources=SPECTRUM_SOURCES),
    C("sxnext-auckland-la", "Southern Cross NEXT: spectrum Takapuna (Auckland) - Hermosa Beach via Fiji, Tokelau, "
      "Kiritimati", "auckland", "la-south-bay", "spectrum", "submarine",
      [(174.77, -36.79), (174.95, -36.6), (175.6, -35.8), (178.0, -25.0), (178.0, -17.0), (-172.0, -9.0),
       (-157.0, 1.0), (-140.0, 15.0)] + rev("la-out"), cable_system="Southern Cross NEXT", max_modules=4,
      sources=SPECTRUM_SOURCES),
    # ----------------------------------------------------------- spectrum, the Caribbean (Bogota's second way out)
    C("pccs-bogota-atlanta", "PCCS: spectrum Cartagena (CO) - Jacksonville (US), backhaul Bogota - Medellin - "
      "Cartagena and Jacksonville - Atlanta", "bogota-mosquera", "atlanta", "spectrum", "submarine",
      [(-75.57, 6.25), (-75.88, 8.75), (-75.51, 10.39), (-75.7, 10.6), (-75.0, 11.8), (-70.5, 12.9), (-67.0, 15.0),
       (-66.1, 18.7), (-64.6, 18.9), (-66.0, 24.0), (-75.0, 29.0), (-80.9, 30.3), (-81.66, 30.33), (-82.35, 31.2)],
      cable_system="PCCS", max_modules=4, sources=SPECTRUM_SOURCES),
    # ----------------------------------------------------------- new terrestrial routes
    C("madrid-milan", "Madrid - Milan via Barcelona, Lyon, Turin (bypassing Marseille)", "madrid", "milan",
      "terrestrial", "terrestrial", [(2.17, 41.39), (3.88, 43.61), (4.83, 45.76), (7.68, 45.07)],
      max_modules=TERRESTRIAL_MAX_MODULES, lead_time_quarters=4, sources=("terrestrial",)),
    C("ashburn-montreal", "Ashburn - Montreal via Harrisburg, Syracuse (bypassing New York)", "ashburn", "montreal",
      "terrestrial", "terrestrial", [(-76.88, 40.27), (-76.15, 43.05), (-74.5, 44.9)],
      max_modules=TERRESTRIAL_MAX_MODULES, lead_time_quarters=4, sources=("terrestrial",)),
    C("aqaba-riyadh", "Aqaba - Riyadh via Tabuk, Ha'il, Buraidah (Jordan-Saudi cross-border fibre)", "aqaba",
      "riyadh", "terrestrial", "terrestrial", [(36.57, 28.38), (41.69, 27.52), (43.97, 26.33)],
      max_modules=TERRESTRIAL_MAX_MODULES, lead_time_quarters=6, sources=("terrestrial",)),
    C("nairobi-djibouti", "Nairobi - Djibouti via Moyale and Addis Ababa (Kenya-Ethiopia-Djibouti fibre)", "nairobi",
      "djibouti", "terrestrial", "terrestrial", [(37.9, 0.05), (39.06, 3.52), (38.74, 9.03), (41.87, 11.0)],
      max_modules=TERRESTRIAL_MAX_MODULES, lead_time_quarters=6, sources=("terrestrial",)),
    C("istanbul-frankfurt-north", "Istanbul - Frankfurt northern route via Burgas, Varna, Bucharest, Cluj, Kosice, "
      "Krakow, Wroclaw, Dresden (diverse from the Balkan route)", "istanbul-esenyurt", "frankfurt", "terrestrial",
      "terrestrial", [(27.47, 42.50), (27.91, 43.21), (26.10, 44.43), (23.60, 46.77), (21.92, 47.06), (21.26, 48.72),
                      (19.94, 50.06), (17.04, 51.11), (13.74, 51.05)],
      max_modules=TERRESTRIAL_MAX_MODULES, lead_time_quarters=4, sources=("terrestrial",)),
    C("bangkok-johor-east", "Bangkok - Johor along the east coast of the Malay peninsula via Surat Thani, Kota Bharu, "
      "Kuantan (diverse from the west-coast route)", "bangkok", "johor", "terrestrial", "terrestrial",
      [(99.33, 9.14), (101.2, 6.87), (102.24, 6.13), (103.14, 5.33), (103.33, 3.81), (103.42, 2.03)],
      max_modules=TERRESTRIAL_MAX_MODULES, lead_time_quarters=4, sources=("terrestrial",)),
    C("nairobi-johannesburg", "Nairobi - Johannesburg via Arusha, Lusaka, Harare (pan-African terrestrial)",
      "nairobi", "johannesburg", "terrestrial", "terrestrial",
      [(36.68, -3.37), (35.74, -6.17), (33.46, -8.9), (28.28, -15.42), (31.05, -17.83)],
      max_modules=TERRESTRIAL_MAX_MODULES, lead_time_quarters=6, sources=("terrestrial",)),
    # ----------------------------------------------------------- announced systems not yet in service
    C("medusa-lisbon-marseille", "Medusa: Carcavelos (Lisbon) - Marseille", "lisbon", "marseille", "cable",
      "submarine", [(-9.6, 38.6), (-9.4, 37.4)] + via("gibraltar")[1:] + [(5.4, 42.8)], cable_system="Medusa",
      max_modules=2, available_from="2027Q1", lead_time_quarters=1, sources=("medusa", "fibre-pair")),
    C("medusa-marseille-port-said", "Medusa: Marseille - Bizerte - Port Said", "marseille", "port-said", "cable",
      "submarine", [(5.5, 42.6), (8.0, 39.5), (9.9, 37.6), (11.5, 37.3), (14.0, 34.8), (20.0, 33.3), (25.0, 32.4)]
      + via("to-port-said"), cable_system="Medusa", max_modules=2, available_from="2027Q3",
      lead_time_quarters=3, sources=("medusa", "fibre-pair")),
    C("humboldt-valparaiso-sydney", "Humboldt: Valparaíso - French Polynesia - Sydney", "valparaiso",
      "sydney-landing", "cable", "submarine",
      [(-72.5, -33.1), (-80.0, -33.5), (-110.0, -28.0), (-140.0, -20.0), (-149.6, -17.7), (-165.0, -22.0),
       (-180.0, -28.0), (165.0, -31.5)] + via("sydney-east"), cable_system="Humboldt", max_modules=2,
      available_from="2027Q4", lead_time_quarters=4, sources=("humboldt", "fibre-pair")),
]

FIBRE_PAIR_LINKS: list[tuple[str, str]] = [
    ("marea-virginia-beach-bilbao", "MAREA"),
    ("dunant-virginia-beach-saint-hilaire", "Dunant"),
    ("grace-hopper-bellport-ny-bude", "Grace Hopper"),
    ("amitie-lynn-ma-bude", "Amitié"),
    ("jupiter-la-south-bay-maruyama", "JUPITER"),
    ("topaz-port-alberni-shima", "Topaz"),
    ("2africa-port-said-marseille", "2Africa"),
    ("iex-djibouti-mumbai-landing", "IEX"),
    ("sea-me-we-6-chennai-landing-singapore-landing", "SEA-ME-WE 6"),
    ("apricot-toucheng-singapore-landing", "Apricot"),
]
"""Segments (link ids) where one more fibre pair can be bought on the system the operator already rides:
candidates ``c-fp-<link id>`` on the segment's own route."""

BACKHAUL_LINKS: list[str] = [
    "t-hong-kong-tseung-kwan-o", "t-taipei-toucheng", "t-seoul-busan", "t-mumbai-mumbai-landing",
    "t-chennai-chennai-landing", "t-singapore-singapore-landing", "t-sydney-sydney-landing",
    "t-tel-aviv-landing-tel-aviv", "t-tokyo-chikura", "t-sao-paulo-praia-grande", "t-santiago-valparaiso",
    "t-london-bude", "t-los-angeles-la-south-bay", "t-new-york-wall-nj", "t-zandvoort-amsterdam",
    "t-mombasa-nairobi", "t-cape-town-pop-johannesburg", "t-cape-town-cape-town-pop", "t-nairobi-nairobi-embakasi", "t-perth-perth-pop",
    "t-jeddah-jeddah-pop",
]
"""Terrestrial links between a metro and a landing station that get a diverse second route (``c-bh-<link
id>``): 1.3 x the existing route's length, a separate duct and building entry."""
BACKHAUL_LENGTH_FACTOR = 1.3
"""A diverse route is longer than the primary one (it avoids its duct and right of way)."""

CUT_EXCEPTIONS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {}
"""Single-SRLG failures that cut a demand-bearing site off even with every candidate built, with the reason
(gaps of the scenario's topology, not of the planning: the plan excuses these states with the reason)."""

SLO_EXCEPTIONS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "landing-guam": (
        "every Japan-Australia system (JGA-N/S, AJC) lands on Guam; the next route, through Singapore, is "
        "144 ms RTT Sydney-Tokyo against a 122 ms SLO",
        (("sydney", "tokyo"),)),
    "landing-sydney-landing": (
        "the scenario models Sydney's cable stations as one landing site, where every trans-Pacific and Tasman "
        "system in the scenario lands (Auckland's Hawaiki and TGA included): without it Sydney is reached through "
        "Perth and Melbourne, over the SLOs to Tokyo, Dallas, Ashburn and Auckland",
        (("ashburn", "sydney"), ("auckland", "sydney"), ("dallas", "sydney"), ("sydney", "tokyo"))),
    "landing-perth": (
        "every South-East Asia-Australia system lands at Perth; the next route, through Guam, is 129-138 ms RTT "
        "against 105-120 ms SLOs",
        (("johor", "melbourne"), ("johor", "perth-pop"), ("johor", "sydney"), ("melbourne", "singapore"),
         ("perth-pop", "singapore"), ("singapore", "sydney"))),
    "corridor-sunda-strait": (
        "every Singapore/Jakarta-Perth system crosses the Sunda Strait; the next route, through Guam, is "
        "129-166 ms RTT against 80-120 ms SLOs",
        (("johor", "melbourne"), ("johor", "perth-pop"), ("johor", "sydney"), ("melbourne", "singapore"),
         ("perth-pop", "singapore"), ("singapore", "sydney"))),
    "landing-cape-town": (
        "the West African systems that join South Africa to Lagos land at Cape Town; without that landing "
        "Johannesburg-Lagos goes round through East Africa or Europe, over its SLO",
        (("johannesburg", "lagos-ikeja"),)),
    "corridor-singapore-strait": (
        "every system into Singapore and Johor from the south (Java Sea, Australia) crosses the Singapore Strait "
        "approaches, and no system lands on Johor's east coast from there: Jakarta and Australia are reached "
        "round through Hong Kong and Guam (146-183 ms RTT)",
        (("jakarta", "johor"), ("jakarta", "singapore"), ("johor", "melbourne"), ("johor", "perth-pop"),
         ("johor", "sydney"), ("melbourne", "singapore"), ("perth-pop", "singapore"),
         ("singapore", "sydney"))),
}
"""Single-SRLG failures whose latency SLOs no existing or announced route can meet, even with every candidate
built: ``{srlg: (reason, ((site, site), ...))}`` (site pairs sorted). Connectivity is never excused here:
every demand-bearing site stays connected, except a site that is itself the failed landing station or lies
inside a failed corridor that catches terrestrial links (``tests/backbone/test_global_candidates.py``)."""

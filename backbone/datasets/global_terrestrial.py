"""Terrestrial long-haul fibre of the shipped global scenario.

Meshes per continent following the public long-haul fibre corridors (interstate highways and
railways in North America, the pan-European routes, the Gulf states' cross-border routes, India's
Mumbai-Delhi-Bengaluru-Chennai ring, Japan's Tokaido route, ...). Links without waypoints get
the scenario's route factor (geodesic x 1.25); links that detour (the Channel Tunnel, the
Oresund and Fehmarn crossings, the Andes pass, the Egyptian crossings) carry waypoints.

Capacities are lit capacity per direction in Gbps: **estimates** for a large AI cloud operator
(dozens to ~100 400G waves on the main routes). The Egyptian land crossings between the
Mediterranean and the Red Sea landings carry the cables that cross Egypt by land (sized to match).
"""

from __future__ import annotations

Point = tuple[float, float]

# (site_a, site_b, capacity_gbps, waypoints)
TERRESTRIAL: list[tuple[str, str, float, list[Point]]] = [
    # ---------------------------------------------------------------- North America
    ("new-york", "ashburn", 40_000, []),
    ("new-york", "wall-nj", 40_000, []),
    ("new-york", "bellport-ny", 40_000, []),
    ("new-york", "boston", 30_000, [(-72.68, 41.76)]),  # via Hartford (I-84/I-90 corridor)
    ("boston", "lynn-ma", 30_000, []),  # metro backhaul of the Lynn landing
    ("new-york", "toronto", 12_000, [(-75.91, 42.10), (-78.88, 42.89)]),  # via Binghamton, Buffalo
    ("ashburn", "toronto", 12_000, [(-76.88, 40.27), (-80.0, 40.44), (-78.88, 42.89)]),  # Harrisburg, Pittsburgh, Buffalo
    ("new-york", "chicago", 30_000, []),
    ("new-york", "montreal", 12_000, []),
    ("new-york", "columbus", 20_000, []),
    ("lynn-ma", "halifax", 16_000, [(-68.8, 44.8), (-66.1, 45.3)]),
    ("montreal", "halifax", 8_000, [(-71.2, 46.8), (-66.1, 45.3)]),
    ("montreal", "toronto", 12_000, []),
    ("toronto", "chicago", 12_000, [(-83.0, 42.3)]),
    ("ashburn", "virginia-beach", 40_000, []),
    ("ashburn", "columbus", 40_000, []),
    ("ashburn", "atlanta", 30_000, []),
    ("ashburn", "myrtle-beach", 16_000, []),
    ("atlanta", "myrtle-beach", 8_000, []),
    ("atlanta", "miami", 20_000, []),
    ("miami", "boca-raton", 20_000, []),
    ("atlanta", "dallas", 30_000, []),
    ("atlanta", "columbus", 20_000, []),
    ("columbus", "chicago", 30_000, []),
    ("chicago", "council-bluffs", 30_000, []),
    ("council-bluffs", "dallas", 20_000, []),
    ("council-bluffs", "denver", 30_000, []),
    ("dallas", "denver", 16_000, []),
    ("dallas", "phoenix", 30_000, [(-106.4, 31.8)]),
    ("denver", "salt-lake-city", 30_000, []),
    ("salt-lake-city", "phoenix", 16_000, []),
    ("salt-lake-city", "santa-clara", 30_000, [(-119.8, 39.5)]),
    ("salt-lake-city", "quincy", 16_000, [(-116.2, 43.6)]),
    ("phoenix", "los-angeles", 30_000, []),
    ("los-angeles", "la-south-bay", 40_000, []),
    ("los-angeles", "santa-clara", 30_000, []),
    ("los-angeles", "grover-beach", 20_000, []),
    ("grover-beach", "santa-clara", 20_000, []),
    ("santa-clara", "bandon", 20_000, [(-122.4, 40.6)]),
    ("seattle", "santa-clara", 20_000, [(-122.68, 45.52), (-121.49, 38.58)]),  # I-5: via Portland, Sacramento
    ("bandon", "pacific-city", 16_000, [(-123.1, 44.05)]),
    ("pacific-city", "seattle", 20_000, [(-122.7, 45.5)]),
    ("seattle", "quincy", 30_000, []),
    ("seattle", "port-alberni", 20_000, [(-123.1, 49.28), (-123.9, 49.17)]),
    ("quincy", "chicago", 16_000, [(-104.0, 45.5), (-93.3, 44.95)]),
    ("dallas", "queretaro", 12_000, [(-99.5, 27.5), (-100.3, 25.7)]),
    ("queretaro", "mexico-city", 12_000, []),
    ("mexico-city", "dallas", 8_000, [(-98.2, 26.1), (-97.7, 30.3)]),
    # ---------------------------------------------------------------- Europe
    ("london", "bude", 30_000, []),
    ("london", "brean", 20_000, []),
    ("london", "lowestoft", 16_000, []),
    ("london", "holyhead", 12_000, []),
    ("london", "paris", 30_000, [(1.1, 51.08), (1.8, 50.95)]),  # via the Channel Tunnel
    # London to Brussels/Amsterdam and to Frankfurt through the Channel Tunnel, Lille, Brussels
    ("london", "amsterdam", 20_000, [(1.1, 51.08), (1.8, 50.95), (3.06, 50.63), (4.35, 50.85), (4.48, 51.92)]),
    ("london", "frankfurt", 20_000, [(1.1, 51.08), (1.8, 50.95), (3.06, 50.63), (4.35, 50.85), (5.57, 50.63),
                                     (6.96, 50.94)]),
    ("london", "peacehaven", 16_000, []),
    ("veules", "paris", 16_000, []),
    ("zandvoort", "amsterdam", 16_000, []),
    ("dublin", "cork", 16_000, []),
    ("amsterdam", "frankfurt", 40_000, []),
    ("amsterdam", "paris", 20_000, [(4.35, 50.85)]),
    ("amsterdam", "blaabjerg", 16_000, [(6.6, 53.2), (8.0, 53.5)]),
    ("paris", "frankfurt", 30_000, []),
    ("paris", "saint-hilaire", 20_000, [(-0.55, 47.47)]),
    ("paris", "le-porge", 16_000, [(-0.58, 44.84)]),
    ("paris", "marseille-pop", 30_000, [(4.83, 45.76)]),
    ("paris", "bilbao", 16_000, [(-0.58, 44.84)]),
    ("bilbao", "madrid", 16_000, []),
    ("madrid", "lisbon", 16_000, []),
    ("lisbon", "sines", 20_000, []),
    ("madrid", "marseille-pop", 16_000, [(2.17, 41.39)]),
    ("marseille-pop", "genoa", 20_000, [(7.27, 43.70)]),
    # the Marseille landing stations backhauled to the metro's data centres on two diverse ducts
    ("marseille", "marseille-pop", 40_000, []),
    ("marseille", "marseille-pop", 40_000, [(5.40, 43.28)]),
    ("genoa", "milan", 20_000, []),
    ("milan", "frankfurt", 20_000, [(8.54, 47.37)]),
    ("milan", "marseille-pop", 12_000, [(7.68, 45.07)]),
    ("frankfurt", "stockholm", 16_000, [(10.0, 53.55), (11.2, 54.5), (12.57, 55.68)]),  # Fehmarn, Oresund
    ("blaabjerg", "stockholm", 12_000, [(10.9, 55.35), (12.57, 55.68)]),  # Great Belt, Oresund
    ("stockholm", "lulea", 20_000, [(17.3, 62.4)]),
    ("stockholm", "lulea", 16_000, [(15.6, 60.6), (14.6, 63.2), (18.7, 64.8)]),  # inland route, diverse
    # Istanbul to Frankfurt through the Balkans (Edirne, Plovdiv, Sofia, Belgrade, Budapest, Vienna, Nuremberg)
    ("istanbul-esenyurt", "frankfurt", 12_000, [(26.56, 41.68), (24.75, 42.15), (23.32, 42.70), (20.46, 44.82),
                                                (19.04, 47.50), (16.37, 48.21), (11.08, 49.45)]),
    # ---------------------------------------------------------------- Middle East, Egypt crossings
    ("abu-talat", "zafarana", 48_000, [(30.4, 30.6), (31.5, 29.9)]),
    ("abu-talat", "zafarana", 36_000, [(30.9, 30.9), (32.3, 30.0)]),  # second crossing route
    ("port-said", "ras-ghareb", 48_000, [(32.4, 30.0), (32.6, 29.2)]),
    ("abu-talat", "port-said", 16_000, []),
    # Cairo metro PoP on the Alexandria and Port Said backhauls
    ("cairo", "abu-talat", 16_000, [(30.47, 30.56)]),
    ("cairo", "port-said", 16_000, [(31.65, 30.30)]),
    ("tel-aviv-landing", "tel-aviv", 30_000, []),
    ("tel-aviv", "aqaba", 30_000, [(34.9, 31.3), (35.2, 30.3)]),  # Blue-Raman land bridge via Israel/Jordan
    ("jeddah-pop", "riyadh", 16_000, []),
    ("jeddah", "jeddah-pop", 30_000, []),  # landing backhaul
    ("riyadh", "dammam", 20_000, []),
    ("dammam", "doha", 16_000, []),
    ("riyadh", "dubai", 16_000, [(51.6, 24.3), (54.4, 24.45)]),
    ("dubai", "fujairah", 30_000, []),
    ("dubai", "barka", 16_000, [(56.2, 24.5)]),
    ("doha", "dubai", 8_000, [(51.6, 24.3), (54.4, 24.45)]),
    # ---------------------------------------------------------------- Africa, Latin America
    ("cape-town-pop", "johannesburg", 8_000, []),
    ("cape-town", "cape-town-pop", 16_000, []),  # Melkbosstrand landing backhaul to the metro
    ("mombasa", "nairobi", 8_000, []),
    ("nairobi", "nairobi-embakasi", 8_000, []),
    ("lagos", "lagos-ikeja", 8_000, []),
    ("lekki", "lagos", 16_000, []),  # Lekki landing (Equiano) to the Lagos PoP
    ("lekki", "lagos-ikeja", 8_000, [(3.42, 6.60)]),  # and on to Ikeja on a second metro route
    ("sao-paulo", "praia-grande", 30_000, []),
    ("sao-paulo", "rio-de-janeiro", 16_000, []),
    ("rio-de-janeiro", "fortaleza", 12_000, [(-38.5, -12.97)]),
    ("rio-de-janeiro", "praia-grande", 8_000, [(-44.3, -23.0), (-45.4, -23.6)]),  # coastal route via Paraty
    ("sao-paulo", "santiago", 8_000, [(-58.38, -34.6), (-68.8, -32.9)]),
    ("santiago", "valparaiso", 16_000, []),
    # Bogota to the Caribbean coast along the Magdalena valley (La Dorada, Aguachica, Bosconia)
    ("bogota-mosquera", "barranquilla", 8_000, [(-74.66, 5.45), (-73.62, 8.31), (-73.89, 9.98)]),
    # ---------------------------------------------------------------- Asia-Pacific
    ("mumbai", "mumbai-landing", 40_000, []),
    ("chennai", "chennai-landing", 40_000, []),
    ("mumbai", "delhi", 16_000, []),
    ("mumbai", "bangalore", 16_000, []),
    ("mumbai", "chennai", 12_000, [(78.5, 17.4)]),
    ("bangalore", "chennai", 16_000, []),
    ("delhi", "chennai", 8_000, [(79.1, 21.15)]),
    ("singapore", "singapore-landing", 60_000, []),
    ("singapore", "johor", 60_000, []),
    ("johor", "singapore-landing", 30_000, []),
    ("johor", "bangkok", 8_000, [(101.69, 3.14), (100.4, 7.0)]),
    ("hong-kong", "tseung-kwan-o", 40_000, []),
    ("taipei", "toucheng", 20_000, []),
    ("seoul", "busan", 20_000, []),
    ("tokyo", "chikura", 40_000, []),
    ("tokyo", "maruyama", 40_000, []),
    ("tokyo", "osaka", 30_000, [(136.9, 35.18)]),
    ("tokyo", "shima", 16_000, [(136.9, 35.18)]),
    ("osaka", "shima", 20_000, []),
    ("manila", "baler", 12_000, []),
    ("manila", "batangas", 12_000, []),
    ("sydney", "sydney-landing", 40_000, []),
    ("sydney", "melbourne", 16_000, []),
    ("melbourne", "perth-pop", 8_000, [(138.6, -34.93)]),
    ("perth", "perth-pop", 20_000, []),  # landing backhaul
    # Auckland: the metro PoP and its two landings (Hawaiki at Mangawhai, TGA at Raglan)
    ("auckland", "mangawhai", 16_000, [(174.69, -36.60)]),
    ("auckland", "raglan", 16_000, [(175.28, -37.79)]),  # via Hamilton
]

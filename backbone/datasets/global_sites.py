"""Sites and demand metros of the shipped global scenario (curated public facts + stated estimates).

Coordinates are city / landing-town centroids (public gazetteers: GeoNames, Wikipedia), rounded to
0.01 degree. Cable landing stations are the towns TeleGeography's Submarine Cable Map lists as the
landing points of the cable systems in :mod:`backbone.datasets.global_cables`.

Data-center figures are **estimates** for a hypothetical AI cloud operator (GPU counts, MW, capex
are not any one company's numbers): GPU counts in the thousands to ~100k per campus, power in
tens to hundreds of MW, sized after the public order of magnitude of hyperscale AI campuses in each
market. Power prices are industrial tariffs by country/state (rounded; EIA Electric Power Monthly
for US states, Eurostat non-household prices, IEA / national regulators elsewhere) and grid carbon
intensity is the country/state average of 2023 (Ember Yearly Electricity Data; EIA for US states;
Hydro-Quebec for Quebec). See ``data/README.md`` for sources.
"""

from __future__ import annotations

from typing import Any

# Grid facts per market: (power_price_usd_per_mwh, carbon_kg_per_mwh, capex_per_mw_usd).
# Prices and carbon are rounded public averages (see module docstring); capex per MW of
# power + cooling is an estimate (~10-15 M USD/MW for AI-ready halls, higher in dense hubs).
GRID: dict[str, tuple[float, float, float]] = {
    "US-VA": (85.0, 290.0, 11.0e6),
    "US-TX": (65.0, 380.0, 10.0e6),
    "US-AZ": (75.0, 330.0, 10.5e6),
    "US-IA": (70.0, 290.0, 10.0e6),
    "US-OH": (75.0, 500.0, 10.5e6),
    "US-GA": (75.0, 360.0, 10.5e6),
    "US-WA": (45.0, 90.0, 10.0e6),
    "US-CA": (190.0, 200.0, 13.0e6),
    "CA-QC": (45.0, 2.0, 11.0e6),
    "DE": (180.0, 380.0, 13.0e6),
    "NL": (150.0, 330.0, 13.0e6),
    "GB": (200.0, 200.0, 14.0e6),
    "IE": (200.0, 280.0, 13.0e6),
    "SE": (40.0, 15.0, 10.0e6),
    "FR": (110.0, 55.0, 12.5e6),
    "ES": (100.0, 140.0, 11.5e6),
    "IT": (160.0, 320.0, 12.5e6),
    "AE": (75.0, 400.0, 11.0e6),
    "SA": (55.0, 560.0, 10.5e6),
    "QA": (50.0, 440.0, 11.0e6),
    "IL": (110.0, 480.0, 12.0e6),
    "JP": (160.0, 470.0, 14.0e6),
    "KR": (110.0, 430.0, 13.0e6),
    "SG": (180.0, 470.0, 15.0e6),
    "MY": (90.0, 570.0, 10.5e6),
    "HK": (140.0, 650.0, 15.0e6),
    "TW": (110.0, 560.0, 13.0e6),
    "IN": (85.0, 710.0, 9.5e6),
    "AU": (120.0, 550.0, 13.0e6),
    "ID": (80.0, 680.0, 10.0e6),
    "BR": (90.0, 100.0, 11.0e6),
    "CL": (110.0, 290.0, 11.0e6),
    "MX": (95.0, 430.0, 10.5e6),
    "ZA": (70.0, 700.0, 10.5e6),
    "NG": (140.0, 400.0, 10.0e6),
    "KE": (120.0, 90.0, 10.0e6),
    "TR": (110.0, 440.0, 11.0e6),
    "CO": (140.0, 180.0, 10.0e6),
}

# Data centers: id, name, lon, lat, region, country, metro, grid market,
#   gpus_installed, gpus_max, power_available_mw, power_max_mw   (GPU and MW figures are estimates)
DATACENTERS: list[tuple[str, str, float, float, str, str, str, str, int, int, float, float]] = [
    # --- North America
    ("ashburn", "Ashburn VA (Loudoun County)", -77.49, 39.04, "NA", "US", "washington", "US-VA",
     90_000, 160_000, 320.0, 600.0),
    ("dallas", "Dallas-Fort Worth TX", -96.80, 32.78, "NA", "US", "dallas", "US-TX", 70_000, 150_000, 260.0, 550.0),
    ("phoenix", "Phoenix AZ (Goodyear/Mesa)", -112.07, 33.45, "NA", "US", "phoenix", "US-AZ",
     45_000, 110_000, 170.0, 420.0),
    ("council-bluffs", "Council Bluffs / Des Moines IA", -95.86, 41.26, "NA", "US", "", "US-IA",
     55_000, 120_000, 210.0, 450.0),
    ("columbus", "Columbus OH (New Albany)", -82.81, 40.08, "NA", "US", "", "US-OH", 50_000, 110_000, 190.0, 420.0),
    ("atlanta", "Atlanta GA", -84.39, 33.75, "NA", "US", "atlanta", "US-GA", 40_000, 100_000, 150.0, 380.0),
    ("quincy", "Quincy WA", -119.85, 47.23, "NA", "US", "", "US-WA", 35_000, 70_000, 130.0, 260.0),
    ("santa-clara", "Santa Clara CA (Silicon Valley)", -121.96, 37.35, "NA", "US", "san-francisco", "US-CA",
     20_000, 30_000, 75.0, 110.0),
    ("montreal", "Montreal QC", -73.57, 45.50, "NA", "CA", "montreal", "CA-QC", 15_000, 45_000, 60.0, 170.0),
    # --- Europe, Middle East
    ("frankfurt", "Frankfurt am Main", 8.68, 50.11, "EMEA", "DE", "frankfurt", "DE", 40_000, 80_000, 150.0, 300.0),
    ("amsterdam", "Amsterdam (Schiphol/Middenmeer)", 4.90, 52.37, "EMEA", "NL", "amsterdam", "NL",
     30_000, 50_000, 115.0, 190.0),
    ("london", "London / Slough", -0.59, 51.51, "EMEA", "GB", "london", "GB", 35_000, 60_000, 130.0, 230.0),
    ("dublin", "Dublin", -6.26, 53.35, "EMEA", "IE", "dublin", "IE", 20_000, 30_000, 75.0, 110.0),
    ("lulea", "Luleå", 22.15, 65.58, "EMEA", "SE", "", "SE", 25_000, 90_000, 95.0, 340.0),
    ("paris", "Paris (Saclay/Marne)", 2.35, 48.86, "EMEA", "FR", "paris", "FR", 30_000, 60_000, 115.0, 230.0),
    ("madrid", "Madrid", -3.70, 40.42, "EMEA", "ES", "madrid", "ES", 15_000, 50_000, 60.0, 190.0),
    ("milan", "Milan", 9.19, 45.46, "EMEA", "IT", "milan", "IT", 12_000, 40_000, 48.0, 150.0),
    ("dubai", "Dubai", 55.27, 25.20, "EMEA", "AE", "dubai", "AE", 20_000, 90_000, 80.0, 340.0),
    ("riyadh", "Riyadh", 46.72, 24.71, "EMEA", "SA", "riyadh", "SA", 25_000, 120_000, 95.0, 450.0),
    ("doha", "Doha", 51.53, 25.29, "EMEA", "QA", "doha", "QA", 8_000, 30_000, 32.0, 115.0),
    ("tel-aviv", "Tel Aviv", 34.78, 32.08, "EMEA", "IL", "tel-aviv", "IL", 10_000, 30_000, 40.0, 115.0),
    # --- Asia-Pacific
    ("tokyo", "Tokyo (Inzai)", 140.15, 35.83, "APAC", "JP", "tokyo", "JP", 40_000, 80_000, 150.0, 300.0),
    ("osaka", "Osaka", 135.50, 34.69, "APAC", "JP", "osaka", "JP", 15_000, 40_000, 60.0, 150.0),
    ("seoul", "Seoul", 126.98, 37.57, "APAC", "KR", "seoul", "KR", 20_000, 50_000, 80.0, 190.0),
    ("singapore", "Singapore", 103.82, 1.35, "APAC", "SG", "singapore", "SG", 25_000, 35_000, 95.0, 130.0),
    ("johor", "Johor (Sedenak/Kulai)", 103.60, 1.66, "APAC", "MY", "", "MY", 30_000, 120_000, 115.0, 450.0),
    ("hong-kong", "Hong Kong", 114.17, 22.32, "APAC", "HK", "hong-kong", "HK", 10_000, 25_000, 40.0, 95.0),
    ("taipei", "Taipei", 121.56, 25.03, "APAC", "TW", "taipei", "TW", 10_000, 30_000, 40.0, 115.0),
    ("mumbai", "Mumbai (Navi Mumbai)", 73.02, 19.03, "APAC", "IN", "mumbai", "IN", 20_000, 80_000, 80.0, 300.0),
    ("chennai", "Chennai (Ambattur)", 80.16, 13.11, "APAC", "IN", "chennai", "IN", 12_000, 50_000, 48.0, 190.0),
    ("sydney", "Sydney", 151.05, -33.82, "APAC", "AU", "sydney", "AU", 20_000, 50_000, 80.0, 190.0),
    ("jakarta", "Jakarta (Cikarang)", 106.85, -6.21, "APAC", "ID", "jakarta", "ID", 8_000, 30_000, 32.0, 115.0),
    # --- Latin America, Africa
    ("sao-paulo", "São Paulo (Barueri)", -46.63, -23.55, "LATAM", "BR", "sao-paulo", "BR",
     12_000, 40_000, 48.0, 150.0),
    ("santiago", "Santiago de Chile", -70.67, -33.45, "LATAM", "CL", "santiago", "CL", 6_000, 20_000, 25.0, 80.0),
    ("queretaro", "Querétaro", -100.39, 20.59, "LATAM", "MX", "", "MX", 8_000, 30_000, 32.0, 115.0),
    ("johannesburg", "Johannesburg", 28.05, -26.20, "AFRICA", "ZA", "johannesburg", "ZA", 5_000, 20_000, 20.0, 80.0),
    # Lagos and Nairobi: AI-ready colocation markets with published IT loads (see data/README.md):
    # Rack Centre's Ikeja campus (LGS1 1.5 MW + LGS2 12 MW, opened 2025) and iXAfrica's NBOX1 on
    # Mombasa Road (phase 1 4.5 MW live 2025, campus planned to 22.5 MW). No GPUs installed yet;
    # gpus_max = power_max_mw / 1.4 kW per GPU, rounded down.
    ("lagos-ikeja", "Lagos (Ikeja colocation campus)", 3.35, 6.60, "AFRICA", "NG", "lagos", "NG",
     0, 9_000, 1.5, 13.5),
    ("nairobi-embakasi", "Nairobi (Mombasa Road / Embakasi colocation campus)", 36.87, -1.32, "AFRICA", "KE",
     "nairobi", "KE", 0, 15_000, 4.5, 22.5),
    # Istanbul and Bogota: colocation markets with published campus MW (see data/README.md): Equinix's
    # IL2/IL4 campus in Esenyurt (ex-Zenium, up to 22 MW critical load at full build) and ODATA's DC BG02
    # in the Zona Franca de Occidente, Mosquera (24 MW IT, first phase 5-10 MW in 2026). No GPUs
    # installed yet; gpus_max as above; power_available_mw is an estimate (Istanbul) / the low end
    # of the announced first phase (Bogota).
    ("istanbul-esenyurt", "Istanbul (Esenyurt colocation campus)", 28.68, 41.03, "EMEA", "TR", "istanbul", "TR",
     0, 15_000, 6.0, 22.0),
    ("bogota-mosquera", "Bogotá (Mosquera free-trade-zone campus)", -74.23, 4.71, "LATAM", "CO", "bogota", "CO",
     0, 17_000, 5.0, 24.0),
]

# Metro PoPs and cable landing stations: id, name, lon, lat, region, country, metro, kind
OTHER_SITES: list[tuple[str, str, float, float, str, str, str, str]] = [
    # --- North America: metro PoPs
    ("new-york", "New York (60 Hudson / 111 8th Ave)", -74.01, 40.72, "NA", "US", "new-york", "pop"),
    ("chicago", "Chicago (350 E Cermak)", -87.62, 41.85, "NA", "US", "chicago", "pop"),
    ("los-angeles", "Los Angeles (One Wilshire)", -118.26, 34.05, "NA", "US", "los-angeles", "pop"),
    ("seattle", "Seattle (Westin Building)", -122.34, 47.61, "NA", "US", "seattle", "pop"),
    ("denver", "Denver", -104.99, 39.74, "NA", "US", "denver", "pop"),
    ("miami", "Miami (NAP of the Americas)", -80.19, 25.78, "NA", "US", "miami", "pop"),
    ("toronto", "Toronto (151 Front St)", -79.38, 43.65, "NA", "CA", "toronto", "pop"),
    ("boston", "Boston (One Summer St)", -71.06, 42.36, "NA", "US", "boston", "pop"),
    ("salt-lake-city", "Salt Lake City", -111.89, 40.76, "NA", "US", "", "pop"),
    # --- North America: cable landing stations
    ("virginia-beach", "Virginia Beach VA landing", -75.98, 36.85, "NA", "US", "", "landing"),
    ("wall-nj", "Wall Township NJ landing", -74.06, 40.15, "NA", "US", "new-york", "landing"),
    ("bellport-ny", "Bellport / Shirley NY landings", -72.91, 40.76, "NA", "US", "new-york", "landing"),
    ("lynn-ma", "Lynn MA landing", -70.95, 42.47, "NA", "US", "boston", "landing"),
    ("halifax", "Halifax NS landing", -63.57, 44.65, "NA", "CA", "", "landing"),
    ("myrtle-beach", "Myrtle Beach SC landing", -78.89, 33.69, "NA", "US", "", "landing"),
    ("boca-raton", "Boca Raton FL landing", -80.08, 26.36, "NA", "US", "miami", "landing"),
    ("la-south-bay", "Los Angeles South Bay landings (Hermosa/Redondo/El Segundo)", -118.40, 33.86, "NA", "US",
     "los-angeles", "landing"),
    ("grover-beach", "Grover Beach CA landing", -120.62, 35.12, "NA", "US", "", "landing"),
    ("bandon", "Bandon OR landing", -124.41, 43.12, "NA", "US", "", "landing"),
    ("pacific-city", "Pacific City OR landing", -123.96, 45.20, "NA", "US", "", "landing"),
    ("port-alberni", "Port Alberni BC landing", -124.81, 49.23, "NA", "CA", "", "landing"),
    ("oahu", "Kapolei / Makaha, Oahu HI landings", -158.09, 21.34, "NA", "US", "", "landing"),
    # --- Europe, Middle East, North Africa: PoPs and landings
    ("stockholm", "Stockholm", 18.07, 59.33, "EMEA", "SE", "stockholm", "pop"),
    ("lisbon", "Lisbon", -9.14, 38.72, "EMEA", "PT", "lisbon", "pop"),
    ("bude", "Bude landing (Cornwall)", -4.54, 50.83, "EMEA", "GB", "", "landing"),
    ("brean", "Brean landing (Somerset)", -3.01, 51.29, "EMEA", "GB", "", "landing"),
    ("bilbao", "Sopelana / Bilbao landing", -2.98, 43.38, "EMEA", "ES", "", "landing"),
    ("saint-hilaire", "Saint-Hilaire-de-Riez landing", -1.95, 46.72, "EMEA", "FR", "", "landing"),
    ("le-porge", "Le Porge landing (Bordeaux)", -1.20, 44.87, "EMEA", "FR", "", "landing"),
    ("sines", "Sines landing", -8.87, 37.95, "EMEA", "PT", "", "landing"),
    ("marseille", "Marseille landing hub (Prado / Corniche beach manholes)", 5.37, 43.26, "EMEA", "FR", "marseille",
     "landing"),
    ("genoa", "Genoa landing", 8.93, 44.41, "EMEA", "IT", "", "landing"),
    ("lowestoft", "Lowestoft / Sizewell landing", 1.75, 52.48, "EMEA", "GB", "", "landing"),
    ("zandvoort", "Zandvoort landing", 4.53, 52.37, "EMEA", "NL", "amsterdam", "landing"),
    ("peacehaven", "Peacehaven / Brighton landing", -0.00, 50.79, "EMEA", "GB", "", "landing"),
    ("veules", "Veules-les-Roses landing", 0.80, 49.87, "EMEA", "FR", "", "landing"),
    ("holyhead", "Holyhead landing", -4.63, 53.31, "EMEA", "GB", "", "landing"),
    ("cork", "Cork (Ballinspittle / Old Head) landing", -8.63, 51.65, "EMEA", "IE", "", "landing"),
    ("blaabjerg", "Blaabjerg landing (Jutland)", 8.13, 55.72, "EMEA", "DK", "", "landing"),
    ("abu-talat", "Abu Talat landing (Alexandria)", 29.55, 31.05, "EMEA", "EG", "", "landing"),
    ("port-said", "Port Said landing", 32.30, 31.26, "EMEA", "EG", "", "landing"),
    ("zafarana", "Zafarana landing (Gulf of Suez)", 32.65, 29.11, "EMEA", "EG", "", "landing"),
    ("ras-ghareb", "Ras Ghareb landing (Gulf of Suez)", 33.09, 28.36, "EMEA", "EG", "", "landing"),
    ("aqaba", "Aqaba landing", 35.01, 29.53, "EMEA", "JO", "", "landing"),
    ("tel-aviv-landing", "Tel Aviv landing", 34.76, 32.10, "EMEA", "IL", "tel-aviv", "landing"),
    ("jeddah", "Jeddah landing", 39.17, 21.54, "EMEA", "SA", "jeddah", "landing"),
    ("jeddah-pop", "Jeddah metro PoP", 39.19, 21.49, "EMEA", "SA", "jeddah", "pop"),
    ("marseille-pop", "Marseille metro PoP (La Joliette data centres)", 5.36, 43.31, "EMEA", "FR", "marseille",
     "pop"),
    ("cairo", "Cairo metro PoP", 31.24, 30.04, "EMEA", "EG", "cairo", "pop"),
    ("djibouti", "Djibouti landing", 43.15, 11.59, "EMEA", "DJ", "", "landing"),
    ("fujairah", "Fujairah landing", 56.33, 25.12, "EMEA", "AE", "", "landing"),
    ("barka", "Barka / Muscat landing", 57.89, 23.68, "EMEA", "OM", "", "landing"),
    ("dammam", "Al Khobar / Dammam landing", 50.21, 26.28, "EMEA", "SA", "", "landing"),
    # --- Asia-Pacific: PoPs and landings
    ("manila", "Manila", 121.02, 14.56, "APAC", "PH", "manila", "pop"),
    ("bangkok", "Bangkok", 100.52, 13.75, "APAC", "TH", "bangkok", "pop"),
    ("delhi", "Delhi NCR", 77.21, 28.61, "APAC", "IN", "delhi", "pop"),
    ("bangalore", "Bengaluru", 77.59, 12.97, "APAC", "IN", "bangalore", "pop"),
    ("melbourne", "Melbourne", 144.96, -37.81, "APAC", "AU", "melbourne", "pop"),
    ("shima", "Shima landing (Mie)", 136.82, 34.33, "APAC", "JP", "", "landing"),
    ("chikura", "Chikura landing (Minamiboso)", 139.95, 34.95, "APAC", "JP", "", "landing"),
    ("maruyama", "Maruyama landing (Minamiboso)", 139.84, 35.07, "APAC", "JP", "", "landing"),
    ("busan", "Busan landing", 129.08, 35.18, "APAC", "KR", "", "landing"),
    ("toucheng", "Toucheng landing (Yilan)", 121.82, 24.86, "APAC", "TW", "", "landing"),
    ("tseung-kwan-o", "Tseung Kwan O landing", 114.27, 22.30, "APAC", "HK", "hong-kong", "landing"),
    ("singapore-landing", "Singapore landings (Changi/Tuas)", 103.99, 1.34, "APAC", "SG", "singapore", "landing"),
    ("mumbai-landing", "Mumbai landing (Versova)", 72.81, 19.13, "APAC", "IN", "mumbai", "landing"),
    ("chennai-landing", "Chennai landing", 80.29, 13.05, "APAC", "IN", "chennai", "landing"),
    ("baler", "Baler landing (Luzon)", 121.56, 15.76, "APAC", "PH", "", "landing"),
    ("batangas", "Batangas landing (Luzon)", 121.06, 13.72, "APAC", "PH", "", "landing"),
    ("guam", "Piti / Tanguisson, Guam landings", 144.69, 13.46, "APAC", "GU", "", "landing"),
    ("sydney-landing", "Sydney landings (Tamarama/Clovelly)", 151.27, -33.90, "APAC", "AU", "sydney", "landing"),
    ("perth", "Perth landing (City Beach)", 115.75, -31.94, "APAC", "AU", "perth", "landing"),
    ("perth-pop", "Perth metro PoP", 115.86, -31.95, "APAC", "AU", "perth", "pop"),
    ("auckland", "Auckland metro PoP", 174.76, -36.85, "APAC", "NZ", "auckland", "pop"),
    ("mangawhai", "Mangawhai landing", 174.58, -36.12, "APAC", "NZ", "", "landing"),
    ("raglan", "Raglan landing", 174.87, -37.80, "APAC", "NZ", "", "landing"),
    # --- Latin America, Africa
    ("praia-grande", "Praia Grande landing (Santos)", -46.40, -24.01, "LATAM", "BR", "sao-paulo", "landing"),
    ("fortaleza", "Fortaleza landing", -38.54, -3.72, "LATAM", "BR", "", "landing"),
    ("valparaiso", "Valparaíso landing", -71.62, -33.05, "LATAM", "CL", "", "landing"),
    ("mexico-city", "Mexico City", -99.13, 19.43, "LATAM", "MX", "mexico-city", "pop"),
    ("rio-de-janeiro", "Rio de Janeiro metro PoP", -43.17, -22.91, "LATAM", "BR", "rio-de-janeiro", "pop"),
    ("barranquilla", "Barranquilla landing", -74.80, 10.96, "LATAM", "CO", "", "landing"),
    ("lagos", "Lagos landing and PoP", 3.38, 6.45, "AFRICA", "NG", "lagos", "landing"),
    ("lekki", "Lekki landing (Elegushi beach, Lagos)", 3.49, 6.43, "AFRICA", "NG", "lagos", "landing"),
    ("cape-town", "Melkbosstrand / Cape Town landing", 18.44, -33.72, "AFRICA", "ZA", "cape-town", "landing"),
    ("cape-town-pop", "Cape Town metro PoP", 18.47, -33.91, "AFRICA", "ZA", "cape-town", "pop"),
    ("mombasa", "Mombasa landing", 39.67, -4.04, "AFRICA", "KE", "", "landing"),
    ("nairobi", "Nairobi", 36.82, -1.29, "AFRICA", "KE", "nairobi", "pop"),
]

CAPEX_PER_GPU_USD = 38_000.0
"""Capital cost per GPU added, estimate: an 8-GPU H100/H200-class server at ~250-300 k USD plus
network share (InfiniBand/Ethernet fabric, storage) -> ~35-40 k USD per GPU."""

# Demand metros: id, name, lon, lat, region, country, population_m, gdp_usd_bn, interactive_share.
# Population: UN World Urbanization Prospects (urban agglomeration, 2020s, rounded).
# GDP: metro-area GDP in nominal USD (Brookings Global Metro Monitor / OECD metropolitan
# database / national statistics, rounded; several are estimates, see data/README.md).
# interactive_share: share of inference that is interactive (chat, code, agents) vs batch;
# an estimate, higher where enterprise and consumer use is dense.
METROS: list[tuple[str, str, float, float, str, str, float, float, float]] = [
    # North America
    ("new-york", "New York", -74.01, 40.71, "NA", "US", 19.5, 2100.0, 0.65),
    ("los-angeles", "Los Angeles", -118.24, 34.05, "NA", "US", 13.0, 1300.0, 0.65),
    ("chicago", "Chicago", -87.63, 41.88, "NA", "US", 9.4, 830.0, 0.6),
    ("dallas", "Dallas-Fort Worth", -96.80, 32.78, "NA", "US", 8.1, 690.0, 0.6),
    ("washington", "Washington DC", -77.04, 38.91, "NA", "US", 6.4, 710.0, 0.6),
    ("san-francisco", "San Francisco Bay Area", -122.27, 37.80, "NA", "US", 6.7, 1100.0, 0.7),
    ("atlanta", "Atlanta", -84.39, 33.75, "NA", "US", 6.3, 470.0, 0.6),
    ("miami", "Miami", -80.19, 25.76, "NA", "US", 6.1, 490.0, 0.6),
    ("seattle", "Seattle", -122.33, 47.61, "NA", "US", 4.0, 530.0, 0.7),
    ("boston", "Boston", -71.06, 42.36, "NA", "US", 4.9, 530.0, 0.65),
    ("houston", "Houston", -95.37, 29.76, "NA", "US", 7.3, 630.0, 0.55),
    ("phoenix", "Phoenix", -112.07, 33.45, "NA", "US", 5.0, 330.0, 0.55),
    ("denver", "Denver", -104.99, 39.74, "NA", "US", 3.0, 270.0, 0.6),
    ("toronto", "Toronto", -79.38, 43.65, "NA", "CA", 6.7, 420.0, 0.6),
    ("montreal", "Montreal", -73.57, 45.50, "NA", "CA", 4.3, 230.0, 0.55),
    # Latin America
    ("mexico-city", "Mexico City", -99.13, 19.43, "LATAM", "MX", 22.3, 410.0, 0.5),
    ("sao-paulo", "São Paulo", -46.63, -23.55, "LATAM", "BR", 22.6, 480.0, 0.5),
    ("rio-de-janeiro", "Rio de Janeiro", -43.17, -22.91, "LATAM", "BR", 13.7, 180.0, 0.5),
    ("buenos-aires", "Buenos Aires", -58.38, -34.60, "LATAM", "AR", 15.6, 210.0, 0.5),
    ("santiago", "Santiago", -70.67, -33.45, "LATAM", "CL", 6.9, 170.0, 0.5),
    ("bogota", "Bogotá", -74.07, 4.71, "LATAM", "CO", 11.3, 130.0, 0.5),
    ("lima", "Lima", -77.04, -12.05, "LATAM", "PE", 11.2, 120.0, 0.5),
    # Europe, Middle East
    ("london", "London", -0.13, 51.51, "EMEA", "GB", 9.6, 800.0, 0.65),
    ("paris", "Paris", 2.35, 48.86, "EMEA", "FR", 11.2, 850.0, 0.6),
    ("frankfurt", "Frankfurt Rhine-Main", 8.68, 50.11, "EMEA", "DE", 5.8, 280.0, 0.6),
    ("amsterdam", "Amsterdam", 4.90, 52.37, "EMEA", "NL", 2.5, 240.0, 0.65),
    ("madrid", "Madrid", -3.70, 40.42, "EMEA", "ES", 6.8, 320.0, 0.55),
    ("milan", "Milan", 9.19, 45.46, "EMEA", "IT", 4.3, 300.0, 0.55),
    ("dublin", "Dublin", -6.26, 53.35, "EMEA", "IE", 1.5, 190.0, 0.65),
    ("stockholm", "Stockholm", 18.07, 59.33, "EMEA", "SE", 2.4, 230.0, 0.65),
    ("berlin", "Berlin", 13.40, 52.52, "EMEA", "DE", 4.7, 230.0, 0.6),
    ("lisbon", "Lisbon", -9.14, 38.72, "EMEA", "PT", 2.9, 120.0, 0.55),
    ("warsaw", "Warsaw", 21.01, 52.23, "EMEA", "PL", 3.1, 120.0, 0.55),
    ("istanbul", "Istanbul", 28.98, 41.01, "EMEA", "TR", 15.6, 330.0, 0.5),
    ("marseille", "Marseille", 5.37, 43.30, "EMEA", "FR", 1.9, 90.0, 0.55),
    ("cairo", "Cairo", 31.24, 30.04, "EMEA", "EG", 21.8, 140.0, 0.45),
    ("dubai", "Dubai", 55.27, 25.20, "EMEA", "AE", 3.6, 140.0, 0.6),
    ("riyadh", "Riyadh", 46.72, 24.71, "EMEA", "SA", 7.7, 200.0, 0.55),
    ("jeddah", "Jeddah", 39.17, 21.54, "EMEA", "SA", 4.7, 100.0, 0.5),
    ("doha", "Doha", 51.53, 25.29, "EMEA", "QA", 2.4, 180.0, 0.55),
    ("tel-aviv", "Tel Aviv", 34.78, 32.08, "EMEA", "IL", 4.2, 220.0, 0.65),
    # Africa
    ("lagos", "Lagos", 3.38, 6.52, "AFRICA", "NG", 15.9, 60.0, 0.45),
    ("johannesburg", "Johannesburg", 28.05, -26.20, "AFRICA", "ZA", 6.2, 110.0, 0.5),
    ("cape-town", "Cape Town", 18.42, -33.92, "AFRICA", "ZA", 4.8, 50.0, 0.5),
    ("nairobi", "Nairobi", 36.82, -1.29, "AFRICA", "KE", 5.3, 40.0, 0.45),
    # Asia-Pacific
    ("tokyo", "Tokyo", 139.69, 35.69, "APAC", "JP", 37.1, 1900.0, 0.6),
    ("osaka", "Osaka-Kobe-Kyoto", 135.50, 34.69, "APAC", "JP", 19.0, 680.0, 0.55),
    ("seoul", "Seoul Capital Area", 126.98, 37.57, "APAC", "KR", 25.6, 800.0, 0.6),
    ("hong-kong", "Hong Kong", 114.17, 22.32, "APAC", "HK", 7.5, 380.0, 0.6),
    ("taipei", "Taipei", 121.56, 25.03, "APAC", "TW", 7.0, 330.0, 0.6),
    ("singapore", "Singapore", 103.82, 1.35, "APAC", "SG", 6.0, 500.0, 0.65),
    ("jakarta", "Jakarta", 106.85, -6.21, "APAC", "ID", 33.8, 350.0, 0.45),
    ("manila", "Manila", 120.98, 14.60, "APAC", "PH", 14.9, 200.0, 0.45),
    ("bangkok", "Bangkok", 100.50, 13.76, "APAC", "TH", 11.2, 250.0, 0.5),
    ("kuala-lumpur", "Kuala Lumpur", 101.69, 3.14, "APAC", "MY", 8.6, 200.0, 0.5),
    ("ho-chi-minh", "Ho Chi Minh City", 106.63, 10.82, "APAC", "VN", 9.3, 80.0, 0.45),
    ("mumbai", "Mumbai", 72.88, 19.08, "APAC", "IN", 21.7, 310.0, 0.5),
    ("delhi", "Delhi", 77.21, 28.61, "APAC", "IN", 33.8, 370.0, 0.5),
    ("bangalore", "Bengaluru", 77.59, 12.97, "APAC", "IN", 13.6, 180.0, 0.55),
    ("chennai", "Chennai", 80.27, 13.08, "APAC", "IN", 11.8, 120.0, 0.5),
    ("sydney", "Sydney", 151.21, -33.87, "APAC", "AU", 5.3, 400.0, 0.6),
    ("melbourne", "Melbourne", 144.96, -37.81, "APAC", "AU", 5.2, 320.0, 0.6),
    ("perth", "Perth", 115.86, -31.95, "APAC", "AU", 2.2, 150.0, 0.55),
    ("auckland", "Auckland", 174.76, -36.85, "APAC", "NZ", 1.7, 90.0, 0.55),
]


def site_records() -> list[dict[str, Any]]:
    """Site records (``backbone.schema.SITES`` columns) of the global scenario."""
    records: list[dict[str, Any]] = []
    for (sid, name, lon, lat, region, country, metro, market,
         gpus, gpus_max, mw, mw_max) in DATACENTERS:
        price, carbon, capex_mw = GRID[market]
        records.append({
            "id": sid, "name": name, "lon": lon, "lat": lat, "region": region, "country": country,
            "metro": metro, "kind": "datacenter", "gpus_installed": gpus, "gpus_max": gpus_max,
            "power_available_mw": mw, "power_max_mw": mw_max, "capex_per_gpu_usd": CAPEX_PER_GPU_USD,
            "capex_per_mw_usd": capex_mw, "power_price_usd_per_mwh": price, "carbon_kg_per_mwh": carbon,
        })
    for sid, name, lon, lat, region, country, metro, kind in OTHER_SITES:
        records.append({"id": sid, "name": name, "lon": lon, "lat": lat, "region": region,
                        "country": country, "metro": metro, "kind": kind})
    return records


def metro_records() -> list[dict[str, Any]]:
    """Metro records (``backbone.schema.METROS`` columns); ``inference_gpus`` is left to the
    demand generator."""
    return [{"id": mid, "name": name, "lon": lon, "lat": lat, "region": region, "country": country,
             "population_m": pop, "gdp_usd_bn": gdp, "inference_gpus": 0.0, "interactive_share": share}
            for mid, name, lon, lat, region, country, pop, gdp, share in METROS]

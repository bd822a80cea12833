"""Column specifications of the network tables.

One declared spec per table drives defaults, validation, file I/O and the API's schema docs
(the PyPSA way: units live in column names, tables are keyed by string id).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from backbone.workloads import SYNC_METHODS

DType = Literal["str", "float", "int", "bool", "idlist"]

REGIONS: tuple[str, ...] = ("NA", "LATAM", "EMEA", "AFRICA", "APAC")
SITE_KINDS: tuple[str, ...] = ("pop", "datacenter", "landing")
LINK_KINDS: tuple[str, ...] = ("terrestrial", "submarine")
SRLG_KINDS: tuple[str, ...] = ("cable_system", "landing", "corridor", "conduit", "other")
CANDIDATE_KINDS: tuple[str, ...] = ("spectrum", "fibre_pair", "terrestrial", "backhaul", "cable")
"""What a candidate builds: more spectrum on a lit cable system, a new fibre pair on an existing cable
system, a new long-haul terrestrial route, diverse landing backhaul (a second metro entry), or a new
cable system not yet in service."""
TRAFFIC_CLASSES: tuple[str, ...] = ("training", "inference", "checkpoint", "training-sync", "dataset", "replication",
                                    "bulk")
"""Traffic classes in priority order (highest first). ``checkpoint``, ``training-sync``, ``dataset`` and
``replication`` are also the classes of the flows :func:`backbone.workload_traffic.workload_demands` derives from
training jobs and datasets: checkpoint copies (durability: they rank with inference, right after it), gradient
synchronisation between a job's sites and dataset reads (a job stalls without them, but may pause), and dataset
growth copied between replicas (deferrable, like bulk). The four classes of the synthetic demand model
(:mod:`backbone.demand`) keep their order: training, inference, replication, bulk."""
CHECKPOINT_REPLICAS: tuple[str, ...] = ("none", "same-region", "other-region")
"""Where a training job's checkpoints are copied: nowhere, to the nearest other site of the job's region, or to the
nearest site of another region."""
COUNTRY_CODES: frozenset[str] = frozenset((
    "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ", "BA", "BB", "BD",
    "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS", "BT", "BV", "BW", "BY", "BZ", "CA",
    "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN", "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE",
    "DJ", "DK", "DM", "DO", "DZ", "EC", "EE", "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA",
    "GB", "GD", "GE", "GF", "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK",
    "HM", "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM", "JO", "JP",
    "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC", "LI", "LK", "LR", "LS", "LT",
    "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK", "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS",
    "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA", "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ",
    "OM", "PA", "PE", "PF", "PG", "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS",
    "RU", "RW", "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS", "ST",
    "SV", "SX", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO", "TR", "TT", "TV", "TW",
    "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI", "VN", "VU", "WF", "WS", "YE", "YT", "ZA",
    "ZM", "ZW",
))
"""ISO 3166-1 alpha-2 country codes (the 249 assigned codes of ISO 3166-1:2020, as Debian's iso-codes lists them).
A residency entry is a region of :data:`REGIONS` or one of these; ``NA`` names the region North America (and
Namibia's sites, whose country code it also is)."""
RESIDENCY_CODES: frozenset[str] = frozenset(REGIONS) | COUNTRY_CODES
"""What a dataset's ``residency`` may list: a region or a country code."""


@dataclass(frozen=True)
class Column:
    """One column of a network table.

    Parameters
    ----------
    name
        Column name; the unit is part of the name (``capacity_gbps``).
    dtype
        Logical type: ``str``, ``float``, ``int``, ``bool`` or ``idlist`` (a list of ids,
        written as ``a;b;c`` in CSV).
    required
        Whether a record must give a value.
    default
        Value used when the column or a cell is missing (ignored when required).
    unit
        Human unit, for documentation.
    description
        What the column means.
    choices
        Allowed values for categorical string columns.
    min_value, min_inclusive
        Lower bound for numeric columns.
    max_value
        Upper bound for numeric columns (inclusive). Every physical quantity has a finite, generous one
        (:data:`MAX_GBPS`, :data:`MAX_KM`, ...), so no valid value overflows when the model derives from it.
    derived
        Computed from other columns when missing (for example ``length_km``).
    """

    name: str
    dtype: DType
    required: bool = False
    default: Any = None
    unit: str = ""
    description: str = ""
    choices: tuple[str, ...] | None = None
    min_value: float | None = None
    min_inclusive: bool = True
    max_value: float | None = None
    derived: bool = False


@dataclass(frozen=True)
class TableSpec:
    """The spec of one table: its id column and its data columns."""

    name: str
    columns: tuple[Column, ...]
    description: str = ""
    id_column: str = "id"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """Data column names, in file order."""
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        """Return the spec of column ``name``."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


NAN = float("nan")

# Upper bounds of physical quantities: far beyond any real network, and small enough that every product the
# model and the solvers form from them (capacity x factor, modules x cost, length x cost per km) stays finite.
MAX_GBPS = 1e9
"""Largest capacity or demand, in Gbps (1 Ebps, a million times today's largest cable system)."""
MAX_KM = 100_000.0
"""Longest link or route, in km (two and a half times around the Earth)."""
MAX_MS = 10_000.0
"""Largest one-way latency, in ms."""
MAX_RTT_MS = 2 * MAX_MS
"""Largest round-trip latency SLO, in ms."""
MAX_USD = 1e15
"""Largest cost or price, in USD (per unit where the column says so)."""
MAX_COUNT = 1e9
"""Largest count of GPUs, modules, or GPU-equivalents."""
MAX_MW = 1e6
"""Largest power, in MW (1 TW)."""
MAX_CARBON_KG_PER_MWH = 1e5
"""Largest grid carbon intensity, in kgCO2/MWh (coal is about 1,000)."""
MAX_QUARTERS = 1_000
"""Longest lead time, in quarters."""
MAX_POPULATION_M = 100_000.0
"""Largest metro population, in millions."""
MAX_GDP_USD_BN = 1e6
"""Largest metro economic output, in USD bn."""
MAX_PB = 1e6
"""Largest storage or dataset size, in PB (1 ZB)."""
MAX_TB = 1e9
"""Largest checkpoint, in TB."""
MAX_PARAMETERS = 1e15
"""Largest model, in parameters (a thousand times a 1T-parameter model)."""
MAX_SECONDS = 1e9
"""Longest time interval, in seconds (about 32 years)."""
MAX_BYTES_PER_PARAMETER = 64.0
"""Most bytes per parameter (FP64 is 8)."""

SITES = TableSpec(
    "sites",
    (
        Column("name", "str", default="", description="Display name"),
        Column("lon", "float", required=True, unit="deg", min_value=-180, max_value=180,
               description="Longitude, EPSG:4326"),
        Column("lat", "float", required=True, unit="deg", min_value=-90, max_value=90,
               description="Latitude, EPSG:4326"),
        Column("region", "str", required=True, choices=REGIONS, description="Planning region"),
        Column("country", "str", default="", description="ISO 3166-1 alpha-2 country code"),
        Column("metro", "str", default="", description="Metro id this site sits in (may be empty)"),
        Column("kind", "str", default="pop", choices=SITE_KINDS,
               description="pop, datacenter or landing (cable landing station)"),
        Column("gpus_installed", "int", default=0, min_value=0, max_value=MAX_COUNT, unit="GPU",
               description="GPUs installed today"),
        Column("gpus_max", "int", default=0, min_value=0, max_value=MAX_COUNT, unit="GPU",
               description="Maximum GPUs the site can host"),
        Column("power_available_mw", "float", default=0.0, min_value=0, max_value=MAX_MW, unit="MW",
               description="Power available today"),
        Column("power_max_mw", "float", default=0.0, min_value=0, max_value=MAX_MW, unit="MW",
               description="Maximum power after expansion"),
        Column("capex_per_gpu_usd", "float", default=30000.0, min_value=0, max_value=MAX_USD, unit="USD/GPU",
               description="Capital cost per GPU added (server share included)"),
        Column("capex_per_mw_usd", "float", default=10_000_000.0, min_value=0, max_value=MAX_USD, unit="USD/MW",
               description="Capital cost per MW of power/cooling built"),
        Column("power_price_usd_per_mwh", "float", default=80.0, min_value=0, max_value=MAX_USD, unit="USD/MWh",
               description="Electricity price"),
        Column("carbon_kg_per_mwh", "float", default=400.0, min_value=0, max_value=MAX_CARBON_KG_PER_MWH,
               unit="kgCO2/MWh",
               description="Grid carbon intensity"),
        Column("storage_pb", "float", default=0.0, min_value=0, max_value=MAX_PB, unit="PB",
               description="Storage installed for datasets and checkpoints"),
        Column("storage_cost_usd_per_pb", "float", default=0.0, min_value=0, max_value=MAX_USD, unit="USD/PB",
               description="Capital cost of one usable PB of storage added at the site"),
    ),
    "Sites: metro PoPs, data centers with GPU and power capacity, cable landing stations.",
)

LINKS = TableSpec(
    "links",
    (
        Column("name", "str", default="", description="Display name"),
        Column("site_a", "str", required=True, description="First endpoint (site id)"),
        Column("site_b", "str", required=True, description="Second endpoint (site id)"),
        Column("kind", "str", default="terrestrial", choices=LINK_KINDS,
               description="terrestrial or submarine"),
        Column("cable_system", "str", default="", description="Named cable system (submarine)"),
        Column("capacity_gbps", "float", required=True, min_value=0, max_value=MAX_GBPS, min_inclusive=False,
               unit="Gbps",
               description="Lit capacity per direction (full duplex)"),
        Column("waypoints", "str", default="",
               description="Intermediate route points 'lon lat; lon lat; ...' (empty: geodesic)"),
        Column("length_km", "float", default=NAN, min_value=0, max_value=MAX_KM, min_inclusive=False, unit="km",
               derived=True, description="Route length (derived from geometry when empty; at least 0.1 km)"),
        Column("latency_ms", "float", default=NAN, min_value=0, max_value=MAX_MS, unit="ms", derived=True,
               description="One-way latency (derived from length when empty)"),
        Column("module_gbps", "float", default=400.0, min_value=0, max_value=MAX_GBPS, min_inclusive=False, unit="Gbps",
               description="Capacity of one upgrade module (wave, fibre pair, ...)"),
        Column("module_cost_usd", "float", default=NAN, min_value=0, max_value=MAX_USD, unit="USD", derived=True,
               description="Cost of one upgrade module (derived from length and kind when empty)"),
        Column("max_capacity_gbps", "float", default=NAN, min_value=0, max_value=MAX_GBPS, unit="Gbps", derived=True,
               description="Upper limit on capacity after upgrades (derived when empty)"),
        Column("routing_cost_per_gbps", "float", default=0.0, min_value=0, max_value=MAX_USD, unit="USD/Gbps",
               description="Cost per unit of flow routed over the link"),
        Column("preinstalled_cost_usd", "float", default=0.0, min_value=0, max_value=MAX_USD, unit="USD",
               description="Cost of the pre-installed capacity (SNDlib constant)"),
    ),
    "Links: terrestrial fiber and submarine cable segments; capacity is per direction.",
)

SRLGS = TableSpec(
    "srlgs",
    (
        Column("name", "str", default="", description="Display name"),
        Column("kind", "str", default="other", choices=SRLG_KINDS,
               description="cable_system, landing, corridor, conduit or other"),
        Column("links", "idlist", required=True, description="Member link ids ('a;b;c' in CSV)"),
    ),
    "Shared-risk link groups: links that fail together.",
)

METROS = TableSpec(
    "metros",
    (
        Column("name", "str", default="", description="Display name"),
        Column("lon", "float", required=True, unit="deg", min_value=-180, max_value=180),
        Column("lat", "float", required=True, unit="deg", min_value=-90, max_value=90),
        Column("region", "str", required=True, choices=REGIONS),
        Column("country", "str", default="", description="ISO 3166-1 alpha-2 country code"),
        Column("population_m", "float", default=0.0, min_value=0, max_value=MAX_POPULATION_M, unit="million people"),
        Column("gdp_usd_bn", "float", default=0.0, min_value=0, max_value=MAX_GDP_USD_BN, unit="USD bn",
               description="Metro economic output (weight of the demand model)"),
        Column("inference_gpus", "float", default=0.0, min_value=0, max_value=MAX_COUNT, unit="GPU",
               description="Inference demand in GPU-equivalents at peak"),
        Column("interactive_share", "float", default=0.6, min_value=0, max_value=1,
               description="Share of inference demand that is interactive (tight SLO)"),
    ),
    "Metros: demand points for inference.",
)

DEMANDS = TableSpec(
    "demands",
    (
        Column("src", "str", required=True, description="Source site id"),
        Column("dst", "str", required=True, description="Destination site id"),
        Column("demand_gbps", "float", required=True, min_value=0, max_value=MAX_GBPS, unit="Gbps"),
        Column("traffic_class", "str", default="bulk", choices=TRAFFIC_CLASSES),
        Column("slo_rtt_ms", "float", default=NAN, min_value=0, max_value=MAX_RTT_MS, min_inclusive=False, unit="ms",
               description="Round-trip latency SLO (empty: none)"),
    ),
    "Demands: traffic between sites, per direction src -> dst.",
)

CANDIDATES = TableSpec(
    "candidates",
    (
        Column("name", "str", default="", description="Display name"),
        Column("site_a", "str", required=True, description="First endpoint (site id)"),
        Column("site_b", "str", required=True, description="Second endpoint (site id)"),
        Column("kind", "str", required=True, choices=CANDIDATE_KINDS,
               description="spectrum, fibre_pair, terrestrial, backhaul or cable (what is built)"),
        Column("link_kind", "str", required=True, choices=LINK_KINDS,
               description="Kind of the link the candidate becomes: terrestrial or submarine"),
        Column("cable_system", "str", default="",
               description="Cable system it rides (spectrum, fibre_pair, cable)"),
        Column("waypoints", "str", default="",
               description="Intermediate route points 'lon lat; lon lat; ...' (empty: geodesic)"),
        Column("length_km", "float", default=NAN, min_value=0, max_value=MAX_KM, min_inclusive=False, unit="km",
               derived=True,
               description="Route length (derived from geometry when empty, as for links)"),
        Column("latency_ms", "float", default=NAN, min_value=0, max_value=MAX_MS, unit="ms", derived=True,
               description="One-way latency (derived from length when empty, as for links)"),
        Column("module_gbps", "float", required=True, min_value=0, max_value=MAX_GBPS, min_inclusive=False, unit="Gbps",
               description="Capacity of one module"),
        Column("module_cost_usd", "float", required=True, min_value=0, max_value=MAX_USD, unit="USD",
               description="Cost of one module"),
        Column("fixed_cost_usd", "float", default=0.0, min_value=0, max_value=MAX_USD, unit="USD",
               description="One-off cost of building the route at all (0 for spectrum on a lit cable)"),
        Column("max_modules", "int", required=True, min_value=1, max_value=MAX_COUNT, unit="modules",
               description="Most modules that can be bought"),
        Column("lead_time_quarters", "int", required=True, min_value=0, max_value=MAX_QUARTERS, unit="quarters",
               description="Quarters from commitment to service"),
        Column("available_from", "str", default="",
               description="Ready-for-service quarter like '2027Q3' (empty: available now)"),
        Column("srlgs", "idlist", default=(), description="SRLG ids the built link joins ('a;b;c' in CSV)"),
        Column("source", "str", default="", description="Citation of the public figures used"),
    ),
    "Candidates: buildable capacity that does not exist yet. Building candidate c with m modules "
    "(1 <= m <= max_modules) costs fixed_cost_usd + m x module_cost_usd and adds link c with capacity "
    "m x module_gbps and membership in each SRLG of srlgs.",
)

DATASETS = TableSpec(
    "datasets",
    (
        Column("name", "str", default="", description="Display name"),
        Column("size_pb", "float", required=True, min_value=0, min_inclusive=False, max_value=MAX_PB, unit="PB",
               description="Size of one replica"),
        Column("home_sites", "idlist", required=True,
               description="Sites holding a replica today ('a;b;c' in CSV)"),
        Column("residency", "idlist", default=(),
               description="Where the data may sit: regions (NA, LATAM, EMEA, AFRICA, APAC) or ISO 3166-1 alpha-2 "
                           "country codes; a site satisfies it when its region or country is listed (empty: "
                           "anywhere)"),
        Column("read_gbps_per_1000_gpus", "float", required=True, min_value=0, max_value=MAX_GBPS,
               unit="Gbps/1000 GPU", description="Read rate of a training job, per 1,000 of its GPUs"),
        Column("growth_pb_per_year", "float", default=0.0, min_value=0, max_value=MAX_PB, unit="PB/year",
               description="New data a year, copied to every other replica"),
        Column("source", "str", default="", description="Citation of the public figures used"),
    ),
    "Datasets: training data with its replicas, residency, read rate and growth.",
)

TRAINING_JOBS = TableSpec(
    "training_jobs",
    (
        Column("name", "str", default="", description="Display name"),
        Column("gpus", "int", required=True, min_value=0, min_inclusive=False, max_value=MAX_COUNT, unit="GPU",
               description="GPUs of the job (over all its sites)"),
        Column("start", "str", default="", description="First quarter like '2027Q3' (empty: now)"),
        Column("end", "str", default="", description="Last quarter like '2028Q2' (empty: open)"),
        Column("parameters", "float", required=True, min_value=0, min_inclusive=False, max_value=MAX_PARAMETERS,
               unit="parameters", description="Model parameters"),
        Column("bytes_per_parameter", "float", default=2.0, min_value=0, min_inclusive=False,
               max_value=MAX_BYTES_PER_PARAMETER, unit="bytes",
               description="Bytes per gradient value as stored (2 for BF16)"),
        Column("step_time_s", "float", required=True, min_value=0, min_inclusive=False, max_value=MAX_SECONDS,
               unit="s", description="Seconds per optimiser (inner) step"),
        Column("sync_method", "str", default="data-parallel", choices=SYNC_METHODS,
               description="Cross-site synchronisation: data-parallel, diloco or streaming-diloco"),
        Column("inner_steps", "int", default=1, min_value=1, max_value=MAX_COUNT, unit="steps",
               description="Inner steps between outer synchronisations (DiLoCo's H)"),
        Column("fragments", "int", default=1, min_value=1, max_value=MAX_COUNT,
               description="Model fragments synchronised in turn (Streaming DiLoCo's P)"),
        Column("compression_bits", "float", default=NAN, min_value=0, min_inclusive=False,
               max_value=MAX_BYTES_PER_PARAMETER * 8, unit="bits",
               description="Bits per gradient value on the wire (empty: uncompressed)"),
        Column("datasets", "idlist", default=(), description="Dataset ids the job reads ('a;b;c' in CSV)"),
        Column("checkpoint_size_tb", "float", default=NAN, min_value=0, min_inclusive=False, max_value=MAX_TB,
               unit="TB",
               description="Size of one checkpoint (empty: parameters x 14 bytes, BF16 weights plus FP32 master "
                           "weights and two FP32 Adam moments)"),
        Column("checkpoint_interval_s", "float", default=3600.0, min_value=0, min_inclusive=False,
               max_value=MAX_SECONDS, unit="s", description="Seconds between checkpoints"),
        Column("checkpoint_replicas", "str", default="other-region", choices=CHECKPOINT_REPLICAS,
               description="Where checkpoints are copied: none, same-region or other-region (nearest site)"),
        Column("regions", "idlist", default=(), choices=REGIONS,
               description="Regions the job may run in (empty: any)"),
        Column("max_sites", "int", default=1, min_value=1, max_value=MAX_COUNT, unit="sites",
               description="Most sites the job may span"),
        Column("sites", "idlist", default=(),
               description="Sites the job runs at (empty: placement decides); at most max_sites"),
        Column("source", "str", default="", description="Citation of the public figures used"),
    ),
    "Training jobs: GPUs, model, synchronisation, datasets read, checkpoints, where they may run.",
)

TABLES: dict[str, TableSpec] = {t.name: t for t in (SITES, LINKS, SRLGS, METROS, DEMANDS, CANDIDATES, DATASETS,
                                                     TRAINING_JOBS)}
"""All tables, in file order."""

OPTIONAL_TABLES: frozenset[str] = frozenset({"candidates", "datasets", "training_jobs"})
"""Tables a scenario folder may leave out entirely (no file, no manifest entry); they load empty and are
written only when they have rows."""

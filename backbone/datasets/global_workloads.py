"""Training workloads of the shipped global scenario: datasets, training jobs and site storage (issue #29).

Every figure is derived from a published one (the constants below name their source; ``data/README.md`` lists
them) by the formulas of this module; the job mix itself (which jobs, how many GPUs, where they may run) is the
scenario's, chosen to cover what a planner meets: frontier pre-training at 16k-100k GPUs (data-parallel on one
campus, DiLoCo or Streaming DiLoCo across campuses), many mid-size fine-tuning jobs, and sovereign datasets that
must stay in the EU, India or the Gulf.

Derivations:

* **step time** of a job: ``6 N B / (G F)`` seconds for ``N`` parameters, ``B`` tokens per step, ``G`` GPUs at
  ``F`` FLOP/s each (training costs ``6 N`` FLOPs per token: Kaplan et al. 2020). The Llama 3 405B run (16,384 H100
  at 400 TFLOP/s each with a 16M-token batch, Llama 3 paper table 4) gives 5.93 s. Other jobs keep its tokens per
  GPU per step (16M / 16,384 = 976.6), so their step is ``6 N x 976.6 / F``.
* **model size** of a planned frontier job: compute-optimal (Chinchilla, Hoffmann et al. 2022: 20 tokens per
  parameter, so ``C = 6 N D = 120 N^2``) for ``G`` GPUs at ``F`` for 90 days at 90 % effective training time
  (the Llama 3 run's "higher than 90 %"): ``N = sqrt(G F t 0.9 / 120)``.
* **checkpoint interval**: Young's first-order optimum ``T = sqrt(2 d M)`` (Young, CACM 17(9), 1974) with write
  time ``d = C / W`` for a checkpoint of ``C = 14 N`` bytes at the Llama 3 storage's sustained 2 TB/s and the job's
  mean time between interruptions ``M``: 419 unexpected interruptions in 54 days at 16,384 GPUs (Llama 3 paper
  table 5), scaled inversely with GPUs. Every checkpoint is copied to the replica site (``checkpoint_replicas``).
* **dataset size**: tokens x 4 bytes (token ids as 32-bit integers: Llama 3's 128K-token vocabulary needs 17 bits).
* **read rate**: a training GPU consumes 976.6 tokens per step; at the Llama 3 405B step that is 164.7 tokens/s,
  x 4 bytes = 5.3 Mbps per 1,000 GPUs. Text reads are small next to gradient sync and checkpoints.
* **site storage**: the Llama 3 cluster's 240 PB for 24,576 GPUs (24K H100), 9.77 PB per 1,000 installed GPUs,
  at data centres; **storage cost**: hard disks at USD 0.014/GB (Backblaze's 2023 purchases of 16 TB drives)
  x 1.44 for the server around them (Backblaze: USD 117,000 per PB of pods against 81,000 of raw drives) x 20/17
  for erasure coding (Backblaze Vault 17+3): USD 23,800 per usable PB, a capacity tier (flash costs more).
"""

from __future__ import annotations

import math
from typing import Any

# ---------------------------------------------------------------------------------------- published figures
LLAMA3_PARAMETERS = 405e9
"""Llama 3 405B: parameters (Llama Team, "The Llama 3 Herd of Models", arXiv:2407.21783, 2024)."""
LLAMA3_GPUS = 16_384
"""GPUs of the Llama 3 405B pre-training run (ibid., table 4)."""
LLAMA3_TFLOPS_PER_GPU = 400e12
"""BF16 FLOP/s each GPU sustained at 16,384 GPUs with 8K sequences (ibid., table 4)."""
LLAMA3_BATCH_TOKENS = 16e6
"""Tokens per step in the main pre-training stage (ibid., table 4 and section 3.4.1)."""
LLAMA3_TOKENS = 15.6e12
"""Pre-training tokens (ibid., section 3.1)."""
LLAMA3_MULTILINGUAL_SHARE = 0.08
"""Share of multilingual tokens in the pre-training mix (ibid., section 3.1.2: 50 % general knowledge, 25 % maths
and reasoning, 17 % code, 8 % multilingual)."""
LLAMA3_INTERRUPTIONS = 419
"""Unexpected interruptions of the 405B run in a 54-day snapshot (ibid., table 5)."""
LLAMA3_SNAPSHOT_DAYS = 54.0
LLAMA3_STORAGE_PB = 240.0
"""Tectonic storage of the Llama 3 cluster, PB (ibid., section 3.3.1)."""
LLAMA3_CLUSTER_GPUS = 24_576
"""GPUs of that cluster (Meta, "Building Meta's GenAI infrastructure", 2024: two 24K-GPU clusters; 24,576)."""
LLAMA3_STORAGE_TB_PER_S = 2.0
"""Sustained throughput of that storage, TB/s (ibid., section 3.3.1)."""
EFFECTIVE_TRAINING = 0.9
"""Effective training time of the Llama 3 run ("higher than 90 %", ibid., section 3.3.4)."""
CHINCHILLA_TOKENS_PER_PARAMETER = 20.0
"""Compute-optimal tokens per parameter (Hoffmann et al., "Training Compute-Optimal Large Language Models",
arXiv:2203.15556, 2022)."""
DILOCO_INNER_STEPS = 500
"""DiLoCo's inner steps between outer synchronisations (Douillard et al., arXiv:2311.08105, 2023)."""
STREAMING_INNER_STEPS = 100
"""Streaming DiLoCo's inner steps per outer round (Douillard et al., arXiv:2501.18512, 2025)."""
STREAMING_FRAGMENT_EVERY_STEPS = 5
"""Streaming DiLoCo synchronises one fragment every 5 inner steps (ibid.), so ``P = H / 5`` fragments."""
STREAMING_BITS = 4.0
"""Streaming DiLoCo's outer gradients on the wire: 4-bit floats (ibid.)."""
SANGRAHA_TOKENS = 251e9
"""Sangraha, 22 Indian languages (Khan et al., "IndicLLMSuite", ACL 2024): tokens."""
JAIS_ARABIC_TOKENS = 116e9
"""Arabic tokens of Jais's pre-training data (Sengupta et al., "Jais and Jais-chat", arXiv:2308.16149, 2023)."""
COMMON_CRAWL_ARCHIVES = 100
"""Monthly Common Crawl archives, each about 75 TB (Thompson, "Improved methodology for longitudinal Web analytics
using Common Crawl", WebSci 2024, arXiv:2404.09770: "more than 100 archives", "on the order of 75TB")."""
COMMON_CRAWL_ARCHIVE_TB = 75.0
COMMON_CRAWL_ARCHIVES_PER_YEAR = 12
"""Common Crawl publishes about one archive a month (commoncrawl.org)."""
DISK_USD_PER_GB = 0.014
"""Hard-disk cost per GB of Backblaze's 2023 purchases of 16 TB drives (Backblaze, "Hard drive cost per gigabyte",
2023)."""
POD_OVER_DRIVES = 117_000.0 / 81_000.0
"""Storage server over raw drives: a petabyte of Backblaze Storage Pods against its raw drives (Backblaze,
"Petabytes on a budget", 2009)."""
ERASURE_OVERHEAD = 20.0 / 17.0
"""Backblaze Vault's 17 data + 3 parity shards."""

TOKEN_BYTES = 4.0
"""Bytes per stored token id (32-bit)."""
CHECKPOINT_BYTES_PER_PARAMETER = 14.0
"""As :data:`backbone.workload_traffic.CHECKPOINT_BYTES_PER_PARAMETER` (BF16 weights, FP32 master weights and two
FP32 Adam moments)."""
TRAINING_DAYS = 90.0
"""Length of a planned frontier run: one quarter."""
EU_COUNTRIES = ("AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IT", "LT",
                "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK")
"""The 27 member states of the European Union (ISO 3166-1 alpha-2; Greece is GR)."""

TOKENS_PER_GPU_STEP = LLAMA3_BATCH_TOKENS / LLAMA3_GPUS
STORAGE_PB_PER_GPU = LLAMA3_STORAGE_PB / LLAMA3_CLUSTER_GPUS
STORAGE_USD_PER_PB = DISK_USD_PER_GB * 1e6 * POD_OVER_DRIVES * ERASURE_OVERHEAD


def step_time_s(parameters: float, gpus: int | None = None, batch_tokens: float | None = None) -> float:
    """``6 N B / (G F)``; by default at the Llama 3 run's tokens per GPU per step."""
    per_gpu = TOKENS_PER_GPU_STEP if gpus is None or batch_tokens is None else batch_tokens / gpus
    return 6.0 * parameters * per_gpu / LLAMA3_TFLOPS_PER_GPU


def compute_optimal_parameters(gpus: int, days: float = TRAINING_DAYS) -> float:
    """``sqrt(G F t 0.9 / 120)``, rounded to 1e9."""
    compute = gpus * LLAMA3_TFLOPS_PER_GPU * days * 86_400.0 * EFFECTIVE_TRAINING
    return round(math.sqrt(compute / (6.0 * CHINCHILLA_TOKENS_PER_PARAMETER)) / 1e9) * 1e9


def checkpoint_interval_s(parameters: float, gpus: int) -> float:
    """Young's ``sqrt(2 d M)``, rounded to whole seconds."""
    write_s = CHECKPOINT_BYTES_PER_PARAMETER * parameters / (LLAMA3_STORAGE_TB_PER_S * 1e12)
    mtbf_s = LLAMA3_SNAPSHOT_DAYS * 86_400.0 / LLAMA3_INTERRUPTIONS * LLAMA3_GPUS / gpus
    return float(round(math.sqrt(2.0 * write_s * mtbf_s)))


def read_gbps_per_1000_gpus() -> float:
    """Tokens a GPU reads per second at the Llama 3 405B step, as Gbps per 1,000 GPUs (rounded to 1e-6)."""
    tokens_per_s = TOKENS_PER_GPU_STEP / step_time_s(LLAMA3_PARAMETERS)
    return round(tokens_per_s * TOKEN_BYTES * 8.0 * 1000.0 / 1e9, 6)


def _pb(tokens: float) -> float:
    return round(tokens * TOKEN_BYTES / 1e15, 6)


def dataset_records() -> list[dict[str, Any]]:
    """The ``datasets`` records."""
    read = read_gbps_per_1000_gpus()
    crawl_pb = COMMON_CRAWL_ARCHIVES * COMMON_CRAWL_ARCHIVE_TB / 1000.0
    return [
        {"id": "pretrain-text", "name": "Pre-training text mix (Llama 3 scale)", "size_pb": _pb(LLAMA3_TOKENS),
         "home_sites": "ashburn;council-bluffs", "read_gbps_per_1000_gpus": read,
         "source": "llama3: 15.6T tokens x 4 bytes; read rate at the 405B step"},
        {"id": "web-crawl", "name": "Web crawl archive (raw WARC)", "size_pb": crawl_pb,
         "home_sites": "ashburn;frankfurt", "read_gbps_per_1000_gpus": 0.0,
         "growth_pb_per_year": COMMON_CRAWL_ARCHIVES_PER_YEAR * COMMON_CRAWL_ARCHIVE_TB / 1000.0,
         "source": "common-crawl: 100 archives x 75 TB, 12 archives a year; read by data pipelines, not training"},
        {"id": "eu-multilingual", "name": "European-language text (EU residency)",
         "size_pb": _pb(LLAMA3_TOKENS * LLAMA3_MULTILINGUAL_SHARE), "home_sites": "frankfurt;paris",
         "residency": ";".join(EU_COUNTRIES), "read_gbps_per_1000_gpus": read,
         "source": "llama3: 8 % multilingual of 15.6T tokens x 4 bytes; kept in the EU"},
        {"id": "indic-text", "name": "Indian-language text (India residency)", "size_pb": _pb(SANGRAHA_TOKENS),
         "home_sites": "mumbai;chennai", "residency": "IN", "read_gbps_per_1000_gpus": read,
         "source": "sangraha: 251B tokens x 4 bytes; kept in India"},
        {"id": "arabic-text", "name": "Arabic text (Gulf residency)", "size_pb": _pb(JAIS_ARABIC_TOKENS),
         "home_sites": "dubai;riyadh", "residency": "AE;SA", "read_gbps_per_1000_gpus": read,
         "source": "jais: 116B Arabic tokens x 4 bytes; kept in the UAE and Saudi Arabia"},
    ]


# (id, name, gpus, parameters (None: compute-optimal), method, datasets, replicas, regions, max_sites, sites, start,
#  end, source)
JOBS: tuple[tuple[Any, ...], ...] = (
    ("frontier-405b", "Llama 3 405B-class pre-training (running)", LLAMA3_GPUS, LLAMA3_PARAMETERS, "data-parallel",
     "pretrain-text", "other-region", "NA", 1, "ashburn", "", "2027Q1", "llama3"),
    ("frontier-100k", "Frontier pre-training on 100k GPUs over campuses (DiLoCo)", 6 * LLAMA3_GPUS, None, "diloco",
     "pretrain-text", "other-region", "NA", 4, "", "2027Q3", "2027Q3", "chinchilla; diloco; xai-colossus"),
    ("frontier-32k-eu", "European frontier model (Streaming DiLoCo)", 2 * LLAMA3_GPUS, None, "streaming-diloco",
     "eu-multilingual;pretrain-text", "other-region", "EMEA", 2, "", "2027Q2", "2027Q2",
     "chinchilla; streaming-diloco"),
    ("sovereign-gulf", "Arabic sovereign model (Streaming DiLoCo, Gulf)", LLAMA3_GPUS, None, "streaming-diloco",
     "arabic-text", "same-region", "EMEA", 2, "", "2027Q4", "2027Q4", "chinchilla; streaming-diloco; jais"),
    ("sovereign-india", "Indian-language model", LLAMA3_GPUS // 2, None, "data-parallel", "indic-text",
     "same-region", "APAC", 1, "", "2027Q2", "2027Q2", "chinchilla; sangraha"),
    ("ft-70b-a", "Llama 3 70B fine-tune (running)", 2048, 70e9, "data-parallel", "pretrain-text", "same-region",
     "NA", 1, "dallas", "", "2026Q4", "llama3"),
    ("ft-70b-eu", "70B fine-tune on European data (running)", 1024, 70e9, "data-parallel", "eu-multilingual",
     "same-region", "EMEA", 1, "frankfurt", "", "2027Q1", "llama3"),
    ("ft-8b-in", "8B fine-tune on Indian languages (running)", 512, 8e9, "data-parallel", "indic-text",
     "same-region", "APAC", 1, "mumbai", "", "2026Q4", "llama3; sangraha"),
    ("ft-70b-b", "70B fine-tune", 4096, 70e9, "data-parallel", "pretrain-text", "same-region", "NA", 1, "", "2027Q1",
     "2027Q1", "llama3"),
    ("ft-70b-apac", "70B fine-tune (APAC)", 2048, 70e9, "data-parallel", "pretrain-text", "same-region", "APAC", 1,
     "", "2027Q1", "2027Q2", "llama3"),
    ("ft-70b-ar", "70B fine-tune on Arabic", 1024, 70e9, "data-parallel", "arabic-text", "same-region", "EMEA", 1,
     "", "2027Q2", "2027Q2", "llama3; jais"),
    ("ft-8b-a", "8B fine-tune", 512, 8e9, "data-parallel", "pretrain-text", "same-region", "", 1, "", "2027Q1",
     "2027Q1", "llama3"),
    ("ft-8b-b", "8B fine-tune", 1024, 8e9, "data-parallel", "pretrain-text", "same-region", "", 1, "", "2027Q2",
     "2027Q2", "llama3"),
    ("ft-8b-eu", "8B fine-tune on European data", 512, 8e9, "data-parallel", "eu-multilingual", "same-region",
     "EMEA", 1, "", "2027Q1", "2027Q1", "llama3"),
    ("ft-8b-latam", "8B fine-tune (LATAM)", 512, 8e9, "data-parallel", "pretrain-text", "same-region", "LATAM", 1,
     "", "2027Q3", "2027Q3", "llama3"),
    ("ft-70b-in", "70B fine-tune on Indian languages", 2048, 70e9, "data-parallel", "indic-text", "same-region",
     "APAC", 1, "", "2027Q3", "2027Q4", "llama3; sangraha"),
)
"""The training jobs: four frontier and sovereign pre-training runs (one running) and eleven fine-tuning jobs
(three running, pinned to the campus they run on). Jobs not running leave ``sites`` empty: placement decides."""


def training_job_records() -> list[dict[str, Any]]:
    """The ``training_jobs`` records (step time, model size, checkpoint interval and sync settings derived)."""
    records = []
    for (jid, name, gpus, parameters, method, datasets, replicas, regions, max_sites, sites, start, end,
         source) in JOBS:
        n = compute_optimal_parameters(gpus) if parameters is None else parameters
        rec: dict[str, Any] = {
            "id": jid, "name": name, "gpus": gpus, "start": start, "end": end, "parameters": n,
            "step_time_s": round(step_time_s(n), 4), "sync_method": method, "datasets": datasets,
            "checkpoint_interval_s": checkpoint_interval_s(n, gpus), "checkpoint_replicas": replicas,
            "regions": regions, "max_sites": max_sites, "sites": sites, "source": source,
        }
        if method == "diloco":
            rec["inner_steps"] = DILOCO_INNER_STEPS
        elif method == "streaming-diloco":
            rec.update(inner_steps=STREAMING_INNER_STEPS,
                       fragments=STREAMING_INNER_STEPS // STREAMING_FRAGMENT_EVERY_STEPS,
                       compression_bits=STREAMING_BITS)
        records.append(rec)
    return records


def storage_columns(sites: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Site records with ``storage_pb`` (data centres: 9.77 PB per 1,000 installed GPUs, rounded to 0.1 PB) and
    ``storage_cost_usd_per_pb`` (data centres: the capacity tier's cost)."""
    out = []
    for s in sites:
        dc = s.get("kind") == "datacenter"
        out.append({**s, "storage_pb": round(STORAGE_PB_PER_GPU * float(s.get("gpus_installed", 0)), 1) if dc else 0.0,
                    "storage_cost_usd_per_pb": round(STORAGE_USD_PER_PB, -2) if dc else 0.0})
    return out

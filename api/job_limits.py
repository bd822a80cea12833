"""Caps the server puts on a job before it is queued: the size of its options and the options it caps
(``time_limit_s``, ``max_scenarios``), wherever they appear; and the server's per-team quotas
(:func:`server_quotas`, which a team's own settings override)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backbone.api.settings import Settings
from backbone.api.store import IMPORT_KIND, JobQuotas

MAP_KIND = "map"
"""The job kind of a map drawn as a job (:mod:`backbone.api.job_processes`); its one file is ``map.<format>``."""

SERVER_KINDS = frozenset({IMPORT_KIND, MAP_KIND})
"""Kinds the server creates itself (``Prefer: respond-async`` on an upload or a map, never ``POST .../jobs``): they
run under ``BACKBONE_DOCUMENT_TIMEOUT_S`` rather than ``BACKBONE_JOB_TIMEOUT_S``, as their synchronous forms do,
and may run again after a lost worker (an import writes in the transaction that ends it; a map is pure)."""


def job_timeout_s(kind: str, settings: Settings) -> float:
    """The wall-clock limit of a job of ``kind``."""
    return settings.document_timeout_s if kind in SERVER_KINDS else settings.job_timeout_s


def server_quotas(settings: Settings) -> JobQuotas:
    """The server's per-team quotas (``BACKBONE_MAX_CPU_S_PER_TEAM``, ``BACKBONE_CPU_QUOTA_WINDOW_H``,
    ``BACKBONE_MAX_STORED_BYTES_PER_TEAM``): what holds for a team that sets none of its own."""
    return JobQuotas(settings.max_cpu_s_per_team, settings.cpu_quota_window_h * 3600.0,
                     settings.max_stored_bytes_per_team)


class OptionsTooLargeError(Exception):
    """Job options larger than ``settings.max_job_options_bytes``; the API answers 413."""

    http_status = 413
    title = "Content Too Large"

    def problem_errors(self) -> list[dict[str, str]]:
        """The one problem: the job's options (RFC 9457 ``errors``)."""
        return [{"file": "request body", "table": "job", "record": "", "field": "options", "message": str(self)}]


CAPPED_OPTIONS = {"time_limit_s": ("max_time_limit_s", "BACKBONE_MAX_TIME_LIMIT_S"),
                  "max_scenarios": ("max_scenarios", "BACKBONE_MAX_SCENARIOS")}
"""Option names capped by the server wherever they appear (nested stages included) -> setting, variable (each
option has one name, so there is no other spelling to cap)."""


def check_job_limits(options: Mapping[str, Any], settings: Settings) -> None:
    """Enforce the server's caps on job options before a job is queued.

    Raises
    ------
    OptionsTooLargeError
        Options larger than ``max_job_options_bytes`` as JSON.
    backbone.errors.ValidationError
        An option in :data:`CAPPED_OPTIONS` above its cap, at any depth (the field is the dotted path).
    """
    import json

    from backbone.errors import Problem, ValidationError

    size = len(json.dumps(options, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8", "replace"))
    if size > settings.max_job_options_bytes:
        raise OptionsTooLargeError(f"job options of {size} bytes exceed the server's limit of "
                                   f"{settings.max_job_options_bytes} (BACKBONE_MAX_JOB_OPTIONS_BYTES)")
    problems: list[Problem] = []

    def walk(value: Any, path: list[str]) -> None:
        if isinstance(value, Mapping):
            for key, sub in value.items():
                capped = CAPPED_OPTIONS.get(str(key))
                if capped is not None and isinstance(sub, int | float) and not isinstance(sub, bool):
                    cap = getattr(settings, capped[0])
                    if not sub <= cap:  # also catches NaN
                        problems.append(Problem(f"{sub} is above the server's cap of {cap:g} ({capped[1]})",
                                                table="options", field=".".join([*path, str(key)])))
                walk(sub, [*path, str(key)])
        elif isinstance(value, list):
            for i, sub in enumerate(value):
                walk(sub, [*path, str(i)])

    walk(options, [])
    if problems:
        raise ValidationError(problems)

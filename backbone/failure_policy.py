"""Each traffic class's failure policy: whether its demands must be carried in a failure state, or pause.

A class **survives** (its demands are offered in every failure state, and a state that cannot carry them is not
survived) or **pauses** (in a failure state its demands are not offered: they wait out the cut, and the state's
record shows them as ``paused_gbps`` beside ``unmet_gbps``). The intact state offers every class.

Defaults (:data:`DEFAULT_FAILURE_POLICY`): every class survives except ``training-sync``, which pauses -- a job split
over sites checkpoints and waits out a cut (its sites keep their GPUs; the gradient exchange resumes when the
backbone is whole again), whereas inference, checkpoints (durability), dataset reads and the rest must go on.

The policy is set, each level over the one before:

1. the defaults;
2. the scenario: ``failure_policy`` in ``scenario.yaml`` (``{class: survive | pause}``; checked by
   :func:`check_failure_policy` when the scenario is built, problems naming ``scenario.yaml`` and the class);
3. the run: the ``failure_policy`` option of the failures, design and plan options (the same mapping).

:func:`carried_in_failure` is the one answer to "which demands must be carried in a failure state"; everything
that judges a failure state (the sweep, the survivable design, the independent checkers) asks it.

Example
-------
>>> carried_in_failure(net).groupby(net.demands["traffic_class"]).all()  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from backbone.errors import Problem, ValidationError
from backbone.schema import TRAFFIC_CLASSES

if TYPE_CHECKING:
    import pandas as pd

    from backbone.model import Network

__all__ = ["DEFAULT_FAILURE_POLICY", "FAILURE_POLICIES", "FAILURE_POLICY_KEY", "FailurePolicyName",
           "carried_in_failure", "check_failure_policy", "class_failure_policy", "paused_classes"]

FailurePolicyName = Literal["survive", "pause"]
"""A class's failure policy."""

FAILURE_POLICIES: tuple[str, ...] = ("survive", "pause")
"""The failure policies a class may have."""

FAILURE_POLICY_KEY = "failure_policy"
"""The ``scenario.yaml`` key (and the scenario's ``meta`` key) of the scenario's policy per class."""

DEFAULT_FAILURE_POLICY: Mapping[str, str] = {c: "pause" if c == "training-sync" else "survive" for c in TRAFFIC_CLASSES}
"""Each class's policy unless the scenario or the run says otherwise: ``training-sync`` pauses (a split job
checkpoints and waits out a cut), every other class survives."""


def check_failure_policy(policy: Any, file: str = "scenario.yaml", table: str = FAILURE_POLICY_KEY) -> list[Problem]:
    """Problems with a failure-policy mapping ``{traffic class: survive | pause}`` (empty when it is valid).

    Each problem names ``file``, ``table`` and ``failure_policy.<class>`` (``field``): an unknown class or policy, or a value that
    is not a mapping. ``None`` is valid (no policy given).
    """
    if policy is None:
        return []
    if not isinstance(policy, Mapping):
        return [Problem(f"must map traffic classes to {' or '.join(FAILURE_POLICIES)}, got {policy!r}", file=file,
                        table=table, field=FAILURE_POLICY_KEY)]
    problems = []
    for cls, value in policy.items():
        if cls not in TRAFFIC_CLASSES:
            problems.append(Problem(f"unknown traffic class {cls!r} (expected one of {', '.join(TRAFFIC_CLASSES)})",
                                    file=file, table=table, field=f"{FAILURE_POLICY_KEY}.{cls}"))
        elif value not in FAILURE_POLICIES:
            problems.append(Problem(f"must be {' or '.join(FAILURE_POLICIES)}, got {value!r}", file=file, table=table,
                                    field=f"{FAILURE_POLICY_KEY}.{cls}"))
    return problems


def class_failure_policy(meta: Mapping[str, Any] | None = None,
                         overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each class's failure policy: the defaults, then the scenario's (``meta["failure_policy"]``), then the run's
    ``overrides``.

    Raises
    ------
    ValidationError
        A policy names an unknown class or policy (the scenario's naming ``scenario.yaml``, the run's ``options``).
    """
    scenario = (meta or {}).get(FAILURE_POLICY_KEY)
    problems = check_failure_policy(scenario) + check_failure_policy(overrides, file="", table="options")
    if problems:
        raise ValidationError(problems)
    return {**DEFAULT_FAILURE_POLICY, **dict(scenario or {}), **dict(overrides or {})}


def paused_classes(meta: Mapping[str, Any] | None = None, overrides: Mapping[str, str] | None = None) -> list[str]:
    """The classes that pause in a failure state (in :data:`~backbone.schema.TRAFFIC_CLASSES` order)."""
    policy = class_failure_policy(meta, overrides)
    return [c for c in TRAFFIC_CLASSES if policy[c] == "pause"]


def carried_in_failure(net: Network, overrides: Mapping[str, str] | None = None) -> pd.Series:
    """Per demand of ``net`` (its demands' index): whether it must be carried in a failure state -- its class
    survives under :func:`class_failure_policy` of ``net``'s scenario policy and the run's ``overrides``.

    A demand that is not carried in a failure state pauses there: it is not offered, so it is neither unmet nor
    carried. The intact state offers every demand whatever its class.

    Raises
    ------
    ValidationError
        A policy names an unknown class or policy.
    """
    policy = class_failure_policy(net.meta, overrides)
    return net.demands["traffic_class"].map(lambda c: policy.get(str(c), "survive") == "survive").astype(bool)

"""Renamed keyword arguments: the old spelling keeps working for a while, with a :class:`DeprecationWarning`.

The options have one name each everywhere (``k_paths``, ``time_limit_s``, ``utilisation_ceiling``, ``survive``);
public functions that took an older spelling (``k``, ``time_limit``, ``ceiling``, ``failure_kind``) accept it as a
keyword-only alias, resolved by :func:`renamed`.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["renamed"]


def renamed(function: str, old: str, old_value: Any, new: str, new_value: Any, default: Any) -> Any:
    """``new_value``, or ``old_value`` given under the deprecated keyword ``old`` of ``function`` (with a warning).

    ``old_value`` is None when the old keyword was not given. Giving both spellings with different values (the
    new one not at its ``default``) is a :class:`TypeError`.

    Example
    -------
    >>> def run(k_paths: int = 4, *, k: int | None = None) -> int:
    ...     return renamed("run", "k", k, "k_paths", k_paths, 4)
    >>> run(k_paths=8)
    8
    """
    if old_value is None:
        return new_value
    warnings.warn(f"{function}: {old}= is deprecated; use {new}=", DeprecationWarning, stacklevel=3)
    if new_value != default and new_value != old_value:
        raise TypeError(f"{function}: got both {old}={old_value!r} and {new}={new_value!r}; use {new}= only")
    return old_value

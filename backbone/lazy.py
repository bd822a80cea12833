"""Lazy package exports (PEP 562): a package's public names imported from their submodules on first use."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``exports`` maps each public name to the submodule defining it.

    Importing one light submodule (say, the options) then does not load the rest of the package; a name is
    imported on first use and cached in the package's namespace.

    Example
    -------
    >>> __getattr__ = lazy_exports(__name__, {"FailureOptions": "options"})  # doctest: +SKIP
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__

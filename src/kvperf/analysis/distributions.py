"""The distribution functions the analysis needs — Student's t CDF (``stdtr``) and quantile
(``stdtrit``), the normal CDF (``ndtr``), the chi-square quantile (``chdtri``) — from
scipy.special, imported on first use: scipy.special costs ~0.2 s to import, which every kvperf
command would pay at startup, most of them without computing a single p-value."""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any


@functools.cache
def _special() -> ModuleType:
    return importlib.import_module("scipy.special")


def stdtr(df: Any, t: Any) -> Any:
    """P(T ≤ t) for Student's t with ``df`` degrees of freedom (arrays broadcast)."""
    return _special().stdtr(df, t)


def stdtrit(df: Any, p: Any) -> Any:
    """The t such that P(T ≤ t) = p (arrays broadcast)."""
    return _special().stdtrit(df, p)


def ndtr(x: Any) -> Any:
    """The standard normal CDF (arrays broadcast)."""
    return _special().ndtr(x)


def chdtri(df: Any, p: Any) -> Any:
    """The x such that P(χ²_df > x) = p."""
    return _special().chdtri(df, p)

"""A config's key and value distributions (pure): ``key_distribution``, ``value_sizes``,
``value_content`` and ``ttl``, each a sweepable list of texts in kvload's own spelling (its
``--key-distribution``, ``--value-size``, ``--value-content`` and ``--ttl`` take them as
they are). ``parse_*`` check one value and return its canonical text; a mistake raises
ValueError naming the key and the value.

- key_distribution: ``uniform`` (the default), ``sequential``, ``zipf:S`` (0 < S < 5),
  ``gaussian:MEAN:SD`` (fractions of the key space), ``hotset:KEYS:SHARE`` (the fraction
  of the keys taking that share of the requests).
- value_sizes: ``64`` (fixed, as ``data_sizes``), ``64-1024`` (uniform in the range),
  ``64:3,1024:1`` (a weighted list), ``1-100:50,101-1000:40,1001-4096:10`` (a histogram:
  a bucket by weight, a size uniform in it).
- value_content: ``random`` (the default: pseudo-random printable bytes), or
  ``compressible:R`` (zlib compresses a value to about R of its size, 0 < R ≤ 1).
- ttl: ``none`` (the default), ``60`` (seconds) or ``30-300`` (uniform in the range), set
  on SET commands with ``EX``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

KEY_DEFAULT, CONTENT_DEFAULT, TTL_DEFAULT = "uniform", "random", "none"
# The config keys of key and value distributions, as a trial's identity and its row's
# series (``config_set``) hold them when they differ from the defaults (``Load.workload``).
WORKLOAD_KEYS = ("key_distribution", "value_sizes", "value_content", "ttl")
MAX_VALUE = 512 << 20  # bytes: the server's proto-max-bulk-len

_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"


def _fractions(key: str, text: str, args: list[str], ranges: list[tuple[str, float, float]]
               ) -> list[float]:
    out = []
    for word, (what, lo, hi) in zip(args, ranges, strict=True):
        if not re.fullmatch(_NUMBER, word):
            raise ValueError(f"{key!r}: {text!r}: {what} {word!r} is not a number")
        value = float(word)
        if not lo < value < hi:
            raise ValueError(f"{key!r}: {text!r}: {what} must be above {lo:g} and below "
                             f"{hi:g}, got {value:g}")
        out.append(value)
    return out


KEY_SHAPES: dict[str, list[tuple[str, float, float]]] = {
    "uniform": [], "sequential": [],
    "zipf": [("the exponent", 0.0, 5.0)],
    "gaussian": [("the mean", -1e-12, 1 + 1e-12), ("the deviation", 0.0, 10.0)],
    "hotset": [("the hot keys' fraction", 0.0, 1.0), ("the hot keys' share", 0.0, 1 + 1e-12)],
}


def parse_key_distribution(key: str, value: Any) -> str:
    """One key distribution, checked: its text as kvload takes it."""
    if not isinstance(value, str):
        raise ValueError(f"{key!r} entries must be strings like \"zipf:0.99\", got {value!r}")
    name, *args = value.split(":")
    shape = KEY_SHAPES.get(name)
    if shape is None or len(args) != len(shape):
        raise ValueError(f"{key!r}: {value!r} is not one of uniform, sequential, zipf:S, "
                         "gaussian:MEAN:SD, hotset:KEYS:SHARE (e.g. \"hotset:0.01:0.9\": 1% "
                         "of the keys take 90% of the requests)")
    _fractions(key, value, args, shape)
    return value


@dataclass(frozen=True)
class Bucket:
    """Sizes ``lo``..``hi`` (inclusive) drawn with ``weight``."""

    lo: int
    hi: int
    weight: int


def _bucket(key: str, text: str, entry: str) -> Bucket:
    match = re.fullmatch(r"(\d+)(?:-(\d+))?(?::(\d+))?", entry.strip())
    if not match:
        raise ValueError(f"{key!r}: {text!r}: {entry!r} is not SIZE, LOW-HIGH, SIZE:WEIGHT "
                         "or LOW-HIGH:WEIGHT (e.g. \"64-1024\", \"64:3,1024:1\")")
    lo = int(match[1])
    hi = int(match[2]) if match[2] else lo
    weight = int(match[3]) if match[3] else 1
    if not 1 <= lo <= hi <= MAX_VALUE:
        raise ValueError(f"{key!r}: {text!r}: sizes must run from 1 up to {MAX_VALUE} bytes, "
                         f"got {entry!r}")
    if weight < 1:
        raise ValueError(f"{key!r}: {text!r}: {entry!r} has weight 0")
    return Bucket(lo, hi, weight)


def parse_value_sizes(key: str, value: Any) -> tuple[Bucket, ...]:
    """One value-size distribution, checked: its buckets."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key!r} entries must be sizes or strings like \"64-1024\", got "
                         f"{value!r}")
    return tuple(_bucket(key, value, entry) for entry in value.split(","))


def size_text(buckets: tuple[Bucket, ...]) -> str:
    """The canonical text of a value-size distribution (kvload's --value-size)."""
    def one(b: Bucket) -> str:
        size = str(b.lo) if b.lo == b.hi else f"{b.lo}-{b.hi}"
        return size if len(buckets) == 1 and b.weight == 1 else f"{size}:{b.weight}"
    return ",".join(one(b) for b in buckets)


def fixed_size(buckets: tuple[Bucket, ...]) -> int | None:
    """The one size of a fixed distribution, None for any other."""
    sizes = {(b.lo, b.hi) for b in buckets}
    if len(sizes) == 1:
        lo, hi = sizes.pop()
        return lo if lo == hi else None
    return None


def mean_size(buckets: tuple[Bucket, ...]) -> float:
    """Bytes per value on average."""
    total = sum(b.weight for b in buckets)
    return sum(b.weight * (b.lo + b.hi) / 2 for b in buckets) / total


def parse_value_content(key: str, value: Any) -> str:
    """``random`` or ``compressible:R``."""
    if value == CONTENT_DEFAULT:
        return CONTENT_DEFAULT
    match = re.fullmatch(r"compressible:" + _NUMBER, value) if isinstance(value, str) else None
    if not match or not 0 < float(value.split(":")[1]) <= 1:
        raise ValueError(f"{key!r}: {value!r} is not \"random\" or \"compressible:R\" (R in "
                         "(0, 1]: the compressed share of a value, e.g. \"compressible:0.5\")")
    return str(value)


def parse_ttl(key: str, value: Any) -> str:
    """``none``, seconds, or ``LOW-HIGH`` seconds."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    match = re.fullmatch(r"(\d+)(?:-(\d+))?", value) if isinstance(value, str) else None
    if value == TTL_DEFAULT:
        return TTL_DEFAULT
    if not match or not 1 <= int(match[1]) <= int(match[2] or match[1]) < 1 << 40:
        raise ValueError(f"{key!r}: {value!r} is not \"none\", SECONDS or \"LOW-HIGH\" "
                         "(seconds from 1, e.g. 60 or \"30-300\")")
    return value if match[2] and match[1] != match[2] else match[1]

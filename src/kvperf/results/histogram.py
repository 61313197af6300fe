"""HDR histograms (HdrHistogram V2, deflate-compressed, base64) as kvload writes them.

Percentiles across runs or nodes are read from the merged histogram — never averaged.
"""

from __future__ import annotations

from collections.abc import Sequence

from hdrh.histogram import HdrHistogram

# A trial's histograms file as kvperf reads it: kind (corrected, service) → encoded
# histogram, and "unit" (numeric fields such as significant_figures are not read).
HistogramFile = dict[str, str]

PERCENTILES = {"p50": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p99_9": 99.9}
UNIT_TO_MS = {"us": 1e-3, "ns": 1e-6, "ms": 1.0}


def decode(encoded: str | bytes) -> HdrHistogram:
    """One histogram from its base64 V2 encoding; ValueError if it is not one."""
    try:
        return HdrHistogram.decode(encoded)
    except Exception as exc:  # hdrh raises several unrelated types for bad input
        raise ValueError(f"not an HDR histogram encoding: {exc}") from None


def merge(encoded: Sequence[str | bytes]) -> HdrHistogram:
    """The sum of several histograms (all recorded in the same unit)."""
    if not encoded:
        raise ValueError("no histograms to merge")
    merged = decode(encoded[0])
    for other in encoded[1:]:
        merged.add(decode(other))
    return merged


def summary_ms(histogram: HdrHistogram, unit: str = "us") -> dict[str, float]:
    """min, mean, percentiles and max of a histogram, in milliseconds."""
    scale = UNIT_TO_MS[unit]
    out = {"min": histogram.get_min_value() * scale, "mean": histogram.get_mean_value() * scale}
    out.update({name: histogram.get_value_at_percentile(p) * scale
                for name, p in PERCENTILES.items()})
    out["max"] = histogram.get_max_value() * scale
    out["count"] = float(histogram.get_total_count())
    return out


def merged_runs(loaded: Sequence[HistogramFile | None], kind: str
                ) -> tuple[HdrHistogram, float] | None:
    """One kind (corrected, service) of several runs' histogram files merged, and the
    scale of their unit to ms; None unless every run has one in a known unit."""
    if not loaded or not all(h and h.get(kind) for h in loaded):
        return None
    scale = UNIT_TO_MS.get(str((loaded[0] or {}).get("unit", "us")))
    if scale is None:
        return None
    try:
        return merge([h[kind] for h in loaded if h]), scale
    except ValueError:
        return None


def merged_latency(loaded: Sequence[HistogramFile | None]
                   ) -> tuple[HdrHistogram, float, str] | None:
    """The latency readers show for several runs: their ``corrected`` histograms merged
    where every run has one (kvload), else their ``service`` ones — a closed-loop client
    harness stores only those, uncorrected for coordinated omission —, with the scale to
    ms and the kind read; None when neither kind is in every run."""
    for kind in ("corrected", "service"):
        merged = merged_runs(loaded, kind)
        if merged is not None:
            return merged[0], merged[1], kind
    return None

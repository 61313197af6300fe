"""matplotlib graphs of a comparison: consolidated bars and per-run variance lines (PNG)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from kvperf.analysis.comparison import MetricComparison, describe_group


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def consolidated(results: list[MetricComparison], metric: str, path: Path,
                 names: tuple[str, str]) -> None:
    """One bar pair per series: baseline vs new mean with σ error bars."""
    rows = [c for c in results if c.metric == metric]
    labels = [describe_group(c.group) for c in rows]
    xs = range(len(rows))
    fig, ax = plt.subplots(figsize=(max(6, len(rows) * 1.2), 4))
    for offset, side, name in ((-0.2, "base", names[0]), (0.2, "new", names[1])):
        stats = [getattr(c, side) for c in rows]
        ax.bar([x + offset for x in xs], [s.mean for s in stats], width=0.4, label=name,
               yerr=[0 if s.n < 2 else s.sd for s in stats], capsize=3)
    ax.set_xticks(list(xs), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(metric)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def variance(c: MetricComparison, path: Path, names: tuple[str, str]) -> None:
    """Each run's value on both sides, with the mean ± σ as an error bar."""
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for side, name in (("base", names[0]), ("new", names[1])):
        stats = getattr(c, side)
        runs = range(1, stats.n + 1)
        ax.plot(runs, stats.values, marker="o", label=name)
        ax.errorbar([stats.n + 0.3], [stats.mean], yerr=[0 if stats.n < 2 else stats.sd],
                    fmt="s", capsize=4)
    ax.set_title(f"{describe_group(c.group)} · {c.metric}", fontsize=9)
    ax.set_xlabel("run")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_graphs(results: list[MetricComparison], directory: Path,
                 names: tuple[str, str]) -> list[Path]:
    """All graphs into ``directory``; returns the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for metric in dict.fromkeys(c.metric for c in results):
        path = directory / f"comparison_{_safe(metric)}.png"
        consolidated(results, metric, path, names)
        written.append(path)
    for c in results:
        path = directory / f"variance_{_safe(describe_group(c.group))}_{_safe(c.metric)}.png"
        variance(c, path, names)
        written.append(path)
    return written

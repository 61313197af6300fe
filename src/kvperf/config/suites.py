"""Built-in suites: named configs in kvperf's JSON format, shipped beside the default one
(``config/defaults/suites/<name>.json``). ``kvperf run --suite a,b`` runs their objects one
after the other; ``kvperf suites`` lists them with the line of SUITES."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kvperf.config.loader import load_config
from kvperf.config.model import BenchmarkSpec
from kvperf.core.errors import UsageError
from kvperf.core.kinds import Measure

SUITES_DIR = Path(__file__).parent / "defaults" / "suites"

# name → one line: what the suite measures (every name has SUITES_DIR/<name>.json).
SUITES: dict[str, str] = {
    "quick": "SET and GET, 64 B values, no pipelining, 2 s each: a smoke run in seconds",
    "comprehensive": "SET/GET over 100 B / 1 KB / 10 KB x pipelines 1 / 10 / 100, MULTI/EXEC, "
                     "INCR, read-heavy (1 SET : 10 GET), write-heavy (10:1) and mixed 1:1, "
                     "1 vs 10 connections",
    "throughput": "peak requests/s: SET, GET and INCR pipelined 16 deep over 50 connections",
    "latency": "latency without queueing: SET and GET unpipelined, 1 and 10 connections, 5 s",
    "pipeline": "pipeline depth sweep: SET and GET at P = 1, 4, 16, 64, 128",
    "memory": "bytes per key (--measure memory): strings, hashes and lists of 100 B / 1 KB "
              "/ 10 KB values, sets and sorted sets (--keys each; 10 KB x 100,000 is 1 GB)",
}
MEASURED = {"memory": Measure.MEMORY}  # a suite that measures something else than timing


def suite_path(name: str) -> Path:
    return SUITES_DIR / f"{name}.json"


def parse_names(text: str) -> tuple[str, ...]:
    """``"latency,pipeline"`` → the names, each checked (UsageError naming an unknown one)."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    if not names:
        raise UsageError(f"--suite {text!r}: name a suite ({', '.join(SUITES)})")
    for name in names:
        if name not in SUITES:
            raise UsageError(f"--suite {name!r}: no such suite; suites: {', '.join(SUITES)} "
                             "(kvperf suites describes them)")
    return names


def load_suites(names: tuple[str, ...], cpus: set[int]) -> list[BenchmarkSpec]:
    """The suites' config objects in order, numbered across suites."""
    specs: list[BenchmarkSpec] = []
    for name in names:
        for spec in load_config(suite_path(name), cpus):
            specs.append(replace(spec, index=len(specs)))
    return specs


def suite_measure(names: tuple[str, ...], measure: Measure) -> Measure:
    """What the run measures: ``--measure``, or the one suite's own (``memory``); a suite
    measuring memory runs alone and with no other --measure (UsageError)."""
    own = {MEASURED[n] for n in names if n in MEASURED}
    if not own:
        return measure
    if len(names) > 1:
        raise UsageError(f"--suite {','.join(names)}: the memory suite runs alone (it "
                         "measures bytes per key, not time)")
    (wanted,) = own
    if measure not in (Measure.TIMING, wanted):
        raise UsageError(f"--suite {names[0]} measures {wanted}; not with --measure {measure}")
    return wanted

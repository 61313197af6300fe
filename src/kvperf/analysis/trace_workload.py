"""A synthetic workload approximating a recorded trace (pure; ``kvperf trace stats
--emit-workload kvload|memtier|kvperf``): kvload's own-mode argv or ``kvload memtier`` argv
with the trace's command mix, key count and key popularity, value size, pipeline depth,
connections and rate (both run against 127.0.0.1:6379 unless ``-h``/``-p`` are added after
``kvload`` or ``kvload memtier``), or a kvperf config (JSON text) for ``kvperf run --config``
with the mix (``command_mix``), keys (``keyspacelen``, ``key_distribution``), value sizes
(``value_sizes``), pipeline depth, connections and duration.

What is approximated, and how:
- Mix: each command is one template built from its first record (keys → a key placeholder,
  written values → ``__data__``, other arguments kept), repeated in proportion to its count:
  the smallest sequence of at most MAX_SEATS commands whose shares are within 1 point of the
  trace's (largest remainders), else the closest; a command below half a seat is dropped.
- Keys: the trace's distinct key count, Zipf with the fitted exponent when it is at least
  ZIPF_MIN (a sparse uniform sample fits up to ~0.4, docs/TRACES.md), else uniform (memtier
  ``Z`` or ``R``; kvload and kvperf ``zipf:S`` or ``uniform``).
- Value size: the median written value (else recorded GET replies), else 32 bytes; the
  kvperf config: the trace's value-size histogram (its power-of-two buckets as ranges), or
  the median when one bucket holds every value.
- Pipeline depth: the mean commands per recorded read, rounded (own mode and kvperf: per
  cycle of the mix, which kvload sends as one write).
- Rate: the trace's mean commands per second (own mode ``--rps``; memtier
  ``--rate-limiting`` per connection), for the trace's span (at least 1 s). A kvperf config
  runs closed loop (a note says how to run it at the trace's rate).
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from kvperf.analysis.trace_stats import TraceStats
from kvperf.driver.trace_format import Record, Trace, command_name, key_positions

MAX_SEATS = 20
ZIPF_MIN = 0.5
DEFAULT_VALUE_SIZE = 32
TOOLS = ("kvload", "memtier", "kvperf")


@dataclass(frozen=True)
class Workload:
    argv: list[str]  # starting with "kvload" (the kvperf config's: how to run it)
    notes: list[str] = field(default_factory=list)  # what was approximated or dropped
    config: str | None = None  # the kvperf config's JSON text

    @property
    def text(self) -> str:
        """What ``trace stats --emit-workload`` prints: the config, else the command line."""
        return self.config if self.config is not None else shlex.join(self.argv)


def seats(mix: dict[str, int], max_seats: int = MAX_SEATS) -> dict[str, int]:
    """Integer counts per command, at most ``max_seats`` in all, whose shares are closest to
    the mix's: the first total within 1 point of every share, else the closest one."""
    total = sum(mix.values())
    best: tuple[float, dict[str, int]] | None = None
    for n in range(1, max_seats + 1):
        quotas = {name: count * n / total for name, count in mix.items()}
        got = {name: math.floor(q) for name, q in quotas.items()}
        by_remainder = sorted(quotas, key=lambda k: quotas[k] - got[k], reverse=True)
        for name in by_remainder[:n - sum(got.values())]:
            got[name] += 1
        error = max(abs(got[k] / n - mix[k] / total) for k in mix)
        if best is None or error < best[0] - 1e-12:
            best = (error, got)
        if error <= 0.01:
            break
    assert best is not None
    return {k: v for k, v in best[1].items() if v > 0}


def _value_positions(r: Record) -> set[int]:
    name = command_name(r)
    if name in ("MSET", "MSETNX"):
        return set(range(2, len(r.args), 2))
    at = {"SET": 2, "SETNX": 2, "GETSET": 2, "APPEND": 2, "SETEX": 3, "PSETEX": 3}.get(name)
    return {at} if at is not None and at < len(r.args) else set()


def _token(text: str) -> bool:
    """Whether ``text`` is one word of a template as it is (no space, quote, ``;``…)."""
    return bool(text) and text.isprintable() and not any(c in text for c in " \"'\\;{}#")


def _plain(arg: bytes) -> str:
    """An argument kept in the template: as text when it is a plain token, else x's."""
    text = arg.decode("latin-1")
    return text if _token(text) and text != "__data__" else "x" * max(len(arg), 1)


def template(r: Record, key: str) -> list[str]:
    """The command's words: keys → ``key``, written values → ``__data__``, others kept."""
    keys, values = set(key_positions(r)), _value_positions(r)
    words = [command_name(r)]
    for i, a in enumerate(r.args[1:], 1):
        words.append(key if i in keys else "__data__" if i in values else _plain(a))
    return words


def _firsts(trace: Trace) -> dict[str, Record]:
    found: dict[str, Record] = {}
    for r in trace.records:
        found.setdefault(command_name(r), r)
    return found


def _rate(s: TraceStats) -> float | None:
    return s.commands / s.span_s if s.span_s > 0 else None


def _common(s: TraceStats) -> tuple[int, int, int]:
    """(connections, duration s, value size)."""
    size = s.value_size if s.value_size is not None else DEFAULT_VALUE_SIZE
    return max(s.connections, 1), max(1, math.ceil(s.span_s)), max(size, 1)


def _load_connections(trace: Trace, counts: dict[str, int]) -> int:
    """The connections that sent the commands kept in the mix (a client's probe connection
    that only sent a PING is not one of the load's)."""
    return max(1, len({r.conn for r in trace.records if command_name(r) in counts}))


def kvload_own(trace: Trace, s: TraceStats) -> Workload:
    counts = seats(s.mix)
    firsts = _firsts(trace)
    sequence: list[str] = []
    for name, n in counts.items():
        for _ in range(n):
            sequence += [*template(firsts[name], "key:__rand_int__"), ";"]
    per_sequence = sum(counts.values())
    conns, duration, size = _common(s)
    pipeline = max(1, round(s.pipeline_depth / per_sequence))
    argv = ["kvload", "-c", str(conns), "-P", str(pipeline), "-r", str(max(s.keys, 1)),
            "-d", str(size), "--duration", str(duration), "--independent-keys",
            "--key-distribution", _key_distribution(s)]
    rate = _rate(s)
    if rate is not None:
        argv += ["--rps", str(max(1, round(rate)))]
    notes = [f"keys: {_key_distribution(s)} over {s.keys}"]
    return Workload(argv + sequence[:-1], notes + _dropped(s.mix, counts))


def _zipf(s: TraceStats) -> bool:
    return s.zipf_s is not None and ZIPF_MIN <= s.zipf_s < 5


def _key_distribution(s: TraceStats) -> str:
    return f"zipf:{s.zipf_s:.2f}" if _zipf(s) and s.zipf_s is not None else "uniform"


def _value_sizes(s: TraceStats) -> str:
    """The trace's value-size histogram as ``value_sizes`` takes it: each ``≤N`` bucket the
    range N/2+1..N with its count as weight; one bucket: the median size alone."""
    buckets = {int(k.lstrip("≤")): n for k, n in s.value_sizes.items() if n > 0}
    if len(buckets) <= 1:
        return str(_common(s)[2])
    return ",".join(f"{top // 2 + 1}-{top}:{n}" for top, n in sorted(buckets.items()))


def kvperf_config(trace: Trace, s: TraceStats) -> Workload:
    """A kvperf config: the mix as ``command_mix`` lines (keys ``__key__``, the seeded
    string keyspace), the keys' distribution, the value-size histogram, the pipeline depth
    per cycle of the mix, the connections and the trace's span as duration."""
    counts = seats(s.mix)
    firsts = _firsts(trace)
    lines = [f"{n} {' '.join(template(firsts[name], '__key__'))}" for name, n in counts.items()]
    cycle = sum(counts.values())
    _, duration, _ = _common(s)
    conns = _load_connections(trace, counts)
    pipeline = max(1, round(s.pipeline_depth / cycle))
    config = [{"command_mix": lines, "keyspacelen": max(s.keys, 1),
               "key_distribution": _key_distribution(s), "value_sizes": _value_sizes(s),
               "pipelines": pipeline, "clients": conns, "duration": duration}]
    notes = [f"keys: {_key_distribution(s)} over {s.keys}",
             f"pipeline: kvload sends each cycle of the mix ({cycle} commands) as one write, "
             f"so the run's depth is {cycle * pipeline} commands a write (the trace's: "
             f"{s.pipeline_depth:.1f})"]
    rate = _rate(s)
    if rate is not None:
        notes.append(f"rate: the config runs closed loop; at the trace's rate add "
                     f"\"rate_sweep\": {{\"rates\": [{rate:.0f}]}}")
    return Workload(["kvperf", "run", "--config", "FILE"], notes + _dropped(s.mix, counts),
                    json.dumps(config, indent=2, ensure_ascii=False))


def memtier(trace: Trace, s: TraceStats) -> Workload:
    counts = seats(s.mix)
    firsts = _firsts(trace)
    zipf = _zipf(s)
    pattern = "Z" if zipf else "R"
    conns, duration, size = _common(s)
    argv = ["kvload", "memtier", "-t", "1", "-c", str(conns),
            "--pipeline", str(max(1, round(s.pipeline_depth))), "-d", str(size),
            "--key-minimum", "1", "--key-maximum", str(max(s.keys, 1)),
            "--test-time", str(duration), "--hide-histogram"]
    if zipf:
        argv += ["--key-zipf-exp", f"{s.zipf_s:.2f}"]
    rate = _rate(s)
    if rate is not None:
        argv += ["--rate-limiting", str(max(1, round(rate / conns)))]
    for name, n in counts.items():
        argv += ["--command", " ".join(template(firsts[name], "__key__")),
                 "--command-ratio", str(n), "--command-key-pattern", pattern]
    notes = [f"keys: {'Zipf exponent ' + format(s.zipf_s, '.2f') if zipf else 'uniform'} "
             f"over {s.keys}"]
    return Workload(argv, notes + _dropped(s.mix, counts))


def _dropped(mix: dict[str, int], counts: dict[str, int]) -> list[str]:
    gone = [k for k in mix if k not in counts]
    return [f"dropped (under half a seat of {MAX_SEATS}): {' '.join(gone)}"] if gone else []


EMITTERS: dict[str, Callable[[Trace, TraceStats], Workload]] = {
    "kvload": kvload_own, "memtier": memtier, "kvperf": kvperf_config}


def emit(tool: str, trace: Trace, s: TraceStats) -> Workload:
    """The workload for ``tool`` (one of TOOLS); the trace must hold commands. A command
    whose name is not a plain token (a space, a quote, ``;``…) cannot be written into a
    template without changing what it sends (and a name outside ASCII is no server's
    command): it is left out, and a note says so."""
    odd = [name for name in s.mix if not (_token(name) and name.isascii())]
    if len(odd) == len(s.mix):
        raise ValueError(f"no command of the trace has a name a workload can hold: {odd[:5]!r}")
    made = EMITTERS[tool](trace, replace(s, mix={k: v for k, v in s.mix.items() if k not in odd}))
    if not odd:
        return made
    return replace(made, notes=[*made.notes, f"left out (names a workload cannot hold): {odd!r}"])

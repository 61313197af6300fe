"""The seed's ``profiling_sets``: each set profiles the trials of its config object once more.

``[{"enabled": false}, {"enabled": true, "mode": "wall-time", "sampling_freq": 999,
"delays": {"measure": {"delay": 1, "duration": 2}}}]`` runs every trial twice: timed, and
profiled in wall-time mode from 1 s into the measure stage for 2 s. A set's ``delays`` are
keyed by phase; a core benchmark has one, ``measure``; module scenarios name theirs by
scenario type (``ingestion``, ``search`` …) and a scenario's own ``profiling`` object
overrides its set's values (``scenario_profile``). Every mistake is a ValueError naming the
key (config/loader.py and config/scenarios.py add where).
"""

from __future__ import annotations

from typing import Any

from kvperf.config.model import ProfileSettings
from kvperf.core.jsontypes import JsonObject
from kvperf.core.kinds import ProfileMode

SET_KEYS = ("enabled", "mode", "sampling_freq", "call_graph", "delays")
CALL_GRAPHS = ("fp", "dwarf")
MAX_FREQUENCY = 100_000


def _number(where: str, value: Any, minimum: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise ValueError(f"{where} must be a number ≥ {minimum:g}, got {value!r}")
    return float(value)


def _window(where: str, delays: Any, phases: tuple[str, ...]) -> tuple[float, float | None]:
    """(delay, duration) of the measure phase from a set's ``delays`` object."""
    if not isinstance(delays, dict):
        raise ValueError(f"{where} must be an object of phase → {{\"delay\", \"duration\"}}")
    unknown = sorted(set(delays) - set(phases))
    if unknown:
        raise ValueError(f"{where} names phase {unknown[0]!r}; phases here: "
                         f"{', '.join(phases)}")
    window = delays.get(phases[0], {})
    if not isinstance(window, dict) or set(window) - {"delay", "duration"}:
        raise ValueError(f"{where}.{phases[0]} must be an object with \"delay\" and/or "
                         "\"duration\" (seconds)")
    delay = _number(f"{where}.{phases[0]}.delay", window.get("delay", 0), 0)
    duration = window.get("duration")
    return delay, None if duration is None else _number(
        f"{where}.{phases[0]}.duration", duration, 0.001)


def profile_set(where: str, value: Any,
                phases: tuple[str, ...] = ("measure",)) -> ProfileSettings | None:
    """One set: None when ``enabled`` is false, else its settings."""
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be an object like {{\"enabled\": true, \"mode\": "
                         "\"cpu\"}")
    unknown = sorted(set(value) - set(SET_KEYS))
    if unknown:
        raise ValueError(f"{where} has unknown key {unknown[0]!r}; known: {', '.join(SET_KEYS)}")
    enabled = value.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ValueError(f"{where}.enabled must be true or false, got {enabled!r}")
    if not enabled:
        return None
    modes = [str(m) for m in ProfileMode]
    mode = value.get("mode", "cpu")
    if mode not in modes:
        raise ValueError(f"{where}.mode must be one of {', '.join(modes)}, got {mode!r}")
    call_graph = value.get("call_graph", "fp")
    if call_graph not in CALL_GRAPHS:
        raise ValueError(f"{where}.call_graph must be one of {', '.join(CALL_GRAPHS)}")
    frequency = value.get("sampling_freq", ProfileSettings.frequency)
    if isinstance(frequency, bool) or not isinstance(frequency, int) \
            or not 1 <= frequency <= MAX_FREQUENCY:
        raise ValueError(f"{where}.sampling_freq must be an integer 1-{MAX_FREQUENCY} (Hz), "
                         f"got {frequency!r}")
    delay, duration = _window(f"{where}.delays", value.get("delays", {}), phases)
    return ProfileSettings(frequency, call_graph, ProfileMode(mode), delay, duration)


def profiling_sets(key: str, value: Any) -> tuple[ProfileSettings | None, ...]:
    """A config's ``profiling_sets`` list (duplicates kept once, in order)."""
    if not isinstance(value, list) or not value:
        raise ValueError(f"{key!r} must be a non-empty list of objects like "
                         "{\"enabled\": true, \"mode\": \"cpu\"}")
    return tuple(dict.fromkeys(profile_set(f"{key}[{i}]", v) for i, v in enumerate(value)))


def scenario_profile(where: str, profiling_set: JsonObject, override: JsonObject | None,
                     phase: str, phases: tuple[str, ...]) -> ProfileSettings | None:
    """A module scenario's settings under one set: the scenario's ``profiling`` values win
    over the set's (``delays`` merged per phase, and within a phase per key: a scenario
    that gives only ``delay`` keeps its set's ``duration``); the window is that of the
    scenario's own ``phase`` (its type); ``phases`` are every name a ``delays`` may use."""
    merged = {**profiling_set, **(override or {})}
    own, base = (override or {}).get("delays"), profiling_set.get("delays")
    if isinstance(own, dict) and isinstance(base, dict):
        merged["delays"] = {**base, **{
            name: {**base[name], **window}
            if isinstance(window, dict) and isinstance(base.get(name), dict) else window
            for name, window in own.items()}}
    return profile_set(where, merged, (phase, *(p for p in phases if p != phase)))

"""A definition's pub/sub clients → one ``kvload pubsub`` run, or why not (pure).

The corpus' pub/sub definitions pair a memtier_benchmark publisher (``--command "PUBLISH
__key__ __data__"`` over ``--key-prefix`` + ``--key-minimum…--key-maximum``) with
``pubsub-sub-bench`` subscribers (``-clients``, ``-channel-minimum/-maximum``,
``-subscriber-prefix``, ``-subscribers-per-channel``, ``-min/-max-number-channels-per-
subscriber``, ``-mode subscribe|ssubscribe``, ``-test-time``; flag meanings from
redis-performance/pubsub-sub-bench's ``subscriber.go``). kvload runs both roles in one
process (``kvload pubsub``: one clock for publish-to-deliver latency, per-subscriber loss),
so the pair becomes one client. The mapping:

- subscribers: ``-clients`` (else channels × ``-subscribers-per-channel``), each on
  ``-max-number-channels-per-subscriber`` channels (min and max must be equal);
- channels: the subscribers' range; the publishers publish on it round-robin (memtier's
  ``--command-key-pattern`` R picks a random key: the same channels, evenly instead of at
  random). A publisher range wider than the subscribers' (memtier's default
  ``--key-minimum`` 0 adds ``channel-0``, which nobody subscribes to) is narrowed, with a
  note; one that misses subscribed channels is refused;
- publishers: memtier's ``-c`` × ``-t`` (memtier's defaults 50 and 4), ``--pipeline`` as
  the closed loop's depth, ``--rate-limiting`` × connections as ``--rps``, ``-d``;
- duration: memtier's ``--test-time`` (``--override-test-time`` replaces it).

``bcast-listener`` (CLIENT TRACKING BCAST invalidation listeners) is not pub/sub and is
refused by name, as is every option this mapping does not know.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from kvperf.definitions import memtier
from kvperf.definitions.model import ToolConfig

SUBSCRIBER = "pubsub-sub-bench"
BCAST = "bcast-listener"
PUBSUB = "kvload pubsub"
MEMTIER = "memtier_benchmark"
MIN_PAYLOAD = 32  # kvload pubsub's message header
DRAIN_S = 5  # kvload pubsub's default --drain

BCAST_REFUSAL = (f"client tool {BCAST!r} (CLIENT TRACKING BCAST invalidation listeners) is "
                 "not mapped: kvload pubsub subscribes to channels, not to key-invalidation "
                 "broadcasts")
# pubsub-sub-bench flags this mapping reads; any other is refused by name.
_SUB_FLAGS = frozenset({"clients", "channel-minimum", "channel-maximum", "subscriber-prefix",
                        "mode", "test-time", "subscribers-per-channel",
                        "min-number-channels-per-subscriber",
                        "max-number-channels-per-subscriber"})
# memtier options of a publisher this mapping reads or that do not change the load.
_PUB_OPTIONS = frozenset({"test-time", "key-prefix", "pipeline", "data-size", "key-minimum",
                          "key-maximum", "command", "command-key-pattern", "clients",
                          "threads", "hide-histogram", "rate-limiting", "print-percentiles"})


class PubsubError(ValueError):
    """A pub/sub definition kvload pubsub cannot run as written; the message says why."""


@dataclass(frozen=True)
class PubsubPlan:
    """``kvload pubsub`` options (without address and output) and what the mapping did."""

    argv: tuple[str, ...]
    test_time: int | None
    overridden: bool
    notes: tuple[str, ...]


def uses_pubsub(tools: tuple[str, ...]) -> bool:
    return SUBSCRIBER in tools


def subscriber_flags(arguments: str) -> dict[str, str]:
    """pubsub-sub-bench's ``-flag value`` words (Go's flag package: one or two dashes,
    ``-flag=value`` too); PubsubError naming an unknown or valueless flag."""
    try:
        words = shlex.split(arguments)
    except ValueError as exc:
        raise PubsubError(f"{SUBSCRIBER} arguments cannot be split into words: {exc}") from None
    flags: dict[str, str] = {}
    while words:
        word = words.pop(0)
        name, eq, inline = word.lstrip("-").partition("=")
        if not word.startswith("-") or name not in _SUB_FLAGS:
            raise PubsubError(f"{SUBSCRIBER} option {word!r} is not mapped onto kvload pubsub "
                              f"(mapped: {', '.join(sorted(_SUB_FLAGS))})")
        if not eq and not words:
            raise PubsubError(f"{SUBSCRIBER} option -{name} requires a value")
        flags[name] = inline if eq else words.pop(0)
    return flags


def _int(flags: dict[str, str], name: str, default: int, who: str = SUBSCRIBER) -> int:
    text = flags.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise PubsubError(f"{who} option -{name}: {text!r} is not a whole number") from None


@dataclass(frozen=True)
class _Subscribers:
    count: int
    per_subscriber: int
    first: int
    last: int
    prefix: str
    mode: str
    test_time: int | None


def _subscribers(flags: dict[str, str]) -> _Subscribers:
    first = _int(flags, "channel-minimum", 1)
    last = _int(flags, "channel-maximum", 100)
    if last < first:
        raise PubsubError(f"{SUBSCRIBER}: -channel-maximum {last} is below -channel-minimum "
                          f"{first}")
    low = _int(flags, "min-number-channels-per-subscriber", 1)
    high = _int(flags, "max-number-channels-per-subscriber", 1)
    if low != high:
        raise PubsubError(f"{SUBSCRIBER}: a random number of channels per subscriber "
                          f"(-min-number-channels-per-subscriber {low} ≠ "
                          f"-max-number-channels-per-subscriber {high}) is not mapped: kvload "
                          "pubsub gives every subscriber the same number")
    mode = flags.get("mode", "subscribe")
    if mode not in ("subscribe", "ssubscribe"):
        raise PubsubError(f"{SUBSCRIBER} -mode {mode!r} is not subscribe or ssubscribe")
    count = _int(flags, "clients", (last - first + 1) * _int(flags, "subscribers-per-channel", 1))
    test_time = _int(flags, "test-time", 0) or None
    return _Subscribers(count, high, first, last, flags.get("subscriber-prefix", "channel-"),
                        mode, test_time)


def _publisher_options(config: ToolConfig) -> tuple[memtier.Option, ...]:
    words = [w for k, v in config.parameters for w in (f"--{k}", str(v))]
    try:
        options = memtier.parse(words + shlex.split(config.arguments))
    except ValueError as exc:
        raise PubsubError(f"publisher: {exc}") from None
    for option in options:
        if option.name not in _PUB_OPTIONS:
            raise PubsubError(f"publisher option --{option.name} is not mapped onto kvload "
                              "pubsub")
    return options


def _publish_command(options: tuple[memtier.Option, ...], mode: str) -> None:
    commands = memtier.commands(options)
    want = "SPUBLISH" if mode == "ssubscribe" else "PUBLISH"
    if len(commands) != 1 or commands[0] != (want, "__KEY__", "__DATA__"):
        shown = "; ".join(" ".join(c) for c in commands) or "none"
        raise PubsubError(f"publisher: kvload pubsub runs one --command \"{want} __key__ "
                          f"__data__\" (the subscribers' -mode {mode}), not: {shown}")


def _channels(options: tuple[memtier.Option, ...], subs: _Subscribers) -> list[str]:
    """The publisher's channel range checked against the subscribers'; notes."""
    prefix = memtier.value(options, "key-prefix") or "memtier-"
    if prefix != subs.prefix:
        raise PubsubError(f"publisher --key-prefix {prefix!r} differs from {SUBSCRIBER}'s "
                          f"-subscriber-prefix {subs.prefix!r}: no message would reach them")
    low = int(memtier.value(options, "key-minimum") or 0)
    high = int(memtier.value(options, "key-maximum") or 10_000_000)
    if low > subs.first or high < subs.last:
        raise PubsubError(f"publisher channels {prefix}{low}…{high} do not cover the "
                          f"subscribed {prefix}{subs.first}…{subs.last}")
    if (low, high) == (subs.first, subs.last):
        return []
    return [f"publishers use the subscribed channels {prefix}{subs.first}…{subs.last} "
            f"(memtier's range {prefix}{low}…{high} adds {high - low - subs.last + subs.first}"
            " channel(s) no one subscribes to)"]


def _publishers(options: tuple[memtier.Option, ...]) -> tuple[list[str], int]:
    """kvload pubsub's publisher options, and the number of publishers."""
    connections = (int(memtier.value(options, "clients") or 50)
                   * int(memtier.value(options, "threads") or 4))
    argv = ["--publishers", str(connections)]
    size = int(memtier.value(options, "data-size") or 32)
    if size < MIN_PAYLOAD:
        raise PubsubError(f"publisher -d {size}: kvload pubsub messages are at least "
                          f"{MIN_PAYLOAD} bytes (publisher, sequence and send times)")
    argv += ["-d", str(size)]
    rate = memtier.value(options, "rate-limiting")
    if rate:
        argv += ["--rps", str(float(rate) * connections)]
    else:
        argv += ["-P", memtier.value(options, "pipeline") or "1"]
    return argv, connections


def plan_pubsub(configs: tuple[ToolConfig, ...], override: int | None) -> PubsubPlan:
    """The one ``kvload pubsub`` run of a memtier publisher and pubsub-sub-bench
    subscribers; PubsubError saying what cannot be mapped."""
    tools = [c.tool for c in configs]
    if sorted(tools) != sorted([MEMTIER, SUBSCRIBER]):
        raise PubsubError(f"{SUBSCRIBER} is mapped beside one {MEMTIER} publisher, not "
                          f"{', '.join(tools)}")
    subscriber = next(c for c in configs if c.tool == SUBSCRIBER)
    publisher = next(c for c in configs if c.tool == MEMTIER)
    if subscriber.parameters:
        raise PubsubError(f"{SUBSCRIBER} parameters are not mapped (arguments only)")
    subs = _subscribers(subscriber_flags(subscriber.arguments))
    options = _publisher_options(publisher)
    _publish_command(options, subs.mode)
    notes = _channels(options, subs)
    pub_argv, _ = _publishers(options)
    written = memtier.value(options, "test-time")
    test_time = override if override is not None and written else (
        int(written) if written else subs.test_time)
    if test_time is None:
        raise PubsubError("the publisher has no --test-time (a request-bound publisher is "
                          "not mapped)")
    argv = ["--subscribers", str(subs.count), "--channels", str(subs.last - subs.first + 1),
            "--channels-per-subscriber", str(min(subs.per_subscriber,
                                                 subs.last - subs.first + 1)),
            "--mode", subs.mode, "--channel-prefix", subs.prefix,
            "--channel-min", str(subs.first), *pub_argv, "--duration", str(test_time)]
    if memtier.value(options, "command-key-pattern") not in (None, "R", "S", "P"):
        notes.append("publisher --command-key-pattern mapped to round-robin channels")
    return PubsubPlan(tuple(argv), test_time, override is not None and bool(written),
                      tuple(notes))


def mix(argv: tuple[str, ...]) -> dict[str, float]:
    """The command mix a kvload pubsub run sends (INFO commandstats names)."""
    sharded = "ssubscribe" in argv
    return {"spublish" if sharded else "publish": 1.0}

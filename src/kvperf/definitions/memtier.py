"""memtier_benchmark argument strings as kvload's memtier front end reads them.

kvperf runs a definition's memtier_benchmark client with ``kvload memtier`` (crates/kvload,
src/memtier/). ``kvload memtier`` has no parse-only mode, so this module parses by kvload's
own option table (``memtier_options``: every memtier option, with kvload's reason for the
ones and the values it refuses, read once from ``kvload memtier --options-json``) and makes
the refusals kvload makes from the options alone. Parsing follows getopt_long as memtier and
kvload do: exact long name or a unique prefix, ``--name=value`` or ``--name value``, bundled
short options. Pure but for that one read of the table.

Options that say where the server is and where output goes (``--server``, ``--port``,
``--json-out-file`` …) are kvperf's to give, so a definition that sets them is refused.
``--override-test-time`` replaces the value of ``--test-time`` only, as the corpus runner's
``--override-memtier-test-time`` does; a request-bound client (``-n``) keeps its requests,
unless ``--cap-request-bound`` gives it kvload's ``--time-limit`` too (``client.capped``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from kvperf.definitions.memtier_options import Spec, table

# Where the server is and where results go: kvperf gives these, a definition may not.
KVPERF_OWNED = frozenset({
    "server", "host", "port", "unix-socket", "uri", "authenticate", "tls", "cert", "key",
    "cacert", "tls-skip-verify", "sni", "out-file", "json-out-file", "kvload-json", "io",
    "cluster-mode", "help", "version", "time-limit"})


class MemtierArgsError(ValueError):
    """Arguments kvload memtier would refuse; the message names the option."""


@dataclass(frozen=True)
class Option:
    name: str  # the long name
    value: str | None = None

    def argv(self) -> tuple[str, ...]:
        return (f"--{self.name}",) if self.value is None else (f"--{self.name}={self.value}",)


def _long(name: str) -> Spec:
    options = table()
    if name in options.by_long:
        return options.by_long[name]
    matches = [spec for spec in options.options if spec.name.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    raise MemtierArgsError(f"option '--{name}' is " + ("ambiguous" if matches
                                                         else "not a memtier option"))


def _long_option(word: str, rest: list[str]) -> Option:
    name, eq, inline = word[2:].partition("=")
    spec = _long(name)
    if not spec.takes_value:
        if eq:
            raise MemtierArgsError(f"option '--{spec.name}' doesn't allow an argument")
        return Option(spec.name)
    if eq:
        return Option(spec.name, inline)
    if not rest:
        raise MemtierArgsError(f"option '--{spec.name}' requires an argument")
    return Option(spec.name, rest.pop(0))


def _short_options(word: str, rest: list[str]) -> list[Option]:
    out = []
    letters = word[1:]
    by_short = table().by_short
    for index, letter in enumerate(letters):
        if letter not in by_short:
            raise MemtierArgsError(f"option '-{letter}' is not a memtier option")
        spec = by_short[letter]
        if not spec.takes_value:
            out.append(Option(spec.name))
            continue
        value = letters[index + 1:]
        if not value:
            if not rest:
                raise MemtierArgsError(f"option '-{letter}' requires an argument")
            value = rest.pop(0)
        out.append(Option(spec.name, value))
        break
    return out


def parse(arguments: str | list[str]) -> tuple[Option, ...]:
    """A definition's ``arguments`` (a shell-quoted string, or argv) as options."""
    try:
        rest = shlex.split(arguments) if isinstance(arguments, str) else list(arguments)
    except ValueError as exc:
        raise MemtierArgsError(f"arguments cannot be split into words: {exc}") from None
    options: list[Option] = []
    while rest:
        word = rest.pop(0)
        if word.startswith("--") and len(word) > 2:
            options.append(_long_option(word, rest))
        elif word.startswith("-") and len(word) > 1:
            options.extend(_short_options(word, rest))
        else:
            raise MemtierArgsError(f"stray argument {word[:60]!r}: memtier takes options only "
                                   "(its quoting is probably broken)")
    return tuple(options)


def _key_patterns(options: tuple[Option, ...]) -> set[str]:
    commands = [o for o in options if o.name == "command"]
    if commands:
        per_command = ["R"] * len(commands)
        index = -1
        for option in options:
            index += option.name == "command"
            if option.name == "command-key-pattern" and option.value:
                per_command[max(index, 0)] = option.value
        return set(per_command)
    given = [o.value or "" for o in options if o.name == "key-pattern"]
    return set(given[-1].split(":")) if given else {"R"}


def _order_refusal(options: tuple[Option, ...]) -> str | None:
    seen_command = False
    for option in options:
        seen_command |= option.name == "command"
        if option.name in ("command-ratio", "command-key-pattern") and not seen_command:
            return f"--{option.name} comes before any --command"
    names = {option.name for option in options}
    if "test-time" in names and "requests" in names:
        return "--test-time and --requests are mutually exclusive"
    if "command" in names and names & {"ratio", "key-pattern"}:
        clash = sorted(names & {"ratio", "key-pattern"})[0]
        return (f"--{clash} with --command is an error in memtier_benchmark too (use "
                f"--command-{clash})")
    return None


# where each cursor-walking command takes its cursor (kvload memtier follows these)
_CURSOR_AT = {"SCAN": 1, "HSCAN": 2, "SSCAN": 2, "ZSCAN": 2}


def _scan_refusal(options: tuple[Option, ...], cluster: bool) -> str | None:
    """kvload's (and memtier's) rules for --scan-incremental-iteration: one SCAN command
    with a cursor (or HSCAN, SSCAN, ZSCAN with a key and a cursor, as memtier#539 follows
    them), --pipeline 1, no cluster."""
    if not any(o.name == "scan-incremental-iteration" for o in options):
        return None
    commands = [(o.value or "").split() for o in options if o.name == "command"]
    if len(commands) != 1 or not commands[0]:
        return "--scan-incremental-iteration needs exactly one --command (a SCAN)"
    name = commands[0][0].upper()
    if name not in _CURSOR_AT:
        return (f"--scan-incremental-iteration with {name}: kvload memtier follows SCAN, "
                "HSCAN, SSCAN and ZSCAN cursors only")
    if (len(commands[0]) <= _CURSOR_AT[name] or (value(options, "pipeline") or "1") != "1"
            or cluster):
        return (f"--scan-incremental-iteration needs '{name} {'<key> ' * (name != 'SCAN')}"
                "<cursor>', --pipeline 1, no cluster")
    return None


_RAMP = ("clients-start", "clients-step", "step-duration")


def _staircase_refusal(options: tuple[Option, ...]) -> str | None:
    """memtier's (and kvload's) rules for the staircase ramp: all three flags, a test
    time rather than requests, and fewer clients at the start than -c (default 50)."""
    names = {o.name for o in options}
    if not names & set(_RAMP):
        return None
    if not set(_RAMP) <= names:
        return "--clients-start, --clients-step, and --step-duration must all be specified together"
    if "requests" in names or "test-time" not in names:
        return "a staircase (--clients-start) needs --test-time, not --requests"
    start, clients = value(options, "clients-start") or "0", value(options, "clients") or "50"
    if start.isdigit() and clients.isdigit() and int(start) >= int(clients):
        return f"--clients-start ({start}) must be less than --clients ({clients})"
    return None


def refusal(options: tuple[Option, ...], cluster: bool) -> str | None:
    """Why kvload memtier (driven by kvperf) cannot run these options, or None."""
    by_long = table().by_long
    for option in options:
        spec = by_long[option.name]
        if spec.refused:
            return f"option --{option.name} is not supported by kvload memtier ({spec.refused})"
        if option.name in KVPERF_OWNED:
            return f"option --{option.name} is kvperf's to set (server, TLS, output)"
        refused = spec.refused_value(option.value or "")
        if refused:
            return (f"option --{option.name}={option.value} is not supported by kvload "
                    f"memtier ({refused})")
    return (_ratio_refusal(options) or _order_refusal(options)
            or _scan_refusal(options, cluster) or _staircase_refusal(options))


def _ratio_refusal(options: tuple[Option, ...]) -> str | None:
    """--ratio N:M and --command-ratio N must be numbers, and a --command must hold a word
    (memtier refuses others too; the command mix is weighed by them: tests/unit/fuzz found
    '--ratio ;', "--command ' '" and a --command of one quote reaching it)."""
    for option in options:
        if option.name == "command" and not _words(option.value or ""):
            return f"option --command={option.value} is not a command (no words in it)"
        if option.name not in ("ratio", "command-ratio"):
            continue
        parts = (option.value or "").split(":") if option.name == "ratio" \
            else [option.value or ""]
        if len(parts) != (2 if option.name == "ratio" else 1) or not all(
                _count(p) for p in parts):
            return f"option --{option.name}={option.value} is not " + (
                "N:M (two counts)" if option.name == "ratio" else "a count")
    return None


def _words(text: str) -> list[str]:
    """A --command's words as memtier splits them; none when its quoting is broken."""
    try:
        return shlex.split(text)
    except ValueError:
        return []


def _count(text: str) -> bool:
    try:
        return float(text) >= 0
    except ValueError:
        return False


def value(options: tuple[Option, ...], name: str) -> str | None:
    """The last value given for ``name`` (memtier's rule: a later option wins)."""
    found = [o.value for o in options if o.name == name]
    return found[-1] if found else None


def with_test_time(options: tuple[Option, ...], seconds: int) -> tuple[Option, ...]:
    """``--test-time`` replaced by ``seconds`` where it is given; other options unchanged."""
    return tuple(Option("test-time", str(seconds)) if o.name == "test-time" else o
                 for o in options)


def argv(options: tuple[Option, ...]) -> tuple[str, ...]:
    return tuple(word for option in options for word in option.argv())


def commands(options: tuple[Option, ...]) -> tuple[tuple[str, ...], ...]:
    """Each ``--command``'s words, upper case (``("DEBUG", "RELOAD", "NOSAVE")``)."""
    return tuple(tuple(word.upper() for word in shlex.split(o.value or ""))
                 for o in options if o.name == "command" and o.value)


def command_mix(options: tuple[Option, ...]) -> dict[str, float]:
    """The share of each command a memtier run sends, as memtier weighs them: each
    ``--command`` by its ``--command-ratio`` (the ratio follows its command; 1 by default),
    else SET and GET by ``--ratio`` (memtier's default 1:10). Commands by their first word,
    lower case, as INFO commandstats names them."""
    weights = _rotation(options)
    total = sum(weights.values())
    return {name: w / total for name, w in weights.items() if w > 0} if total else {}


def rotation_length(options: tuple[Option, ...]) -> int:
    """Requests of one rotation: memtier sends each command its ratio of times in a row on
    every connection, then the next, so a connection sends its last command only after
    this many requests less that command's ratio."""
    return int(sum(_rotation(options).values()))


def connections(options: tuple[Option, ...]) -> int:
    """The run's connections: ``-c`` × ``-t`` (memtier's defaults 50 and 4)."""
    return int(value(options, "clients") or 50) * int(value(options, "threads") or 4)


def _rotation(options: tuple[Option, ...]) -> dict[str, float]:
    """Each command's requests in one rotation (``command_mix``'s weights)."""
    weights: dict[str, float] = {}
    commands = [o for o in options if o.name in ("command", "command-ratio")]
    last: str | None = None
    pending: dict[str, float] = {}
    for option in commands:
        if option.name == "command":
            last = shlex.split(option.value or "")[0].lower() if option.value else None
            if last:
                pending = {last: 1.0}
                weights[last] = weights.get(last, 0.0) + 1.0
        elif last and pending:
            weights[last] += float(option.value or 1) - pending.pop(last)
    if not weights:
        set_part, _, get_part = (value(options, "ratio") or "1:10").partition(":")
        weights = {"set": float(set_part or 0), "get": float(get_part or 0)}
    return weights

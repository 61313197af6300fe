"""A harness's result (``kvperf-client-result`` v1) read and judged (pure): JSON checked
against the schema, the commands it reports against the spec's, its histograms merged, its
allocations normalized (bytes per operation from its untimed allocation pass, or a count
in its own unit before that pass existed), and the accounting check — INFO commandstats
must hold warmup + measured ops (+ errors) + the allocation pass's calls per command within
ACCOUNTING_TOLERANCE, or the trial fails naming the command and the gap."""

from __future__ import annotations

import json
from dataclasses import dataclass

from hdrh.histogram import HdrHistogram

from kvperf.clients import schema
from kvperf.core.jsontypes import JsonObject
from kvperf.results.histogram import decode, merge, summary_ms
from kvperf.server.stats import CommandStat

ACCOUNTING_TOLERANCE = 0.01
# Every harness's histograms (the contract): whole microseconds from 1 to 60 s, 3
# significant figures — the same precision in every language, so percentiles compare.
HISTOGRAM_PRECISION = {"lowest": 1, "highest": 60_000_000, "significant_figures": 3}
TRANSACTION_COMMANDS = ("MULTI", "EXEC")


class ResultError(ValueError):
    """The harness's output is not a valid result (the trial fails with this message)."""


@dataclass(frozen=True)
class HarnessResult:
    """What a harness reported, checked against the schema and its spec."""

    document: JsonObject

    @property
    def duration_s(self) -> float:
        return float(self.document["duration_s"])

    @property
    def commands(self) -> dict[str, JsonObject]:
        found: dict[str, JsonObject] = self.document["commands"]
        return found

    @property
    def ops(self) -> int:
        return sum(int(c["ops"]) for c in self.commands.values())

    @property
    def errors(self) -> int:
        return sum(int(c["errors"]) for c in self.commands.values())

    @property
    def client(self) -> dict[str, str]:
        found: dict[str, str] = self.document["client"]
        return found

    @property
    def warmup(self) -> dict[str, int]:
        found: dict[str, int] = self.document["warmup"]
        return found

    @property
    def calls(self) -> int:
        """Measured calls: ops with a reply and errors (what the window's CPU was spent on)."""
        return self.ops + self.errors

    @property
    def cpu(self) -> JsonObject | None:
        """The harness's own CPU in its measured window (``user_s``, ``system_s``,
        ``source``), None when it did not report one (the field is optional in v1)."""
        found: JsonObject | None = self.document.get("cpu")
        return found

    @property
    def allocation_pass(self) -> dict[str, int]:
        """What the untimed allocation pass sent per command (MULTI/EXEC too; empty when
        the harness ran none)."""
        found = self.document.get("allocations")
        if isinstance(found, dict) and isinstance(found.get("calls"), dict):
            return {str(k): int(v) for k, v in found["calls"].items()}
        return {}

    def allocations(self) -> JsonObject | None:
        """The row's allocations: ``per_op`` in ``unit`` (bytes from the allocation pass),
        ``method`` and ``exact`` (False: the runtime only approximates; a count of the
        older kind, in its own unit, is never exact bytes), ``ops`` of the pass."""
        found = self.document.get("allocations")
        if not isinstance(found, dict):
            return None
        if "bytes_per_op" in found:
            return {"per_op": found["bytes_per_op"], "unit": "bytes",
                    "method": found["method"], "exact": found["exact"], "ops": found["ops"]}
        return {"per_op": found["per_op"], "unit": found["unit"], "method": found["source"],
                "exact": False}

    @property
    def open_loop(self) -> bool:
        """The harness ran the spec's rate: its latency is from intended send times."""
        return bool(self.document.get("rate"))

    def histogram(self) -> str:
        """Every command's histogram merged, V2-encoded (base64)."""
        encoded = [str(c["histogram"]) for c in self.commands.values()]
        encoded_merged: bytes = merge(encoded).encode()
        return encoded_merged.decode()

    def latency_ms(self) -> dict[str, float]:
        """min, mean, p50 … p99.9, max of the merged histogram in ms (values in µs)."""
        return summary_ms(decode(self.histogram()))

    def per_command_ms(self) -> dict[str, dict[str, float]]:
        return {name: summary_ms(decode(str(c["histogram"])))
                for name, c in self.commands.items()}

    def expected_calls(self) -> dict[str, int]:
        """Per command (lower case, as commandstats names it): the calls the server must
        have counted — warmup + measured ops + errors + the allocation pass's calls,
        MULTI/EXEC from transactions."""
        out: dict[str, int] = {}
        for name, count in [*self.warmup.items(), *self.allocation_pass.items()]:
            out[name.lower()] = out.get(name.lower(), 0) + int(count)
        for name, command in self.commands.items():
            out[name.lower()] = (out.get(name.lower(), 0) + int(command["ops"])
                                 + int(command["errors"]))
        transactions = int(self.document["transactions"])
        for name in TRANSACTION_COMMANDS:
            if transactions or name.lower() in out:
                out[name.lower()] = out.get(name.lower(), 0) + transactions
        return out


def parse(stdout: str, spec: JsonObject) -> HarnessResult:
    """The harness's stdout → HarnessResult; ResultError saying what is wrong (not JSON,
    not the schema, not the spec's commands, a histogram that does not decode)."""
    text = stdout.strip()
    if not text:
        raise ResultError("the harness printed nothing on stdout (expected one JSON result)")
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ResultError(f"the harness's stdout is not one JSON document ({exc}); it "
                          f"begins {text[:80]!r}") from None
    found = schema.problems(document, schema.RESULT)
    if found:
        raise ResultError("the harness's result does not match the kvperf-client-result "
                          "schema: " + "; ".join(found))
    result = HarnessResult(document)
    wanted = {str(c["command"]) for c in spec["commands"]}
    if set(result.commands) != wanted:
        raise ResultError(f"the harness reported commands {sorted(result.commands)}, the "
                          f"spec asked for {sorted(wanted)}")
    for name, command in result.commands.items():
        try:
            histogram = decode(str(command["histogram"]))
        except ValueError as exc:
            raise ResultError(f"{name}'s histogram: {exc}") from None
        _check_precision(name, histogram)
    if result.ops == 0:
        raise ResultError("the harness reported no operation with a reply")
    _check_pass(result, wanted)
    if spec.get("rate") and result.document.get("rate") != spec["rate"]:
        raise ResultError(f"the spec asked for an open loop at {spec['rate']}, the harness "
                          f"reported {result.document.get('rate')} (a harness that ignores "
                          "the rate runs closed loop: its latency would be uncorrected)")
    return result


def precision(histogram: HdrHistogram) -> dict[str, int]:
    """A histogram's lowest and highest trackable values and significant figures."""
    return {"lowest": int(histogram.lowest_trackable_value),
            "highest": int(histogram.highest_trackable_value),
            "significant_figures": int(histogram.significant_figures)}


def _check_precision(name: str, histogram: HdrHistogram) -> None:
    found = precision(histogram)
    if found != HISTOGRAM_PRECISION:
        raise ResultError(f"{name}'s histogram has precision {found}, the contract's is "
                          f"{HISTOGRAM_PRECISION} (µs from 1 to 60 s, 3 significant figures)")


def _check_pass(result: HarnessResult, wanted: set[str]) -> None:
    """The allocation pass's ``ops`` are the calls it sent of the spec's commands (the
    bytes are divided by them); ResultError when they differ."""
    found = result.document.get("allocations")
    if not isinstance(found, dict) or "ops" not in found:
        return
    sent = sum(n for name, n in result.allocation_pass.items() if name in wanted)
    if sent != int(found["ops"]):
        raise ResultError(f"allocations: the pass reports {found['ops']} ops but sent "
                          f"{sent} calls of {sorted(wanted)}")


def accounting(result: HarnessResult, stats: dict[str, CommandStat]) -> tuple[
        dict[str, dict[str, int]], str | None]:
    """Per command the harness's count and the server's (calls + rejected calls), and the
    first gap beyond ACCOUNTING_TOLERANCE in words (None: every command accounts)."""
    expected = result.expected_calls()
    table: dict[str, dict[str, int]] = {}
    problem = None
    for name, reported in sorted(expected.items()):
        stat = stats.get(name, CommandStat())
        server = int(stat.get("calls", 0)) + int(stat.get("rejected_calls", 0))
        table[name] = {"reported": reported, "server": server}
        gap = server - reported
        if problem is None and abs(gap) > ACCOUNTING_TOLERANCE * max(reported, 1):
            share = f"{gap / reported:+.1%}" if reported else "all of them"
            problem = (f"accounting: the server executed {server} {name.upper()} calls, the "
                       f"harness reported {reported} (warmup + measured + errors): "
                       f"{gap:+d} ({share}), beyond {ACCOUNTING_TOLERANCE:.0%}")
    return table, problem

"""What a client trial put on the wire, from the server's side (pure): calls per read —
INFO stats ``total_commands_processed`` over ``total_reads_processed`` across the harness's
run — and the judgement of its pipelining (docs/CLIENTS.md "Batching on the wire").

A batch of N commands written at once reaches the server in one read (or in
ceil(bytes / 16 KiB) reads: the server reads at most PROTO_IOBUF_LEN per call), so the
server sees about N calls per read: ``pipelined`` from min(2, expected / 2). A batch sent
as N round trips (each command written once the reply before it is in) can never give a
read more than one command: at most 1 call per read, whatever the connections. Between the
two lie batches written command by command without waiting for replies (redis-rb's pure
Ruby driver, Lettuce with auto-flush on): the server finds some writes waiting and reads
them together, 1.3–4 calls per read as the server's and the client's speeds go
(``written per command``). So a trial fails below NEAR_ONE — 1.25 calls per read: round
trips, a pipeline faked —, which no round trip reaches and every per-command writer
measured here stayed above (docs/CLIENTS.md gives the figures); a workload whose true
pipeline would give fewer than 3 calls per read (P=2, values of many KiB) is not judged.
Calls per read well above one batch (1.5 × its calls; at P=1 above 1.5) is ``implicit``
batching: the library (or the kernel, for writes waiting on one connection) put several
calls or batches into one read — auto-pipelining, a multiplexed connection."""

from __future__ import annotations

import math

from kvperf.results.records import WireRecord

READ_BUFFER = 16 * 1024  # PROTO_IOBUF_LEN: the most a server reads per read(2) call
JUDGED_FROM = 3.0  # a true pipeline's expected calls per read below this: not judged
NEAR_ONE = 1.25  # below: the batch's commands did not travel together (the trial fails)
PIPELINED = 2.0  # from min(PIPELINED, expected / 2): the batch reached the server at once
IMPLICIT = 1.5  # calls per read above IMPLICIT × a batch's calls: several per read
KEY_BYTES = 32  # a key (prefix and index) and its RESP framing, at most
FRAMING = 32  # a command's RESP framing and name


def command_bytes(commands: list[str], value_size: int) -> int:
    """The most bytes one of the workload's commands takes on the wire (an estimate from
    above: the value, a key, framing)."""
    value = value_size + 16 if "SET" in commands else 0
    return FRAMING + KEY_BYTES + value


def expected_calls_per_read(pipeline: int, transaction: bool, each: int) -> float:
    """Calls per read of a batch written at once: its calls over the reads its bytes need."""
    calls = pipeline + (2 if transaction else 0)  # MULTI and EXEC around a transaction
    reads = max(1, math.ceil(calls * each / READ_BUFFER))
    return calls / reads


def judge(calls: int, reads: int, pipeline: int, transaction: bool,
          commands: list[str], value_size: int) -> tuple[WireRecord, str | None]:
    """The wire record and, for a batch whose commands the server read one by one, the
    reason the trial fails (``calls per read`` named with its value and the bar)."""
    per_read = calls / reads if reads else None
    expected = expected_calls_per_read(pipeline, transaction,
                                       command_bytes(commands, value_size))
    batched = pipeline > 1 or transaction
    per_batch = pipeline + (2 if transaction else 0)
    judged = batched and expected >= JUDGED_FROM
    record = WireRecord(calls=calls, reads=reads,
                        calls_per_read=round(per_read, 3) if per_read is not None else None,
                        pipeline=pipeline, expected=round(expected, 2),
                        bar=NEAR_ONE if judged else None)
    problem = None
    if per_read is None:
        record["batching"] = "not judged"
    elif per_read > IMPLICIT * per_batch:
        record["batching"] = "implicit"
    elif not batched:
        record["batching"] = "one call per read"
    elif not judged:
        record["batching"] = "not judged"
    elif per_read < NEAR_ONE:
        record["batching"] = "not pipelined"
        problem = (f"the server saw {per_read:.2f} calls per read ({calls} calls in {reads} "
                   f"reads), below {NEAR_ONE:g} for P={pipeline}: its batches reached the "
                   "server one command at a time (a round trip per command?), not as "
                   "pipelines")
    elif per_read < min(PIPELINED, expected / 2):
        record["batching"] = "written per command"
    else:
        record["batching"] = "pipelined"
    return record, problem

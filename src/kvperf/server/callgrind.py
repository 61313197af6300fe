"""Running server nodes under valgrind's callgrind, counting only the measure stage.

Each node starts as ``valgrind --tool=callgrind --instr-atstart=no … valkey-server …``: with
instrumentation off, startup, seeding and warmup cost nothing in the profile. Around the
measure stage ``callgrind_control`` (through vgdb) addresses each node *by pid*: instrumentation
on, counters zeroed; afterwards the counters are dumped to a file and instrumentation is
switched off again. The dump is renamed ``callgrind.out.measure.node<i>`` beside the trial's
logs so a developer can open it in kcachegrind/qcachegrind; the file valgrind writes itself at
shutdown (``callgrind.shutdown.<pid>``) covers only the time after the measure stage.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable
from pathlib import Path

from kvperf.core.errors import ServerError
from kvperf.core.proc import probe
from kvperf.server.process import wait_until

VALGRIND = "valgrind"
CONTROL = "callgrind_control"
READY_TIMEOUT = 180.0  # seconds for a node to answer PING under valgrind (~50x slower)
STOP_GRACE = 15.0  # seconds per stop step: valgrind writes its final profile on exit
CONTROL_TIMEOUT = 60.0
SHUTDOWN_PREFIX = "callgrind.shutdown"

NodeWrapper = Callable[[int, list[str]], list[str]]


def missing_tools() -> str | None:
    """Which of valgrind / callgrind_control is not on PATH (None when both are)."""
    missing = [tool for tool in (VALGRIND, CONTROL) if shutil.which(tool) is None]
    if not missing:
        return None
    return (f"{' and '.join(missing)} not found on PATH: instruction mode runs the server "
            "under valgrind's callgrind (Debian package 'valgrind')")


def wrapper_argv(out_dir: Path) -> list[str]:
    """The valgrind prefix of a node's argv (instrumentation off until the measure stage)."""
    return [VALGRIND, "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={out_dir.absolute() / SHUTDOWN_PREFIX}.%p"]


@functools.cache
def seed_fixing_works() -> bool:
    """Whether a private mount namespace can be made here (root, or CAP_SYS_ADMIN)."""
    code, _ = probe(["unshare", "--mount", "--propagation", "private", "--", "true"])
    return code == 0


def _seed_bytes(index: int) -> bytes:
    """Fixed 'random' bytes per node: the same every run, different between cluster nodes."""
    return f"kvperf fixed seed for node {index:04d} ".encode().ljust(256, b".")


def with_deterministic_rehashing(argv: list[str]) -> list[str]:
    """Add ``--activerehashing no`` unless the config sets it.

    With active rehashing, serverCron finishes a growing hash table's rehash in 1 ms slices
    when it finds time, so how much of that work lands inside commands depends on wall-clock
    timing: ±0.3% of setCommand's inclusive cost between runs of one binary, measured here.
    Without it every rehash step is done by the commands themselves, the same in every run.
    """
    if any(arg.lower() == "--activerehashing" for arg in argv):
        return argv
    return [*argv, "--activerehashing", "no"]


def node_wrapper(out_dir: Path, fix_seed: bool) -> NodeWrapper:
    """Wraps a node's argv: valgrind, and (``fix_seed``) a fixed /dev/urandom.

    Valkey seeds its hash functions from /dev/urandom at startup, so each process lays out
    its hash tables differently: a command-table lookup or a key insert then costs a few
    dozen instructions more or less per request (±0.6% of a SET measured here) from one run
    to the next. Reading a fixed file instead (bind-mounted over /dev/urandom in a private
    mount namespace, so nothing else on the machine sees it) makes every run of a binary
    execute the same hash-table work.
    """
    def wrap(index: int, argv: list[str]) -> list[str]:
        valgrind = [*wrapper_argv(out_dir), *with_deterministic_rehashing(argv)]
        if not fix_seed:
            return valgrind
        seed = out_dir.absolute() / f"urandom.node{index}"  # mount resolves it from the node dir
        seed.write_bytes(_seed_bytes(index))
        return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                'mount --bind "$0" /dev/urandom && exec "$@"', str(seed), *valgrind]

    return wrap


def _control(pid: int, *args: str) -> None:
    code, output = probe([CONTROL, *args, str(pid)], timeout=CONTROL_TIMEOUT)
    if code != 0 or "OK" not in output:
        raise ServerError(f"{CONTROL} {' '.join(args)} {pid} failed (exit {code}): "
                          f"{output.strip()[-300:]}")


def start_counting(pids: list[int]) -> None:
    """Instrumentation on, then counters zeroed, on every node (what ran before is dropped)."""
    for pid in pids:
        _control(pid, "--instr=on")
        _control(pid, "--zero")


def _dump_file(out_dir: Path, pid: int) -> Path | None:
    found = sorted(out_dir.glob(f"{SHUTDOWN_PREFIX}.{pid}.*"),
                   key=lambda p: int(p.suffix[1:]) if p.suffix[1:].isdigit() else 0)
    return found[-1] if found else None


def _wait_dump(out_dir: Path, pid: int) -> Path:
    found: list[Path] = []

    def present() -> bool:
        path = _dump_file(out_dir, pid)
        if path:
            found.append(path)
        return path is not None

    if not wait_until(present, 10.0):
        raise ServerError(f"callgrind wrote no dump for pid {pid} in {out_dir}")
    return found[-1]


def stop_counting(pids: list[int], out_dir: Path) -> list[Path]:
    """Dump each node's counters, switch instrumentation off; the dump files, node order."""
    files = []
    for index, pid in enumerate(pids):
        _control(pid, "--dump=measure")
        _control(pid, "--instr=off")
        target = out_dir / f"callgrind.out.measure.node{index}"
        _wait_dump(out_dir, pid).replace(target)
        files.append(target)
    return files

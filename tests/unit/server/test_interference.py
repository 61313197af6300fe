"""Interference sampling's pure part: /proc text parsed, own and foreign CPU attributed to
cores (the load tool's last ticks after the final sample included), the top processes."""

from __future__ import annotations

from pathlib import Path

from kvperf.server.interference import (
    CoreTicks,
    ProcStat,
    Scope,
    Snapshot,
    Tally,
    exact_own,
    own_pids,
    parse_nonvoluntary,
    parse_pid_stat,
    parse_proc_stat,
    summarize,
)
from kvperf.server.interference_probe import read_command

PROC_STAT = """cpu  1390094 6954 416987 419728 115374 0 126886 4321 0 0
cpu0 727733 3563 198730 232759 6609 0 66494 2150 0 0
cpu1 662361 3391 218256 186969 108765 0 60392 2171 0 0
intr 29365492 0 0 0
ctxt 123
"""


def stat_line(pid: int, comm: str, ppid: int, utime: int, stime: int, cpu: int,
              cutime: int = 0, cstime: int = 0) -> str:
    """A /proc/PID/stat line as the kernel writes it (52 fields; processor is field 39)."""
    fields = ["S", ppid, pid, pid, 0, -1, 4194304, 100, 0, 0, 0, utime, stime, cutime,
              cstime, 20, 0, 1, 0, 5000, 1000000, 200, 2**63, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
              0, 0, 17, cpu, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    return f"{pid} ({comm}) " + " ".join(map(str, fields)) + "\n"


def test_per_cpu_lines_give_busy_as_user_nice_system_and_steal() -> None:
    cores = parse_proc_stat(PROC_STAT)
    assert cores == {0: CoreTicks(727733 + 3563 + 198730, 2150),
                     1: CoreTicks(662361 + 3391 + 218256, 2171)}


def test_a_stat_line_with_spaces_and_parentheses_in_its_comm() -> None:
    stat = parse_pid_stat(stat_line(1234, "python3 (hog)) x", 1, 70, 30, 1, 5, 6))
    assert stat == ProcStat(1234, "python3 (hog)) x", 1, 100, 11, 1)
    assert parse_pid_stat("garbage") is None
    assert parse_pid_stat("12 (short) S 1 2 3") is None


def test_involuntary_switches_from_a_task_status() -> None:
    text = "Name:\tvalkey-server\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n"
    assert parse_nonvoluntary(text) == 7
    assert parse_nonvoluntary("Name:\tx\n") is None


def _procs(*stats: ProcStat) -> dict[int, ProcStat]:
    return {s.pid: s for s in stats}


def test_own_processes_are_the_roots_and_their_descendants() -> None:
    procs = _procs(ProcStat(100, "kvperf", 1, 0, 0, 0), ProcStat(200, "valkey", 100, 0, 0, 0),
                   ProcStat(300, "kvload", 100, 0, 0, 1), ProcStat(301, "sh", 300, 0, 0, 1),
                   ProcStat(900, "hog", 1, 0, 0, 0))
    assert own_pids(procs, [100]) == {100, 200, 300, 301}
    assert own_pids(procs, [555]) == set()


KVPERF, SERVER, TOOL, HOG = 100, 200, 300, 900
SCOPE = Scope((0, 1), True, KVPERF, (SERVER,))


def _snap(at: float, busy: tuple[int, int], procs: list[ProcStat],
          tasks: list[ProcStat], steal: tuple[int, int] = (0, 0)) -> Snapshot:
    return Snapshot(at, {0: CoreTicks(busy[0], steal[0]), 1: CoreTicks(busy[1], steal[1])},
                    _procs(*procs), _procs(*tasks),
                    {t.pid: ("server" if t.pid == SERVER else "client", t.ticks // 10)
                     for t in tasks if t.pid != KVPERF})


def _stage() -> Tally:
    """One second at 100 ticks/s: the server (cpu0) and a hog (cpu0) share cpu0, the load
    tool runs on cpu1 from 0.1 s until 0.9 s, after the last sample but one: its last 30
    ticks are seen only in kvperf's cutime, once it was reaped."""
    kv0, kv1 = ProcStat(KVPERF, "kvperf", 1, 10, 0, 1), ProcStat(KVPERF, "kvperf", 1, 11, 0, 1)
    hog = [ProcStat(HOG, "python3", 1, t, 0, 0) for t in (1000, 1030, 1050)]
    srv = [ProcStat(SERVER, "valkey-server", KVPERF, t, 0, 0) for t in (500, 530, 550)]
    tool = ProcStat(TOOL, "kvload", KVPERF, 50, 0, 1)
    first = _snap(0.0, (0, 0), [kv0, hog[0], srv[0]], [kv0, srv[0]])
    middle = _snap(0.5, (60, 51), [kv0, hog[1], srv[1], tool], [kv0, srv[1], tool])
    reaped = ProcStat(KVPERF, "kvperf", 1, 11, 80, 1)  # the tool's 80 ticks, once reaped
    last = _snap(1.0, (100, 81), [reaped, hog[2], srv[2]], [kv1, srv[2]])
    tally = Tally(SCOPE, first)
    assert tally.add(middle) == [HOG]  # first seen on a watched core: its command is read
    assert tally.add(last) == []
    return tally


def test_the_own_total_counts_a_reaped_tool_whole() -> None:
    tally = _stage()
    assert exact_own(tally.first, tally.last, SCOPE) == 50 + 1 + 80  # server, kvperf, tool


def test_foreign_cpu_is_busy_minus_own_per_core_and_names_the_process() -> None:
    sampled = summarize(_stage(), 100.0, {HOG: "python3 hog.py"})
    cpu0, cpu1 = sampled.cores
    assert (cpu0.cpu, cpu0.busy, cpu0.own, cpu0.foreign) == (0, 1.0, 0.5, 0.5)
    # cpu1: the tool's 80 ticks (50 sampled, 30 after its last sample) and kvperf's 1
    assert (cpu1.busy, cpu1.own, cpu1.foreign) == (0.81, 0.81, 0.0)
    assert [(c.pid, c.command, c.seconds) for c in sampled.culprits] == [
        (HOG, "python3 hog.py", 0.5)]
    assert sampled.samples == 3 and sampled.wall == 1.0 and sampled.pinned
    assert sampled.switches == {"client": 5, "server": 5}


def test_foreign_is_at_least_what_foreign_processes_were_seen_to_take() -> None:
    """Busy (user + nice + system ticks) leaves out softirq time that the server's own
    figures include: busy − own reads 10 ticks beside a hog seen taking 40 there."""
    srv = [ProcStat(SERVER, "valkey-server", KVPERF, t, 0, 0) for t in (0, 60)]
    hog = [ProcStat(HOG, "python3", 1, t, 0, 0) for t in (0, 40)]
    kv = ProcStat(KVPERF, "kvperf", 1, 0, 0, 1)
    tally = Tally(SCOPE, _snap(0.0, (0, 0), [kv, srv[0], hog[0]], [kv, srv[0]]))
    tally.add(_snap(1.0, (70, 0), [kv, srv[1], hog[1]], [kv, srv[1]]))
    cpu0, cpu1 = summarize(tally, 100.0, {}).cores
    assert (cpu0.busy, cpu0.own, cpu0.foreign) == (0.7, 0.6, 0.4)
    assert cpu1.foreign == 0.0


def test_steal_is_read_per_core() -> None:
    first = _snap(0.0, (0, 0), [], [], steal=(0, 10))
    last = _snap(2.0, (50, 50), [], [], steal=(0, 70))
    tally = Tally(Scope((0, 1), False, KVPERF), first)
    tally.add(last)
    cores = summarize(tally, 100.0, {}).cores
    assert [c.steal for c in cores] == [0.0, 0.6]
    assert [c.foreign for c in cores] == [0.5, 0.5]  # nothing of kvperf's ran


def test_a_foreign_command_line_is_read_with_its_credentials_hidden(tmp_path: Path) -> None:
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "cmdline").write_bytes(
        b"kvperf\0run\0--db\0postgresql://kvperf:s3cret-pw@127.0.0.1:5/x\0-a\0pw\0")
    shown = "kvperf run --db postgresql://kvperf:***@127.0.0.1:5/x -a ***"
    assert read_command(42, tmp_path) == shown

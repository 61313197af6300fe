"""clients/profiling.py and the client's part of a profile: the runtimes' perf-map flags,
the pids read from perf script's text, the maps moved out of /tmp, and a client node being
the stacks a differential flamegraph compares."""

from __future__ import annotations

from pathlib import Path

from kvperf.clients.profiling import keep_maps, runtime_env, sampled_pids
from kvperf.pipeline.run.flamediff import _stack_files

SCRIPT = """\
node 30420/30421 [001] 5147.123456: 1010101 cpu-clock:
\t    7f00 Builtins_LoadIC (/usr/bin/node)

harness  4242 [000]  5147.2: 1010101 cpu-clock:
\t    1234 main.main (/tmp/harness)
"""


def test_each_runtime_is_asked_for_its_perf_map_without_losing_the_user_s_options() -> None:
    env = runtime_env("node", {"NODE_OPTIONS": "--max-old-space-size=512"})
    assert env["NODE_OPTIONS"] == "--max-old-space-size=512 --perf-basic-prof"
    assert "-XX:+DumpPerfMapAtExit" in runtime_env("java", {})["JAVA_TOOL_OPTIONS"]
    assert runtime_env("python", {})["PYTHONPERFSUPPORT"] == "1"
    assert runtime_env("go", {"A": "1"}) == {"A": "1"}


def test_the_sampled_processes_maps_move_into_the_trial_and_no_other(tmp_path: Path) -> None:
    assert sampled_pids(SCRIPT) == {30420, 4242}
    tmp, trial = tmp_path / "tmp", tmp_path / "trial"
    tmp.mkdir()
    trial.mkdir()
    for pid in (30420, 999):
        (tmp / f"perf-{pid}.map").write_text("7f00 10 LazyCompile:*f\n")
    kept = keep_maps({30420, 4242}, trial, tmp)
    assert kept == [trial / "perf-30420.map"] and kept[0].is_file()
    assert sorted(p.name for p in tmp.iterdir()) == ["perf-999.map"]


def test_a_client_harness_s_stacks_are_what_a_differential_compares() -> None:
    node = {"node": 0, "files": {"folded stacks": "n0.folded"}}
    client = {"node": 1, "role": "client", "files": {"folded stacks": "c.folded"}}
    row = {"profile": {"nodes": [node, client]}}
    assert _stack_files(row, Path("/r"), "profile") == [Path("/r/c.folded")]  # type: ignore[arg-type]
    row = {"profile": {"nodes": [node]}}
    assert _stack_files(row, Path("/r"), "profile") == [Path("/r/n0.folded")]  # type: ignore[arg-type]

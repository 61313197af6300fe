"""kvload's argv for a module scenario (pure)."""

from __future__ import annotations

from pathlib import Path

from kvperf.driver.base import Target
from kvperf.driver.scenario_load import ScenarioLoad, scenario_argv
from kvperf.server.resp import Endpoint


def _load(**changes: object) -> ScenarioLoad:
    values: dict[str, object] = {
        "command": "HSET doc:__field:id__ t \"a b\"", "clients": 4, "pipeline": 2,
        "requests": 200, "duration": None, "warmup": 0, "sequential": True,
        "dataset": Path("/d/docs.csv"), "keyspacelen": None, "seed": 7, "cpus": None}
    values.update(changes)
    return ScenarioLoad(**values)  # type: ignore[arg-type]


def test_an_ingestion_sends_n_rows_in_order_and_the_command_as_one_argument() -> None:
    target = Target((Endpoint("127.0.0.1", 7000),), False)
    argv = scenario_argv(Path("/bin/kvload"), _load(), target, Path("/r/kvload.json"))
    assert argv == ["/bin/kvload", "-h", "127.0.0.1", "-p", "7000", "-c", "4", "-P", "2",
                    "--seed", "7", "-q", "--json", "/r/kvload.json", "-n", "200",
                    "--sequential", "--dataset", "/d/docs.csv",
                    "HSET doc:__field:id__ t \"a b\""]


def test_a_timed_read_has_duration_warmup_keyspace_and_tls() -> None:
    target = Target((Endpoint("127.0.0.1", 7000),), False, Path("/tls/ca.crt"))
    argv = scenario_argv(Path("kvload"), _load(requests=None, duration=3, warmup=1,
                                               sequential=False, dataset=None,
                                               keyspacelen=100, command="GET key:__rand_int__"),
                         target, Path("r.json"))
    assert argv[argv.index("--duration") + 1] == "3" and "-n" not in argv
    assert argv[argv.index("--warmup") + 1] == "1" and "--sequential" not in argv
    assert argv[argv.index("-r") + 1] == "100" and "--dataset" not in argv
    assert argv[-4:] == ["--tls", "--cacert", "/tls/ca.crt", "GET key:__rand_int__"]

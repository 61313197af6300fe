"""Key and value distributions in configs (pure): each key's spellings, refusals naming the
key and the value (exit 2 through the CLI), the identity they add and the one they keep."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvperf.analysis.comparison import describe_group, group_key
from kvperf.config.loader import parse_config
from kvperf.core.errors import ConfigError
from kvperf.driver.base import Target
from kvperf.driver.kvload import Kvload
from kvperf.plan.matrix import expand
from kvperf.results.row import trial_series
from kvperf.server.resp import Endpoint

# Ids of today's trials (computed by main at 5ebc107, before distributions existed): old
# stored rows must keep matching the same config's new trials.
OLD_IDS = {("SET", 64): "1c0ef7bc1e8c", ("GET", 64): "713ef867ad7d"}


def plan(**keys: object) -> list:  # type: ignore[type-arg]
    obj = {"commands": ["SET", "GET"], "requests": 1000, "keyspacelen": 1000, **keys}
    return expand(parse_config([obj], {0, 1}))


def test_defaults_keep_todays_series_ids() -> None:
    for keys in ({"data_sizes": 64}, {"value_sizes": ["64"], "key_distribution": "uniform",
                                      "value_content": "random", "ttl": "none"}):
        trials = plan(**keys)
        assert {(t.load.command.name, t.load.data_size): t.id for t in trials} == OLD_IDS
        assert all(trial_series(t)["config_set"] is None for t in trials)


def test_each_distribution_is_a_series_of_its_own() -> None:
    keys = ["uniform", "zipf:0.99", "gaussian:0.5:0.1", "hotset:0.01:0.9", "sequential"]
    trials = plan(key_distribution=keys, data_sizes=64)
    assert len({t.id for t in trials}) == 10
    hot = [t for t in trials if t.load.key_distribution == "hotset:0.01:0.9"]
    assert trial_series(hot[0])["config_set"] == {"key_distribution": "hotset:0.01:0.9"}
    assert "key_distribution=hotset:0.01:0.9" in hot[0].describe()


def test_value_sizes_contents_and_ttls_apply_to_what_writes_them() -> None:
    trials = plan(value_sizes=["64", "16-256", "64:3,1024:1", "1-100:5,101-1000:4"],
                  value_content=["random", "compressible:0.5"], ttl=["none", 60, "30-300"])
    sets = [t for t in trials if t.load.command.name == "SET"]
    gets = [t for t in trials if t.load.command.name == "GET"]
    assert len(sets) == 4 * 2 * 3 and len(gets) == 4
    assert {t.load.data_size for t in gets} == {64, 256, 1024, 1000}
    # a GET reads the seeded values, drawn from the sizes asked: a series of each
    assert [t.load.workload() for t in gets if t.load.data_size == 64] == [{}]
    assert all(t.load.workload() == {"value_sizes": t.load.value_size}
               for t in gets if t.load.data_size != 64), [t.load.workload() for t in gets]
    one = next(t for t in sets if t.load.value_size == "1-100:5,101-1000:4"
               and t.load.ttl == "30-300" and t.load.value_content != "random")
    assert one.load.data_size == 1000
    assert one.params()["workload"] == {"value_sizes": "1-100:5,101-1000:4",
                                        "value_content": "compressible:0.5", "ttl": "30-300"}


def test_kvload_gets_the_distributions_as_flags() -> None:
    [trial] = [t for t in plan(key_distribution="zipf:0.99", value_sizes="16-256", ttl=60)
               if t.load.command.name == "SET"]
    target = Target((Endpoint("127.0.0.1", 1),), False)
    argv = Kvload(Path("kvload"), "0").argv(trial.load, target, ["-n", "10"], Path("r.json"))
    at = argv.index("--key-distribution")
    assert argv[at:at + 6] == ["--key-distribution", "zipf:0.99", "--value-size", "16-256",
                               "--ttl", "60"]
    plain = Kvload(Path("kvload"), "0").argv(plan()[0].load, target, ["-n", "10"],
                                              Path("r.json"))
    assert not {"--key-distribution", "--value-size", "--ttl", "--value-content"} & set(plain)


@pytest.mark.parametrize(("keys", "named"), [
    ({"key_distribution": "pareto:1"}, "'pareto:1'"),
    ({"key_distribution": "zipf"}, "'zipf'"),
    ({"key_distribution": "zipf:abc"}, "'abc'"),
    ({"key_distribution": "zipf:0"}, "'zipf:0'"),
    ({"key_distribution": "gaussian:0.5"}, "'gaussian:0.5'"),
    ({"key_distribution": "hotset:1.5:0.9"}, "'hotset:1.5:0.9'"),
    ({"key_distribution": 7}, "7"),
    ({"value_sizes": "9-3"}, "'9-3'"),
    ({"value_sizes": "64:x"}, "'64:x'"),
    ({"value_sizes": "0"}, "'0'"),
    ({"value_sizes": "64:0"}, "'64:0'"),
    ({"value_content": "zeros"}, "'zeros'"),
    ({"value_content": "compressible:1.5"}, "'compressible:1.5'"),
    ({"ttl": "0"}, "'0'"),
    ({"ttl": "9-3"}, "'9-3'"),
    ({"ttl": "soon"}, "'soon'"),
])
def test_ill_formed_values_are_refused_by_key_and_value(keys: dict[str, object],
                                                        named: str) -> None:
    with pytest.raises(ConfigError) as err:
        plan(**keys)
    assert named in str(err.value) and next(iter(keys)) in str(err.value)


def test_sizes_given_twice_and_ttls_without_a_set_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"one of 'data_sizes' and 'value_sizes'"):
        plan(data_sizes=64, value_sizes="64")
    with pytest.raises(ConfigError, match=r"'ttl' '60'.*no command of this object is a SET"):
        expand(parse_config([{"commands": ["GET"], "requests": 1, "ttl": 60}], {0}))


def test_drawn_sizes_and_ttls_are_refused_in_a_cluster_and_with_faults() -> None:
    with pytest.raises(ConfigError, match=r"'16-256': sizes or TTLs drawn per request"):
        plan(value_sizes="16-256", cluster_mode=["no", "yes"])
    with pytest.raises(ConfigError, match=r"'30-60': sizes or TTLs drawn"):
        expand(parse_config([{"commands": ["SET"], "duration": 10, "ttl": "30-60",
                              "replicas": 1, "faults": [{"at": 2, "kill": "primary"}]}], {0}))
    assert plan(value_sizes="64", ttl=60, cluster_mode="yes")  # fixed ones are not drawn


def test_tables_and_verdict_labels_name_the_distributions() -> None:
    [trial] = [t for t in plan(key_distribution="zipf:0.99", ttl="30-300")
               if t.load.command.name == "SET"]
    label = describe_group(group_key(dict(trial_series(trial))))  # type: ignore[arg-type]
    assert label.endswith("key_distribution=zipf:0.99 ttl=30-300"), label
    plain = describe_group(group_key(dict(trial_series(plan()[0]))))  # type: ignore[arg-type]
    assert plain == "SET d=3 P=1 c=50", plain


def test_a_command_file_is_one_sequence_of_its_exact_shares(tmp_path: Path) -> None:
    mix = tmp_path / "mix.txt"
    mix.write_text("# read-heavy\n3 SET __key__ __data__\n6 GET __key__  # reads\n\n"
                   "1 INCR counter:__rand_int__\n")
    [spec] = parse_config([{"command_files": str(mix), "requests": 10}], {0})
    [command] = spec.commands
    assert command.name.startswith("FILE mix.txt ") and command.independent_keys
    assert command.calls_per_sequence == {"set": 3, "get": 6, "incr": 1}
    assert command.seed.value == "strings"  # the GETs read the seeded keyspace
    mix.write_text("2 SET __key__ __data__\n4 GET __key__\n")
    [other] = parse_config([{"command_files": str(mix), "requests": 10}], {0})[0].commands
    assert other.calls_per_sequence == {"set": 1, "get": 2} and other.name != command.name


@pytest.mark.parametrize(("text", "says"), [
    ("3 GET __key__\nGET __key__\n", "line 2: 'GET __key__' is not WEIGHT COMMAND"),
    ("0 GET __key__\n", "line 1"),
    ("1 GET __nope__\n", "line 1: placeholder '__nope__'"),
    ("1 SET a b ; GET a\n", "one command a line"),
    ("# nothing\n", "no command"),
    ("65 GET __key__\n1 SET __key__ x\n", "need 66 commands per cycle"),
])
def test_bad_command_files_are_refused_by_line(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / "mix.txt").write_text(text)
    with pytest.raises(ConfigError, match=re.escape(says)):
        parse_config([{"command_files": str(tmp_path / "mix.txt"), "requests": 1}], {0})
    with pytest.raises(ConfigError, match="cannot read"):
        parse_config([{"command_files": str(tmp_path / "none.txt"), "requests": 1}], {0})


def test_a_command_mix_is_a_command_file_inline_and_a_list_of_them_a_sweep() -> None:
    lines = ["3 SET __key__ __data__", "6 GET __key__", "1 INCR counter:__rand_int__"]
    [spec] = parse_config([{"command_mix": lines, "requests": 10}], {0})
    [command] = spec.commands
    assert command.name.startswith("MIX ") and command.independent_keys
    assert command.calls_per_sequence == {"set": 3, "get": 6, "incr": 1}
    [swept] = parse_config([{"command_mix": [lines, lines[:2]], "requests": 10}], {0})
    assert len(swept.commands) == 2 and swept.commands[0].name == command.name


@pytest.mark.parametrize(("value", "says"), [
    ("3 GET __key__", "must be a list of lines"),
    ([], "must be a list of lines"),
    ([["3 GET __key__"], []], "a mix must be a non-empty list"),
    (["3 GET __key__", 4], "a mix must be a non-empty list"),
    (["GET __key__"], "line 1: 'GET __key__' is not WEIGHT COMMAND"),
])
def test_bad_command_mixes_are_refused_naming_the_key(value: object, says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)):
        parse_config([{"command_mix": value, "requests": 1}], {0})


def test_field_lists_and_a_second_key_expand_and_other_types_are_not_seeded_as_strings(
        ) -> None:
    from kvperf.config.commands import resolve_command, weighted_command
    hashes = weighted_command("1 HSET __key__ __field_values:2__\n2 HMGET __key__ __fields:3__\n",
                              "h")
    assert " ".join(hashes.argv) == (
        "HSET key:__rand_int__ field:0 __data__ field:1 __data__ ; "
        "HMGET key:__rand_int__ field:0 field:1 field:2 ; "
        "HMGET key:__rand_int__ field:0 field:1 field:2")
    assert hashes.seed.value == "none"  # strings seeded under HSET would be WRONGTYPE
    strings = weighted_command("1 COPY __key__ __key2__\n3 GET __key__\n", "s")
    assert strings.argv[:3] == ("COPY", "key:__rand_int__", "key:__rand_int__")
    assert strings.seed.value == "strings"
    for bad, says in [("HMGET k __fields:0__", "1 to 1000 fields"),
                      ("HSET k __field_values:1001__", "1 to 1000 fields"),
                      ("HMGET k __fieldz:3__", "placeholder '__fieldz:3__'")]:
        with pytest.raises(ValueError, match=re.escape(says)):
            resolve_command(bad)

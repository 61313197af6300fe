"""Key and value distributions proved on real valkey-server 8.0.1: each config distribution
runs through ``kvperf run --config`` (``--mode client`` at a server this module started) and
the server's own data says what it saw.

- Keys: the command is ``INCR <name>:__rand_int__``, so after the run each key's value is
  the number of requests that drew it (the server counted; no trace, no sampling). The
  counts are binned by key number (each of the first 10 keys alone, then wider bins) and
  tested against the asked distribution's exact probabilities with a chi-square
  goodness-of-fit test (p > 0.001); Zipf and the hot set also by the share of the 100 keys
  that should be hottest (within 0.01 of 0.5178 and 0.9). Sequential keys: every key
  exactly requests / keys times.
- Values: SETs with a weighted histogram of sizes, a TTL range and compressible contents;
  every key's STRLEN (the last write's size: one draw each), TTL and a zlib ratio sample.
- One sampler: the same Zipf and Gaussian through kvload's own mode and its memtier front
  end, compared with a two-sample chi-square test of homogeneity (p > 0.001).
- Command files: kvload's --command-file and a config's command_files run their weights
  (INFO commandstats' shares, exact and within 1 point); a command_mix's field lists fill
  every hash with its fields, and its second key is drawn apart from the first.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from scipy import stats

from kvperf.plan.trial import ServerSetup
from kvperf.server.binary import inspect
from kvperf.server.instance import ServerGroup
from kvperf.server.resp import Endpoint, RespClient
from tests.helpers import require_binary, run_kvperf, write_config

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

KEYS, REQUESTS = 10_000, 200_000
# bin edges: each of the first 10 keys alone (Zipf's head), then wider bins
EDGES = [*range(11), 20, 50, 100, 200, 500, *range(1000, KEYS + 1, 500)]
P_MIN = 1e-3


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    setup = ServerSetup(False, False, None, 1, None, (), (), ())
    binary = inspect(Path(require_binary("valkey-server")), "test")
    with ServerGroup(binary, setup, tmp_path_factory.mktemp("distributions")) as group:
        yield group.endpoints[0]


def _pmf(shape: str) -> Callable[[int], float]:
    """P(key k) of kvload's key distribution over KEYS keys (workload/sample.rs)."""
    name, *args = shape.split(":")
    a = [float(x) for x in args]
    if name == "zipf":
        norm = sum((k + 1) ** -a[0] for k in range(KEYS))
        return lambda k: (k + 1) ** -a[0] / norm
    if name == "gaussian":
        mean, sd = a[0] * KEYS, a[1] * KEYS
        cdf = stats.norm(mean, sd).cdf
        inside = cdf(KEYS) - cdf(0)
        return lambda k: float(cdf(k + 1) - cdf(k)) / inside
    if name == "hotset":
        hot = round(a[0] * KEYS)
        return lambda k: a[1] / hot if k < hot else (1 - a[1]) / (KEYS - hot)
    return lambda k: 1 / KEYS


def _counts(endpoint: Endpoint, prefix: str) -> list[int]:
    """Per key number, the server's count of INCRs (0 for keys never drawn)."""
    names = [f"{prefix}:{k:012d}" for k in range(KEYS)]
    counts = []
    with RespClient(endpoint) as client:
        for at in range(0, KEYS, 1000):
            reply = client.call("MGET", *names[at:at + 1000])
            assert isinstance(reply, list)
            counts += [int(v) if v is not None else 0 for v in reply]
    return counts


def _binned(values: list[float]) -> list[float]:
    return [sum(values[lo:hi]) for lo, hi in itertools.pairwise(EDGES)]


def _pooled(a: list[float], b: list[float]) -> tuple[list[float], list[float]]:
    """Neighbouring bins pooled until each holds at least 5 of ``b`` (the chi-square
    approximation's rule); a short tail joins the last bin."""
    out_a: list[float] = []
    out_b: list[float] = []
    acc_a = acc_b = 0.0
    for x, y in zip(a, b, strict=True):
        acc_a, acc_b = acc_a + x, acc_b + y
        if acc_b >= 5:
            out_a.append(acc_a)
            out_b.append(acc_b)
            acc_a = acc_b = 0.0
    out_a[-1] += acc_a
    out_b[-1] += acc_b
    return out_a, out_b


def _fits(observed: list[int], shape: str) -> float:
    """The chi-square goodness-of-fit p-value of per-key counts against ``shape``."""
    pmf = _pmf(shape)
    expected = _binned([sum(observed) * pmf(k) for k in range(KEYS)])
    seen, wanted = _pooled(_binned([float(c) for c in observed]), expected)
    return float(stats.chisquare(seen, wanted).pvalue)


def _run(tmp_path: Path, endpoint: Endpoint, objects: list[dict[str, object]]) -> list[dict]:
    """``kvperf run --config`` at the module's server; its rows (all ok)."""
    write_config(tmp_path, objects)
    done = run_kvperf("run", "--config", "config.json", "--mode", "client", "--port",
                      str(endpoint.port), "--results-dir", "results", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows: list[dict] = json.loads(next((tmp_path / "results").glob("*/metrics.json"))
                                  .read_text())
    assert [r["status"] for r in rows] == ["ok"] * len(objects)
    return rows


SHAPES = ["uniform", "zipf:0.99", "gaussian:0.5:0.1", "hotset:0.01:0.9", "sequential"]
HOT_SHARE = {"zipf:0.99": 0.5178, "hotset:0.01:0.9": 0.9}  # of keys 0..99


def test_each_key_distribution_is_what_the_server_counted(
        server: Endpoint, tmp_path: Path) -> None:
    objects = [{"commands": [f"INCR d{i}:__rand_int__"], "requests": REQUESTS,
                "keyspacelen": KEYS, "clients": 4, "pipelines": 16, "benchmark-threads": 1,
                "key_distribution": shape} for i, shape in enumerate(SHAPES)]
    rows = _run(tmp_path, server, objects)
    assert [r["config_set"] for r in rows] == [
        None, *({"key_distribution": s} for s in SHAPES[1:])]
    for i, shape in enumerate(SHAPES):
        counts = _counts(server, f"d{i}")
        assert sum(counts) == REQUESTS, shape
        if shape == "sequential":
            assert set(counts) == {REQUESTS // KEYS}, shape
            continue
        assert _fits(counts, shape) > P_MIN, (shape, _binned([float(c) for c in counts]))
        if shape in HOT_SHARE:
            share = sum(counts[:100]) / REQUESTS
            assert abs(share - HOT_SHARE[shape]) < 0.01, (shape, share)


def test_value_sizes_ttls_and_contents_are_what_the_server_holds(
        server: Endpoint, tmp_path: Path) -> None:
    n = 2000
    [row] = _run(tmp_path, server, [{
        "commands": ["SET v:__rand_int__ __data__"], "requests": 20_000, "keyspacelen": n,
        "clients": 4, "pipelines": 16, "value_sizes": "10-19:1,100-199:3",
        "ttl": "100-199", "value_content": "compressible:0.5"}])
    assert row["data_size"] == 199 and row["config_set"] == {
        "value_sizes": "10-19:1,100-199:3", "value_content": "compressible:0.5",
        "ttl": "100-199"}
    names = [f"v:{k:012d}" for k in range(n)]
    with RespClient(server) as client:
        sizes = [int(v) for v in client.pipeline([("STRLEN", k) for k in names])]  # type: ignore[arg-type]
        ttls = [int(v) for v in client.pipeline([("TTL", k) for k in names])]  # type: ignore[arg-type]
        values = client.pipeline([("GET", k) for k in names[:200]])
    # a key no request drew is missing (e^-10 of them: ~0.1 key in 2000)
    sizes, ttls = [x for x in sizes if x], [t for t in ttls if t != -2]
    assert len(sizes) == len(ttls) > n - 5
    small = [s for s in sizes if 10 <= s <= 19]
    large = [s for s in sizes if 100 <= s <= 199]
    assert len(small) + len(large) == len(sizes), sorted(set(sizes))
    # one draw per key: the small bucket's weight is 1/4 (sd of the share 0.0097)
    assert abs(len(small) / len(sizes) - 0.25) < 0.04, len(small)
    assert abs(sum(large) / len(large) - 149.5) < 4 and abs(sum(small) / len(small) - 14.5) < 1
    assert set(large) >= {100, 199} and set(small) == set(range(10, 20))
    # TTLs drawn in 100..199 (seconds since the SET off the top), uniform: mean ~149.5
    assert all(90 <= t <= 199 for t in ttls), (min(ttls), max(ttls))
    assert abs(sum(ttls) / len(ttls) - 149.5) < 5
    ratios = [len(zlib.compress(v, 9)) / len(v) for v in values  # type: ignore[arg-type]
              if isinstance(v, bytes) and len(v) >= 150]
    assert ratios and 0.45 < sum(ratios) / len(ratios) < 0.75, ratios[:5]


def _native(endpoint: Endpoint, prefix: str, shape: str) -> None:
    argv = [require_binary("kvload"), "-p", str(endpoint.port), "-n", str(REQUESTS),
            "-r", str(KEYS), "-c", "4", "-P", "16", "--key-distribution", shape, "-q",
            "INCR", f"{prefix}:__rand_int__"]
    subprocess.run(argv, check=True, capture_output=True, timeout=120)


def _memtier(endpoint: Endpoint, prefix: str, pattern: list[str]) -> None:
    # one client: memtier's clients of a thread draw the same keys (kvload memtier as memtier)
    argv = [require_binary("kvload"), "memtier", "-p", str(endpoint.port), "-t", "1",
            "-c", "1", "--pipeline", "16", "-n", str(REQUESTS), "--hide-histogram",
            "--key-prefix", f"{prefix}:", "--key-minimum", "1", "--key-maximum", str(KEYS),
            "--command", "INCR __key__", *pattern]
    subprocess.run(argv, check=True, capture_output=True, timeout=120)


def _memtier_counts(endpoint: Endpoint, prefix: str, shift: int) -> list[int]:
    """memtier's keys are numbers without padding, from 1: key k + shift ↔ native k."""
    with RespClient(endpoint) as client:
        reply = client.call("MGET", *[f"{prefix}:{k + shift}" for k in range(KEYS)])
    assert isinstance(reply, list)
    return [int(v) if v is not None else 0 for v in reply]


@pytest.mark.parametrize(("shape", "pattern", "shift"), [
    ("zipf:0.99", ["--command-key-pattern", "Z", "--key-zipf-exp", "0.99"], 1),
    ("gaussian:0.5:0.1", ["--command-key-pattern", "G", "--key-median", "5000",
                          "--key-stddev", "1000"], 0),
])
def test_native_and_memtier_front_ends_draw_the_same_distribution(
        server: Endpoint, shape: str, pattern: list[str], shift: int) -> None:
    tag = shape.split(":")[0]
    _native(server, f"n{tag}", shape)
    _memtier(server, f"m{tag}", pattern)
    native = _counts(server, f"n{tag}")
    memtier = _memtier_counts(server, f"m{tag}", shift)
    assert sum(native) == sum(memtier) == REQUESTS
    a, b = _binned([float(c) for c in native]), _binned([float(c) for c in memtier])
    both = [x + y for x, y in zip(a, b, strict=True)]
    pooled_a, _ = _pooled(a, both)
    pooled_b, _ = _pooled(b, both)
    test = stats.chi2_contingency([pooled_a, pooled_b])
    assert test.pvalue > P_MIN, (shape, test.pvalue, pooled_a, pooled_b)
    assert _fits(native, shape) > P_MIN and _fits(memtier, shape) > P_MIN


MIX = "# read-heavy\n3 SET __key__ __data__\n6 GET __key__\n1 INCR counter:__rand_int__\n"
SHARES = {"set": 0.3, "get": 0.6, "incr": 0.1}


def _shares(endpoint: Endpoint) -> dict[str, float]:
    """INFO commandstats' calls of SET, GET and INCR as shares of their sum."""
    with RespClient(endpoint) as client:
        info = client.call("INFO", "commandstats")
    assert isinstance(info, bytes)
    calls = {name: int(n) for name, n in re.findall(rb"cmdstat_(set|get|incr):calls=(\d+)",
                                                    info)}
    total = sum(calls.values())
    return {name.decode(): n / total for name, n in calls.items()}


def test_a_command_file_runs_its_exact_weights(server: Endpoint, tmp_path: Path) -> None:
    """kvload's --command-file and a config's command_files: commandstats' shares are the
    file's weights within 1 point (exactly, but for the seed stage's calls)."""
    (tmp_path / "mix.txt").write_text(MIX)
    with RespClient(server) as client:
        client.call("CONFIG", "RESETSTAT")
    argv = [require_binary("kvload"), "-p", str(server.port), "-n", "20000", "-r", "1000",
            "-c", "4", "-P", "4", "-q", "--command-file", str(tmp_path / "mix.txt")]
    subprocess.run(argv, check=True, capture_output=True, timeout=120)
    shares = _shares(server)
    assert shares == pytest.approx(SHARES, abs=1e-9), shares
    with RespClient(server) as client:
        client.call("CONFIG", "RESETSTAT")
    [row] = _run(tmp_path, server, [{"command_files": ["mix.txt"], "requests": 20000,
                                      "keyspacelen": 1000, "clients": 4, "pipelines": 4}])
    assert row["command"].startswith("FILE mix.txt ")
    shares = _shares(server)
    assert all(abs(shares[k] - v) < 0.01 for k, v in SHARES.items()), shares


def _calls(endpoint: Endpoint, *names: str) -> dict[str, tuple[int, int]]:
    """INFO commandstats' (calls, failed_calls) of each command named."""
    with RespClient(endpoint) as client:
        info = client.call("INFO", "commandstats")
    assert isinstance(info, bytes)
    found = {m[0].decode(): (int(m[1]), int(m[2])) for m in re.findall(
        rb"cmdstat_(\w+):calls=(\d+),.*?failed_calls=(\d+)", info)}
    return {name: found.get(name, (0, 0)) for name in names}


def test_field_lists_and_a_second_key_reach_the_server_as_asked(
        server: Endpoint, tmp_path: Path) -> None:
    """A config's command_mix with a field list (``__field_values:20__`` in HSET,
    ``__fields:20__`` in HMGET) and a second key (``COPY __key__ __key2__``): every hash
    holds the 20 fields, HMGET runs twice as often as HSET, and COPY never met its own
    source (one key drawn for both would fail every COPY: "source and destination objects
    are the same"; two draws over 10^8 keys collide with odds of ~1 in 50,000 here)."""
    with RespClient(server) as client:
        client.call("FLUSHALL")
        client.call("CONFIG", "RESETSTAT")
    mixes = [["1 HSET __key__ __field_values:20__", "2 HMGET __key__ __fields:20__"],
             ["1 SET __key__ __data__", "1 COPY __key__ __key2__"]]
    [row] = _run(tmp_path, server, [{"command_mix": mixes[0], "requests": 3000,
                                      "keyspacelen": 500, "clients": 2}])
    assert row["command"].startswith("MIX "), row["command"]
    calls = _calls(server, "hset", "hmget")
    assert calls["hmget"][0] == 2 * calls["hset"][0] > 0, calls
    with RespClient(server) as client:
        sampled = [client.call("RANDOMKEY") for _ in range(20)]
        hashes = [k for k in sampled if client.call("TYPE", k) == b"hash"]
        assert hashes, sampled
        assert {client.call("HLEN", k) for k in hashes} == {20}, hashes
    (tmp_path / "copy").mkdir()
    _run(tmp_path / "copy", server, [{"command_mix": mixes[1], "requests": 4000,
                             "keyspacelen": 100_000_000, "clients": 2}])
    copies, failed = _calls(server, "copy")["copy"]
    assert copies >= 2000 and failed == 0, (copies, failed)


def test_gets_under_value_sizes_read_values_of_the_asked_sizes(
        server: Endpoint, tmp_path: Path) -> None:
    """The seed stage draws each key's size from ``value_sizes`` (it once wrote every key at
    the largest size, so GETs read 4 KiB values where the config asked half 16 B)."""
    with RespClient(server) as client:
        client.call("FLUSHALL")
    _run(tmp_path, server, [{"commands": ["GET"], "value_sizes": "16:1,4096:1",
                             "keyspacelen": 2000, "requests": 2000, "clients": 2}])
    with RespClient(server) as client:
        sizes = [client.call("STRLEN", f"key:{i:012d}") for i in range(0, 2000, 5)]
    small = sizes.count(16) / len(sizes)
    assert sizes.count(16) + sizes.count(4096) == len(sizes), set(sizes)
    assert 0.4 < small < 0.6, small  # 400 draws of a fair coin: 0.5 ± 0.05 at 2.5 sigma

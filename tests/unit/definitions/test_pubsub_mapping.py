"""The corpus' pub/sub definitions (a memtier publisher beside pubsub-sub-bench) mapped onto
one ``kvload pubsub`` run, and what cannot be mapped refused by name (pure)."""

from __future__ import annotations

import pytest

from kvperf.definitions.model import ToolConfig
from kvperf.definitions.pubsub import PubsubError, plan_pubsub

PUBLISHER = ('--test-time 120 --key-prefix "channel-" --pipeline 10 -d 128 --key-minimum 1 '
             '--key-maximum 10 --command "PUBLISH __key__ __data__" --command-key-pattern="R" '
             '-c 3 -t 1 --hide-histogram')
SUBSCRIBERS = ('-clients 170 -channel-minimum 1 -channel-maximum 10 -subscriber-prefix '
               '"channel-" -mode subscribe -test-time 120 -subscribers-per-channel 17')


def _plan(publisher: str = PUBLISHER, subscribers: str = SUBSCRIBERS,
          override: int | None = None) -> tuple[str, ...]:
    return plan_pubsub((ToolConfig("memtier_benchmark", publisher),
                        ToolConfig("pubsub-sub-bench", subscribers)), override).argv


def _opt(argv: tuple[str, ...], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_the_skewed_publishers_definition() -> None:
    argv = _plan()
    assert {f: _opt(argv, f) for f in ("--subscribers", "--channels", "--publishers", "-P",
                                      "-d", "--mode", "--channel-min", "--duration")} == {
        "--subscribers": "170", "--channels": "10", "--publishers": "3", "-P": "10",
        "-d": "128", "--mode": "subscribe", "--channel-min": "1", "--duration": "120"}


def test_override_rate_and_defaults() -> None:
    publisher = PUBLISHER.replace("--pipeline 10", "--rate-limiting 100").replace(
        "-c 3 -t 1", "")
    argv = _plan(publisher, "-channel-maximum 10 -subscribers-per-channel 2", override=1)
    assert _opt(argv, "--duration") == "1"
    assert _opt(argv, "--publishers") == "200"  # memtier's defaults: 50 clients × 4 threads
    assert _opt(argv, "--rps") == "20000.0"  # 100 per connection
    assert _opt(argv, "--subscribers") == "20"  # 10 channels × 2 without -clients


def test_sharded_and_channels_per_subscriber() -> None:
    argv = _plan(PUBLISHER.replace("PUBLISH", "SPUBLISH"),
                 SUBSCRIBERS.replace("-mode subscribe", "-mode ssubscribe")
                 + " -min-number-channels-per-subscriber 4 -max-number-channels-per-subscriber 4")
    assert (_opt(argv, "--mode"), _opt(argv, "--channels-per-subscriber")) == ("ssubscribe", "4")


@pytest.mark.parametrize(("publisher", "subscribers", "says"), [
    (PUBLISHER, SUBSCRIBERS + " -min-number-channels-per-subscriber 1 "
     "-max-number-channels-per-subscriber 5", "random number of channels"),
    (PUBLISHER, SUBSCRIBERS + " -oss-cluster-api-distribute-subscribers true",
     "-oss-cluster-api-distribute-subscribers"),
    (PUBLISHER, SUBSCRIBERS.replace("-mode subscribe", "-mode psubscribe"), "psubscribe"),
    (PUBLISHER.replace("PUBLISH", "SPUBLISH"), SUBSCRIBERS, "PUBLISH __key__ __data__"),
    (PUBLISHER.replace('"channel-"', '"other-"'), SUBSCRIBERS, "--key-prefix 'other-'"),
    (PUBLISHER.replace("--key-maximum 10", "--key-maximum 5"), SUBSCRIBERS, "do not cover"),
    (PUBLISHER.replace("-d 128", "-d 10"), SUBSCRIBERS, "at least 32 bytes"),
    (PUBLISHER + " --randomize", SUBSCRIBERS, "--randomize"),
])
def test_unmappable_options_are_refused_by_name(publisher: str, subscribers: str,
                                                says: str) -> None:
    with pytest.raises(PubsubError, match=says.replace("(", r"\(")):
        _plan(publisher, subscribers)

"""redis-py (sync) harness: ``single`` = one client holding one connection
(``single_connection_client``), calls one after another; ``pool`` = ``workers`` threads
sharing one BlockingConnectionPool of ``workers`` connections (each call takes a connection
from the pool and gives it back: the pool's overhead is what single vs pool measures).
Pipelines and MULTI/EXEC through ``Redis.pipeline(transaction=…)``."""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import redis
from kvharness import Adapter, Spec, SyncCall, command_incr, main, one, queue


def connect(spec: Spec) -> redis.Redis:
    endpoint = spec.raw["endpoint"]
    tls = {"ssl_ca_certs": endpoint["ca_file"], "ssl_certfile": endpoint["cert_file"],
           "ssl_keyfile": endpoint["key_file"]} if endpoint["tls"] else {}
    options = {"host": endpoint["host"], "port": endpoint["port"],
               "password": os.environ.get("KVPERF_CLIENT_PASSWORD"), **tls}
    if spec.model == "single":
        return redis.Redis(single_connection_client=True, ssl=bool(tls), **options)
    if tls:
        options["connection_class"] = redis.SSLConnection
    pool = redis.BlockingConnectionPool(max_connections=spec.workers, **options)
    return redis.Redis(connection_pool=pool)


def make_call(spec: Spec) -> Any:
    client = connect(spec)
    value, transaction = spec.value, spec.transaction
    def single(batch: list[tuple[str, str]]) -> None:
        name, key = batch[0]
        one(client, name, key, value, command_incr)

    def pipelined(batch: list[tuple[str, str]]) -> list[Any]:
        pipe = queue(client.pipeline(transaction=transaction), batch, value, command_incr)
        return list(pipe.execute(raise_on_error=False))

    call: SyncCall = single if spec.pipeline == 1 and not transaction else pipelined
    return lambda worker: call


if __name__ == "__main__":
    main(Adapter("redis-py", "redis-py", redis.__version__, ("single", "pool"),
                 make_call=make_call))

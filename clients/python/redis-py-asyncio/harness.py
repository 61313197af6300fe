"""redis-py asyncio harness: ``async`` = one event loop with ``workers`` tasks (one call or
batch in flight each) over one client whose pool holds ``workers`` connections;
``single`` = one task. Pipelines and MULTI/EXEC through ``pipeline(transaction=…)``."""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import redis
import redis.asyncio as aioredis
from kvharness import Adapter, Spec, command_incr, main, one, queue


async def make_async(spec: Spec) -> Any:
    endpoint = spec.raw["endpoint"]
    tls = {"ssl": True, "ssl_ca_certs": endpoint["ca_file"],
           "ssl_certfile": endpoint["cert_file"], "ssl_keyfile": endpoint["key_file"]} \
        if endpoint["tls"] else {}
    client = aioredis.Redis(host=endpoint["host"], port=endpoint["port"],
                            max_connections=spec.workers,
                            password=os.environ.get("KVPERF_CLIENT_PASSWORD"), **tls)
    # redis.asyncio connects on a pool's first command, and every failed call would then be
    # counted as one operation's error until the bound: an unreachable server ran until the
    # deadline. One connection made now fails the run at once, as the sync harness's does.
    await client.ping()
    value, transaction = spec.value, spec.transaction

    async def single(batch: list[tuple[str, str]]) -> None:
        name, key = batch[0]
        await one(client, name, key, value, command_incr)

    async def pipelined(batch: list[tuple[str, str]]) -> list[Any]:
        pipe = queue(client.pipeline(transaction=transaction), batch, value, command_incr)
        return list(await pipe.execute(raise_on_error=False))

    call = single if spec.pipeline == 1 and not transaction else pipelined
    return (lambda worker: call), client.aclose


if __name__ == "__main__":
    main(Adapter("redis-py-asyncio", "redis-py", redis.__version__, ("single", "async"),
                 make_async=make_async))

"""valkey-glide (Python, asyncio API) harness: ``async`` = one GlideClient (one multiplexed
connection) with ``workers`` tasks in flight; ``single`` = one task. Pipelines as a
non-atomic ``Batch``, MULTI/EXEC as an atomic one, sent with ``exec(…, raise_on_error=False)``."""

from __future__ import annotations

import importlib.metadata
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from glide import (
    Batch,
    GlideClient,
    GlideClientConfiguration,
    NodeAddress,
    ServerCredentials,
)
from kvharness import Adapter, Spec, main, one, queue


async def make_async(spec: Spec) -> Any:
    endpoint = spec.raw["endpoint"]
    password = os.environ.get("KVPERF_CLIENT_PASSWORD")
    config = GlideClientConfiguration(
        [NodeAddress(endpoint["host"], endpoint["port"])], use_tls=endpoint["tls"],
        credentials=ServerCredentials(password) if password else None,
        request_timeout=10_000)
    client = await GlideClient.create(config)
    value, atomic = spec.value, spec.transaction

    async def single(batch: list[tuple[str, str]]) -> None:
        name, key = batch[0]
        await one(client, name, key, value)

    async def batched(batch: list[tuple[str, str]]) -> list[Any]:
        pipe = queue(Batch(is_atomic=atomic), batch, value)
        return list(await client.exec(pipe, raise_on_error=False) or [])

    call = single if spec.pipeline == 1 and not atomic else batched
    return (lambda worker: call), client.close


if __name__ == "__main__":
    main(Adapter("valkey-glide", "valkey-glide", importlib.metadata.version("valkey-glide"),
                 ("single", "async"), make_async=make_async))

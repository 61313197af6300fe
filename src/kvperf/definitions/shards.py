"""Definition files grouped into fleet jobs by the preload they plan (pure): files whose
plans load the same data (preload tool and argv, dataset, init commands and Lua) share a
shard, so the runner that claims it loads that data once and keeps it warm; a file with no
preload is a shard of its own. ``preload_key`` is the identity: a later snapshot cache's
own identity function can replace it without touching the queue."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from kvperf.definitions.plan import Plan


def preload_key(plan: Plan) -> str | None:
    """sha256 of the plan's preload identity (tool, argv, dataset, init commands, init
    Lua), None when the plan loads nothing before measuring."""
    preload = plan.preload
    if preload is None and plan.dataset is None and not plan.init_commands \
            and not plan.init_lua:
        return None
    identity = {"tool": preload.tool if preload else None,
                "argv": list(preload.argv) if preload else None,
                "dataset": str(plan.dataset) if plan.dataset else None,
                "init_commands": [list(c) for c in plan.init_commands],
                "init_lua": list(plan.init_lua)}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Shard:
    """Definition files run by one job: their shared preload ``key`` (the file's own name
    hashed when it has none) and the files, in corpus order."""

    key: str
    files: tuple[str, ...]


def file_key(file: str, plans: Sequence[Plan]) -> str:
    """One file's shard key: its plans' preload keys together (a file of several
    topologies that all load the same data keeps that key), else its own name's hash."""
    keys = sorted({k for k in map(preload_key, plans) if k is not None})
    if not keys or len(plans) != sum(1 for p in plans if preload_key(p) is not None):
        return hashlib.sha256(f"file:{file}".encode()).hexdigest()
    return keys[0] if len(keys) == 1 else hashlib.sha256("+".join(keys).encode()).hexdigest()


def shards(files: Sequence[tuple[str, Sequence[Plan]]], max_files: int) -> list[Shard]:
    """Files grouped by ``file_key``, each group cut into shards of at most ``max_files``
    (1: one job per definition file), in the order of each group's first file."""
    groups: dict[str, list[str]] = {}
    for file, plans in files:
        groups.setdefault(file_key(file, plans), []).append(file)
    found = []
    for key, members in groups.items():
        for start in range(0, len(members), max_files):
            part = tuple(members[start:start + max_files])
            found.append(Shard(key if start == 0 else f"{key}.{start // max_files}", part))
    return found

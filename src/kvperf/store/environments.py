"""The environments of stored revisions: each revision's runs' ``env`` (the runs table), for
the environment marks of history (analysis/envdiff.py judges what changed)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine, select

from kvperf.results.records import Env
from kvperf.store.schema import runs, trials

BATCH = 500  # revisions per query (bound parameters stay few)


def revision_envs(engine: Engine, revisions: Sequence[str]) -> dict[str, list[Env]]:
    """Revision → the env of each run that stored trials of it (runs in id order; a
    revision without runs, or whose runs kept no env, is left out)."""
    pairs: list[tuple[str, int]] = []
    with engine.connect() as conn:
        for start in range(0, len(revisions), BATCH):
            chunk = list(revisions[start:start + BATCH])
            pairs += [(str(rev), int(run)) for rev, run in conn.execute(
                select(trials.c.revision, trials.c.run_id).where(
                    trials.c.revision.in_(chunk)).distinct())]
        ids = sorted({run for _, run in pairs})
        envs: dict[int, Env] = {}
        for start in range(0, len(ids), BATCH):
            envs |= {int(i): env for i, env in conn.execute(
                select(runs.c.id, runs.c.env).where(runs.c.id.in_(ids[start:start + BATCH])))
                if isinstance(env, dict)}
    out: dict[str, list[Env]] = {}
    for rev, run in sorted(pairs, key=lambda p: p[1]):
        if run in envs:
            out.setdefault(rev, []).append(envs[run])
    return out

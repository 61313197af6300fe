"""The only package that wires the stages together.

model (options, plan, the unit-of-work protocol, the observer, the launcher and probe seams)
→ prepare (checks, exit 2 before any server) → runner (the one Runner: a side's units of
work — matrix trials, definitions' tests, module scenarios — one after another) / ab + duet
(the one interleaver of sides)."""

from kvperf.pipeline.model import Observer, Prepared, RunOptions, RunSummary
from kvperf.pipeline.prepare import prepare
from kvperf.pipeline.runner import Runner, serve

__all__ = ["Observer", "Prepared", "RunOptions", "RunSummary", "Runner", "prepare", "serve"]

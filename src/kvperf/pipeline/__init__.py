"""The only package that wires the stages together.

model (options, plan, hooks, the launcher and probe seams) → prepare (checks, exit 2 before
any server) → runner (one side, trial after trial) / ab + duet (interleaved sides)."""

from kvperf.pipeline.model import Observer, Prepared, RunOptions, RunSummary
from kvperf.pipeline.prepare import prepare
from kvperf.pipeline.runner import Runner, serve

__all__ = ["Observer", "Prepared", "RunOptions", "RunSummary", "Runner", "prepare", "serve"]

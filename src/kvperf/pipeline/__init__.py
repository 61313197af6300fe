"""The only package that wires the stages together (run: one side; ab: interleaved A/B)."""

from kvperf.pipeline.run import Observer, Prepared, Runner, RunOptions, RunSummary, prepare, serve

__all__ = ["Observer", "Prepared", "RunOptions", "RunSummary", "Runner", "prepare", "serve"]

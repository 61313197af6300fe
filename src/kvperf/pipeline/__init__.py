"""The only package that wires the stages together, split by what it does.

request/ (argv's flags → one checked request per subcommand) → run/ (the one engine: model,
prepare, the one Runner and its kinds of work — matrix trials, definitions' tests, module
scenarios) · sides/ (the one interleaver of sides and the interleaved workflow) ·
definitions/ (definitions' runs, alone or on sides) · bisect (runs sides or definitions) ·
read/ (stored results read and rendered; imports none of run/, sides/, definitions/) ·
world (the seams both sides touch the world through: builds, servers, the database)."""

from kvperf.pipeline.run.model import Observer, Prepared, RunSummary
from kvperf.pipeline.run.prepare import prepare
from kvperf.pipeline.run.runner import Runner, serve

__all__ = ["Observer", "Prepared", "RunOptions", "RunSummary", "Runner", "prepare", "serve"]

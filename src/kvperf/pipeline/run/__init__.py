"""The run side's one engine and its kinds of work: the model (options, `Work`, `Batch`, the
one `Observer`, `RunSummary`, the `Launcher`/`Probe` seams), the input checks (prepare, quick,
gates, duet's), the one `Runner`, the three kinds of work (trial_run: matrix trials;
definition_work: a definition's tests; modules: module scenarios), what a work measures
(executed, instructions, profiling, flamediff), the run's builds, live store and logs, and
`kvperf run` on one server (single). It starts servers; pipeline/read/ never imports it."""

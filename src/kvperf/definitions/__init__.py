"""Benchmark definitions as input: redis-benchmarks-specification 0.4 and redisbench-admin 0.2.

YAML files → typed ``Definition`` (``parse``, ``loader``, ``defaults``) → selection
(``selection``) → one ``Plan`` or ``Refusal`` per definition × topology (``plan``, with
``client`` / ``memtier`` for the tools and ``topology`` for setups). ``kpis``, ``exporter``
and ``jsonpath`` evaluate results; ``dryrun`` prints a dry run. Only ``loader`` reads files.
"""

"""YAML benchmark definitions as runs: their plans prepared for the runner (definitions),
`run --definitions`, and the definitions' tests on several sides (definition_sides,
definition_runs: compare --definitions, bisect --definitions batches)."""

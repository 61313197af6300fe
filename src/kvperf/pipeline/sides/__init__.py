"""Interleaved sides (compare, noise, run --commits, N-server compares, bisect batches): the
one interleaver (ab), the sides prepared and planned (sides), and the workflow that builds,
prepares and runs them with the live store (interleaved)."""

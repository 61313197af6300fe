"""Benchmarks of kvperf itself (scripts run directly; a package only so import-linter can check
what they import)."""

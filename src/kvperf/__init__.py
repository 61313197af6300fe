"""kvperf: performance benchmarking for Valkey and other Redis-protocol servers."""

__version__ = "0.1.0"

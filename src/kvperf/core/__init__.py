"""Errors, units and identities shared by every stage (no I/O)."""

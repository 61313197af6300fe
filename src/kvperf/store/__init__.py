"""Persistence: result files (and, later, SQLite/PostgreSQL)."""

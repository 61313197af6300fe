"""Persistence: result files (metrics.json rows written atomically after every trial) and the
SQLAlchemy store on SQLite (the default) or PostgreSQL: schema and migrations, pushes, history
and series queries, change points, the commit-tracking queue, and the deadline that keeps a
hung database from stalling a run. The only package that imports SQLAlchemy."""

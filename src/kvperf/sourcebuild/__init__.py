"""Servers built from source: a git mirror per repository, one worktree per commit, make,
and the build cache keyed by (sha, make arguments); also the commit lists of tracking."""

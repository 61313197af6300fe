"""Builds of any commit (git mirror, worktrees, make, cache): arrives with the compare work."""

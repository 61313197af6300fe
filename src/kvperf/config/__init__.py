"""Typed benchmark configuration: the command catalogue, the models and their loading."""

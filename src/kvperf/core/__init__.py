"""Shared by every stage: errors, units, ids (no I/O), and the two neutral side effects every
stage below needs, running a process (``proc``) and running git (``git``)."""

"""Every kvperf command imports kvperf.cli.main first: what it imports, every command pays
for at start-up (the suite alone starts kvperf ~700 times). scipy (~0.3-0.5 s of CPU here)
and psycopg are imported where they are used, never by the command line's modules — a
module-level ``from scipy import stats`` in kvperf.analysis.knee once brought scipy.stats
back into every start."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("scipy", "psycopg")


def test_the_command_line_starts_without_scipy_or_psycopg() -> None:
    probe = ("import sys, kvperf.cli.main; "
             "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    loaded = set(done.stdout.split())
    assert "kvperf" in loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))

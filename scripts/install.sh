#!/usr/bin/env bash
# Installs kvperf into ./.venv: a thin wrapper around `pip install -e .`, whose build
# (setuptools-rust, see pyproject.toml) also compiles the load generator kvload with cargo
# --release and puts it in .venv/bin beside kvperf. Idempotent: a second run changes nothing
# (cargo rebuilds only what changed). `pip install .` alone does the same into any environment.
# Usage: scripts/install.sh [--test]   (--test adds the test/lint dependencies)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"   # rustup's cargo, absent from PATH in non-login shells

PYTHON=${PYTHON:-python3}
extras=""
[ "${1:-}" = "--test" ] && extras="[test]"

if [ ! -x .venv/bin/python ]; then
    echo "kvperf: creating .venv" >&2
    "$PYTHON" -m venv .venv
fi
echo "kvperf: pip install -e .${extras} (builds kvload and kvflame with cargo --release)" >&2
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extras}"
# An editable install leaves kvperf's own modules uncompiled, and where the environment sets
# PYTHONDONTWRITEBYTECODE nothing ever caches them: every kvperf command then compiled ~220
# modules at startup (~0.2 s of CPU each time). Compile them once here (stale ones only).
.venv/bin/python -m compileall -q src/kvperf >/dev/null

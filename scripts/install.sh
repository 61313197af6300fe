#!/usr/bin/env bash
# Installs kvperf into ./.venv (Python package + its pinned dependencies) and builds the
# native load generator kvload into .venv/bin. Idempotent: a second run changes nothing.
# Usage: scripts/install.sh [--test]   (--test adds the test/lint dependencies)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

PYTHON=${PYTHON:-python3}
extras=""
[ "${1:-}" = "--test" ] && extras="[test]"

if [ ! -x .venv/bin/python ]; then
    echo "kvperf: creating .venv" >&2
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extras}"

if [ -f crates/kvload/Cargo.toml ]; then
    if ! command -v cargo >/dev/null; then
        echo "kvperf: cargo not found; install Rust (rustup) to build kvload" >&2
        exit 1
    fi
    echo "kvperf: building kvload (cargo build --release)" >&2
    cargo build -q --release --manifest-path crates/kvload/Cargo.toml
    install -m 755 crates/kvload/target/release/kvload .venv/bin/kvload
fi

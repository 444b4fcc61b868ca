#!/usr/bin/env python3
"""Tables of docs/replication.md, "Measured here", from bench/replication.sh's results.

usage: bench/replication-table.py OUT PREFIX MODE [MODE...]

Reads OUT/PREFIX-r<round>-<mode>/run.json and prints markdown tables: per step and mode the
figure of each round in round order ("r1 / r2 / r3"), for the throughput, the server's CPU
per op, the DBMS's WAL (or InnoDB redo) bytes per row, the query steps' background-insert
SLA, and with a replica the heartbeat's lag max / p99, catch-up and the DBMS's own view.
Then OUT/loads.tsv's load averages per run. Figures are printed as run.json holds them,
rounded only to the decimals shown.
"""
import json
import os
import re
import sys


def load_runs(out, prefix, modes):
    runs = {}
    for name in sorted(os.listdir(out)):
        m = re.fullmatch(re.escape(prefix) + r"-r(\d+)-(.+)", name)
        if not m or m.group(2) not in modes:
            continue
        path = os.path.join(out, name, "run.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            runs.setdefault(m.group(2), []).append((int(m.group(1)), json.load(f)))
    for mode in runs:
        runs[mode].sort(key=lambda x: x[0])
    return runs


def steps_of(runs):
    names = []
    for rs in runs.values():
        for _, run in rs:
            for s in run["steps"]:
                if s["name"] not in names:
                    names.append(s["name"])
    return names


def step(run, name):
    for s in run["steps"]:
        if s["name"] == name:
            return s
    return None


def metric(s, key):
    m = (s or {}).get("metrics") or {}
    v = m.get(key)
    if v is None:
        v = ((m.get("dbms") or {}).get(key))
    if isinstance(v, dict):
        v = v.get("value")
    return v


def fmt(v, dec=0):
    if v is None:
        return "–"
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "pass" if v else "FAIL"
    if dec == 0:
        return f"{v:,.0f}"
    return f"{v:,.{dec}f}"


def table(title, runs, modes, names, get, dec=0):
    print(f"\n{title}\n")
    print("| step | " + " | ".join(modes) + " |")
    print("|---|" + "---:|" * len(modes))
    for n in names:
        cells = []
        for mode in modes:
            vals = [fmt(get(step(run, n)), dec) for _, run in runs.get(mode, [])]
            cells.append(" / ".join(vals) if vals else "–")
        if all(c.replace(" / ", "").replace("–", "") == "" for c in cells):
            continue
        print(f"| {n} | " + " | ".join(cells) + " |")


def repl(s, key):
    r = (s or {}).get("replication") or {}
    return r.get(key)


def dbms(s, key):
    r = (s or {}).get("replication") or {}
    return (r.get("dbms") or {}).get(key)


def hb_against_replay_lag(runs, modes, names):
    """Per run and step: the heartbeat's max lag less PostgreSQL's largest replay_lag."""
    diffs = []
    for m in modes:
        for r, run in runs[m]:
            for n in names:
                s = step(run, n)
                hb, rl = repl(s, "lag_max_ms"), dbms(s, "replay_lag_max_ms")
                if hb is not None and rl is not None:
                    diffs.append((m, r, n, hb, rl, hb - rl))
    if not diffs:
        return
    print("\nHeartbeat lag max against replay_lag max, ms (heartbeat - replay_lag):\n")
    print("| mode | round | step | heartbeat max | replay_lag max | difference |")
    print("|---|---:|---|---:|---:|---:|")
    for m, r, n, hb, rl, d in diffs:
        print(f"| {m} | {r} | {n} | {hb:,.1f} | {rl:,.1f} | {d:+,.1f} |")
    ad = sorted(abs(d[5]) for d in diffs)
    within = sum(1 for x in ad if x <= 100.0)
    print(f"\n{len(ad)} step pairs; |difference| <= 100 ms in {within}; median |difference| "
          f"{ad[len(ad) // 2]:,.1f} ms; largest {ad[-1]:,.1f} ms")


def main():
    out, prefix, modes = sys.argv[1], sys.argv[2], sys.argv[3:]
    runs = load_runs(out, prefix, modes)
    names = steps_of(runs)
    print("Rounds per mode:", {m: [r for r, _ in runs.get(m, [])] for m in modes})
    table("Throughput (rows/s or queries/s)", runs, modes, names,
          lambda s: (s or {}).get("throughput"))
    table("Server CPU µs per op (cpupq)", runs, modes, names, lambda s: metric(s, "cpupq"), 1)
    table("WAL bytes per inserted row (walbpi)", runs, modes, names,
          lambda s: metric(s, "walbpi"), 1)
    table("InnoDB redo bytes per inserted row (redobpi)", runs, modes, names,
          lambda s: metric(s, "redobpi"), 1)
    table("Background-insert SLA (achieved rows/s; FAIL below 95% of target)", runs, modes,
          names, lambda s: None if not (s or {}).get("sla") else
          f"{s['sla']['achieved_rows_per_sec']:,.0f}{'' if s['sla']['passed'] else ' FAIL'}")
    rmodes = [m for m in modes if m in runs and any(
        (st.get("replication") for _, run in runs[m] for st in run["steps"]))]
    table("Heartbeat lag max ms", runs, rmodes, names, lambda s: repl(s, "lag_max_ms"), 1)
    table("Heartbeat lag p99 ms", runs, rmodes, names, lambda s: repl(s, "lag_p99_ms"), 1)
    table("Catch-up after the step, s", runs, rmodes, names,
          lambda s: repl(s, "catch_up_seconds"), 2)
    table("Replica CPU µs per row written (replica_cpu_us_per_row)", runs, rmodes, names,
          lambda s: repl(s, "replica_cpu_us_per_row"), 1)
    table("Replica applied bytes per row written (applied_bytes_per_row)", runs, rmodes, names,
          lambda s: repl(s, "applied_bytes_per_row"), 1)
    table("DBMS: pg_stat_replication.replay_lag max ms", runs, rmodes, names,
          lambda s: dbms(s, "replay_lag_max_ms"), 1)
    table("DBMS: replay bytes behind max", runs, rmodes, names,
          lambda s: dbms(s, "replay_bytes_behind_max"))
    table("DBMS: Seconds_Behind_Master max", runs, rmodes, names,
          lambda s: dbms(s, "seconds_behind_master_max"))
    table("DBMS: GTID transactions behind max", runs, rmodes, names,
          lambda s: dbms(s, "transactions_behind_max"))
    hb_against_replay_lag(runs, rmodes, names)
    print("\nIntegrity after l.i2 (replica against primary):")
    for m in rmodes:
        for r, run in runs[m]:
            s = step(run, "l.i2")
            i = repl(s, "integrity")
            print(f"  {m} r{r}: {None if i is None else i.get('ok')}")
    print("\nRuns in order, load averages (1, 5, 15 min) before / after:\n")
    print("| run | UTC | load before | load after | exit |")
    print("|---|---|---|---|---:|")
    path = os.path.join(out, "loads.tsv")
    if os.path.exists(path):
        with open(path) as f:
            for line in f.read().splitlines()[1:]:
                p = line.split("\t")
                if p[0].startswith(prefix + "-"):
                    t0, t1 = p[1].replace("T", " ")[:-1], p[3].split("T")[1][:-1]
                    print(f"| {p[0]} | {t0} - {t1} | {p[2]} | {p[4]} | {p[5]} |")


if __name__ == "__main__":
    main()

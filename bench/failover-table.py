#!/usr/bin/env python3
"""The table of docs/failover.md, "Measured here".

usage: bench/failover-table.py OUT

Reads OUT/*/run.json (the runs of bench/failover.sh) and prints one markdown row per run from
the `failover` object of its last step: the loss and the promotion, the writers' and readers'
unavailability, failed statements and reconnects, the rate before and the seconds until it was
back, the latency around the event, and the audit (acknowledged keys audited and lost,
unacknowledged keys audited and present). Then OUT/loads.tsv. Figures are printed as run.json
holds them, rounded; "-" is a null.
"""
import json
import os
import sys


def num(v, digits=1):
    if v is None:
        return "-"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:,.{digits}f}"


def row(name, run):
    if not run.get("steps"):
        return f"| {name} | no step measured ({run.get('status')}) |" + " |" * 11
    step = run["steps"][-1]
    f = step.get("failover")
    ins = step.get("ops", {}).get("insert", {})
    if f is None:
        return f"| {name} | {step['name']} {step['status']}: no failover recorded |" + " |" * 11
    a = f.get("audit") or {}
    fs = f.get("failed_statements") or {}
    failed = ", ".join(f"{k} {v}" for k, v in sorted(fs.items()) if v) or "0"
    cells = [
        name,
        f"{step['name']} {num(step.get('seconds'))} s, {step['status']}",
        num(f.get("loss_at_second")),
        num(f.get("promoted_at_second")),
        num(f.get("writers_unavailable_seconds"), 2),
        num(f.get("readers_unavailable_seconds"), 2),
        failed,
        num(f.get("reconnects")),
        num(f.get("rate_before_per_sec"), 0),
        num(f.get("recovery_seconds")),
        f"{num(f.get('latency_p99_us', 0) / 1000 if f.get('latency_p99_us') is not None else None, 0)}"
        f" / {num(f.get('latency_max_us', 0) / 1000 if f.get('latency_max_us') is not None else None, 0)}",
        f"{num(a.get('acknowledged_rows_lost'))} of {num(a.get('acknowledged_keys_audited'))}"
        if a
        else "-",
        f"{num(a.get('unacknowledged_rows_present'))} of {num(a.get('unacknowledged_keys_audited'))}"
        if a
        else "-",
    ]
    err = f.get("error") or a.get("error")
    if err:
        cells[1] += f" ({err})"
    if ins:
        cells[1] += f", {num(ins.get('rows'))} rows"
    return "| " + " | ".join(cells) + " |"


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    out = sys.argv[1]
    names = sorted(
        n for n in os.listdir(out) if os.path.isfile(os.path.join(out, n, "run.json"))
    )
    print(
        "| run | step | lost at s | promoted at s | writes unavailable s | reads unavailable s"
        " | failed statements | reconnects | rate before rows/s | rate back after s"
        " | latency p99 / max ms | acknowledged rows lost | unacknowledged rows present |"
    )
    print("|---|---|" + "---:|" * 11)
    for n in names:
        with open(os.path.join(out, n, "run.json")) as fh:
            print(row(n, json.load(fh)))
    loads = os.path.join(out, "loads.tsv")
    if os.path.exists(loads):
        print()
        print("| run | UTC | load before | load after | exit |")
        print("|---|---|---|---|---:|")
        with open(loads) as fh:
            next(fh)
            for line in fh:
                r, t0, l0, t1, l1, rc = line.rstrip("\n").split("\t")
                print(f"| {r} | {t0} - {t1[11:]} | {l0} | {l1} | {rc} |")


if __name__ == "__main__":
    main()

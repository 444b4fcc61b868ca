#!/usr/bin/env python3
"""Power of ibench check's rule from real repeats (docs/method.md, "The verdict rule"):
the 12 identical runs of a matrix (servers' configs `base` and `same`, 6 repeats each) split
at random into n base and n candidate repeats, the candidate's figures moved by a known change
(throughput x (1-c), WAL bytes/row x (1+c)), then `ibench check --format json`. Seeded, so it
reruns the same.

Usage: scripts/check-power.py IBENCH MATRIX_OUT_DIR  (writes check-power.json here)"""
import json, os, random, shutil, subprocess, sys
IB = sys.argv[1]
SRC = sys.argv[2] + '/cells'
pool = [f'{SRC}/pg.{c}.ci.r{i}/run' for c in ('base', 'same') for i in range(1, 7)]
WORK = 'check-power-work'
FIG = [('l.i0', 'throughput'), ('l.i2', 'throughput'), ('qr100', 'throughput'), ('qp100', 'throughput'),
       ('l.i0', 'walbpi'), ('qr100', 'walbpi')]
def copy(src, dst, label, c):
    shutil.copytree(src, dst)
    p = f'{dst}/run.json'
    r = json.load(open(p))
    r['label'] = label
    for s in r['steps']:
        s['throughput'] *= (1 - c)
        d = ((s.get('metrics') or {}).get('dbms') or {})
        if isinstance(d.get('walbpi'), dict) and 'value' in d['walbpi']:
            d['walbpi']['value'] *= (1 + c)
    json.dump(r, open(p, 'w'))
rng = random.Random(42)
res = {}
for n in (3, 5):
    for c in (0.0, 0.02, 0.05, 0.10, 0.20):
        for draw in range(20 if (n, c) == (3, 0.0) else 8):
            pick = rng.sample(pool, 2 * n)
            shutil.rmtree(WORK, ignore_errors=True)
            dirs = []
            for i, src in enumerate(pick):
                side = 'base' if i < n else 'cand'
                d = f'{WORK}/{side}{i}'
                copy(src, d, side, 0.0 if side == 'base' else c)
                dirs.append(d)
            out = subprocess.run([IB, 'check', '--base', 'base', '--format', 'json', *dirs], capture_output=True)
            v = json.loads(out.stdout)
            for x in v['pairs'][0]['verdicts']:
                k = (x['step'], x['figure'])
                if k in FIG:
                    res.setdefault((n, c, k), []).append(x['verdict'])
            res.setdefault((n, c, 'exit'), []).append(v['exit_code'])
        print(n, c, file=sys.stderr, flush=True)
        json.dump({f'{a}|{b}|{k}': vs for (a, b, k), vs in res.items()}, open('check-power.json', 'w'))
out = {}
for (n, c, k), vs in res.items():
    out[f'{n}|{c}|{k}'] = vs
json.dump(out, open('check-power.json', 'w'), indent=0)

#!/usr/bin/env python3
"""The same PostgreSQL 15 server config against itself on a host made noisy on purpose:
sequential-interleaved rounds against duet rounds (docs/method.md, "Duet runs: measured").

A seeded background load switches between 0, 1 and 2 busy cores every few seconds (this
script starts it and stops it, however it ends). Under it, one matrix per mode runs two
identical configs (`a` and `b`: the same settings) of Debian's PostgreSQL 15:
  interleaved  order = "interleaved": a round runs a then b (b then a the next round);
  duet         order = "duet": a round runs a and b at the same time, a barrier at each step;
  duet-pin     the same, each side pinned to its own half of the CPUs (pin = true).
Then, per step: the standard error of the per-round log ratio ln(b/a), unpaired (the two
sides' repeats as independent samples, what Welch's t sees) and paired (the per-round
differences); for the duets on the seconds both sides ran (each step cut to the whole seconds
both ran, as `ibench check` does). Also the false regressions and the power of a paired rule
on these rounds (a change applied to one side's figures, as scripts/check-power.py does).

Usage:
  bench/duet-noise.py run IBENCH OUT [--rounds 6] [--seed 7] [--modes interleaved,duet,duet-pin]
  bench/duet-noise.py analyse OUT        (again, from the results in OUT)
  bench/duet-noise.py noise SEED SECONDS_PER_SWITCH LOG   (the background load alone)
"""
import itertools, json, math, os, random, signal, statistics, subprocess, sys, time

BINDIR = '/usr/lib/postgresql/15/bin'
WORKLOAD = """[workloads.w]
load_rows = 300_000
i1_rows = 30_000
query_seconds = 8
settle_seconds = 0
steps = ["l.i0", "l.x", "l.i1", "qr100", "qp100"]
"""


def matrix_text(mode, rounds, extra=''):
    order = 'interleaved' if mode == 'interleaved' else 'duet'
    pin = 'pin = true\n' if mode == 'duet-pin' else ''
    return f"""repeats = {rounds}
order = "{order}"
{pin}[servers.pg]
kind = "postgres"
bindir = "{BINDIR}"
[configs.postgres]
include_base = false
variants.a = {{ work_mem = "4MB"{extra} }}
variants.b = {{ work_mem = "4MB"{extra} }}
{WORKLOAD}"""


# ---- the background load -------------------------------------------------------------
def noise(seed, every, log):
    """Every `every` seconds: 0, 1 or 2 busy processes, chosen by a seeded generator."""
    rng = random.Random(seed)
    busy = []
    stop = {'now': False}

    def bye(*_):
        stop['now'] = True
    signal.signal(signal.SIGTERM, bye)
    signal.signal(signal.SIGINT, bye)
    with open(log, 'a') as f:
        while not stop['now']:
            k = rng.choice([0, 1, 2])
            while len(busy) > k:
                p = busy.pop()
                p.kill()
                p.wait()
            while len(busy) < k:
                busy.append(subprocess.Popen(['sh', '-c', 'while :; do :; done']))
            f.write(f'{time.time():.1f} {k}\n')
            f.flush()
            t = time.time() + every
            while not stop['now'] and time.time() < t:
                time.sleep(0.1)
    for p in busy:
        p.kill()
        p.wait()


# ---- the runs ------------------------------------------------------------------------
def uptime():
    return open('/proc/loadavg').read().split()[:3]


def run(ibench, out, rounds, seed, modes):
    os.makedirs(out, exist_ok=True)
    meta = {'started': time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()), 'rounds': rounds,
            'seed': seed, 'modes': modes, 'load_before': uptime(), 'workload': WORKLOAD}
    nz = subprocess.Popen([sys.executable, __file__, 'noise', str(seed), '3', f'{out}/noise.log'])
    try:
        for mode in modes:
            d = f'{out}/{mode}'
            os.makedirs(d, exist_ok=True)
            with open(f'{d}/matrix.toml', 'w') as f:
                f.write(matrix_text(mode, rounds))
            t0 = time.time()
            with open(f'{d}/log.txt', 'w') as log:
                subprocess.run([ibench, 'matrix', 'run', f'{d}/matrix.toml', '--out', f'{d}/out'],
                               stdout=log, stderr=log)
            meta[f'{mode}_seconds'] = round(time.time() - t0)
            meta[f'load_after_{mode}'] = uptime()
    finally:
        nz.terminate()
        nz.wait()
    meta['ended'] = time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())
    json.dump(meta, open(f'{out}/meta.json', 'w'), indent=1)
    analyse(out)


# ---- the analysis --------------------------------------------------------------------
def rfc(t):
    from datetime import datetime
    return datetime.strptime(t.rstrip('Z'), '%Y-%m-%dT%H:%M:%S.%f').timestamp()


def load(d):
    r = json.load(open(f'{d}/run.json'))
    tl = [json.loads(l) for l in open(f'{d}/timeline.jsonl') if l.strip()]
    return r, tl


def main_op(step):
    if step.startswith('l.i'):
        return 'insert'
    return {'l.x': None, 'qr100': 'range_query', 'qp100': 'point_query'}.get(step)


def counts(r, tl, step):
    s = next(x for x in r['steps'] if x['name'] == step)
    op = main_op(step)
    if op is None:
        return s, []
    key = 'rows' if op == 'insert' else 'ops'
    return s, [(l['second'], (l['ops'].get(op) or {}).get(key, 0)) for l in tl
               if l['step'] == step and l['second'] <= s['seconds']]


def rates(a, b, step, duet):
    """The two sides' rates of a step in one round: over the whole step, or (duet) over the
    whole seconds both ran, as ibench check's duet cut does."""
    (ra, ta), (rb, tb) = a, b
    sa, ca = counts(ra, ta, step)
    sb, cb = counts(rb, tb, step)
    if not duet or not ca or not cb:
        return sa['throughput'], sb['throughput']
    shift = round(rfc(sb['started_at']) - rfc(sa['started_at']))
    cbm = dict(cb)
    pairs = [(x, cbm[s - shift]) for s, x in ca if (s - shift) in cbm]
    if not pairs:
        return sa['throughput'], sb['throughput']
    n = len(pairs)
    return sum(p[0] for p in pairs) / n, sum(p[1] for p in pairs) / n


def rounds_of(out, mode):
    cells = f'{out}/{mode}/out/cells'
    rs = []
    for i in itertools.count(1):
        da, db = f'{cells}/pg.a.w.r{i}/run', f'{cells}/pg.b.w.r{i}/run'
        if not (os.path.exists(f'{da}/run.json') and os.path.exists(f'{db}/run.json')):
            break
        a, b = load(da), load(db)
        if a[0]['status'] != 'completed' or b[0]['status'] != 'completed':
            continue
        rs.append((a, b))
    return rs


def se_unpaired(la, lb):
    return math.sqrt(statistics.variance(la) / len(la) + statistics.variance(lb) / len(lb))


def se_paired(d):
    return statistics.stdev(d) / math.sqrt(len(d))


def t90(df):
    # one-sided 95% quantiles of Student's t (a 90% two-sided interval)
    table = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 7: 1.895, 8: 1.860,
             9: 1.833, 10: 1.812, 11: 1.796, 12: 1.782, 15: 1.753, 20: 1.725}
    return table.get(df) or table[min(table, key=lambda k: abs(k - df))]


def paired_verdict(d, tau=math.log(1.05)):
    """The paired rule: the 90% t interval of the mean per-round log ratio (b over a, higher
    is better): regressed when wholly below -tau, no change when inside ±tau."""
    n = len(d)
    m = statistics.mean(d)
    h = t90(n - 1) * statistics.stdev(d) / math.sqrt(n)
    if m + h < -tau:
        return 'regressed'
    if m - h > tau:
        return 'improved'
    if -tau < m - h and m + h < tau:
        return 'no change'
    return 'cannot tell'


def analyse(out):
    meta = json.load(open(f'{out}/meta.json')) if os.path.exists(f'{out}/meta.json') else {}
    res = {'meta': meta, 'steps': {}, 'power': {}, 'false': {}}
    per_mode = {}
    for mode in ('interleaved', 'duet', 'duet-pin'):
        rs = rounds_of(out, mode)
        if len(rs) < 2:
            continue
        duet = mode != 'interleaved'
        per_mode[mode] = {}
        for step in [x['name'] for x in rs[0][0][0]['steps']]:
            pairs = [rates(a, b, step, duet) for a, b in rs]
            la = [math.log(x) for x, _ in pairs]
            lb = [math.log(y) for _, y in pairs]
            d = [y - x for x, y in zip(la, lb)]
            per_mode[mode][step] = d
            spread = lambda v: max(v) / min(v) - 1
            res['steps'][f'{mode}|{step}'] = {
                'rounds': len(pairs), 'mean_log_ratio': statistics.mean(d),
                'se_unpaired': se_unpaired(la, lb), 'se_paired': se_paired(d),
                'a_spread': spread([x for x, _ in pairs]), 'b_spread': spread([y for _, y in pairs])}
    # False regressions and power of the paired rule: every 3-round subset (and 5, when
    # there are enough rounds), b's figures moved by a known change c.
    for mode, steps in per_mode.items():
        for step, d in steps.items():
            for k in (3, 5):
                if len(d) < k:
                    continue
                subs = list(itertools.combinations(range(len(d)), k))
                for c in (0.0, 0.05, 0.10, 0.20):
                    shift = math.log(1 - c)
                    vs = [paired_verdict([d[i] + shift for i in s]) for s in subs]
                    res['power'][f'{mode}|{step}|{k}|{c}'] = {
                        'subsets': len(vs), 'regressed': vs.count('regressed'),
                        'no change': vs.count('no change'), 'cannot tell': vs.count('cannot tell'),
                        'improved': vs.count('improved')}
    json.dump(res, open(f'{out}/summary.json', 'w'), indent=1)
    print('mode         step    rounds  mean ln(b/a)  SE unpaired  SE paired  spread a  spread b')
    for k, v in res['steps'].items():
        mode, step = k.split('|')
        print(f"{mode:12} {step:7} {v['rounds']:6}  {v['mean_log_ratio']:+11.3f}  "
              f"{v['se_unpaired']:11.3f}  {v['se_paired']:9.3f}  {v['a_spread']:7.0%}  {v['b_spread']:7.0%}")
    print('\npaired rule (90% t interval, ±5%) on k-round subsets; b moved by -c:')
    print('mode         step    k  c     subsets regressed  no-change  cannot-tell  improved')
    for k, v in res['power'].items():
        mode, step, n, c = k.split('|')
        print(f"{mode:12} {step:7} {n}  {float(c):4.2f}  {v['subsets']:7} {v['regressed']:9} "
              f"{v['no change']:10} {v['cannot tell']:12} {v['improved']:9}")


if __name__ == '__main__':
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    if a[0] == 'noise':
        noise(int(a[1]), float(a[2]), a[3])
    elif a[0] == 'analyse':
        analyse(a[1])
    elif a[0] == 'run':
        opts = dict(zip(a[3::2], a[4::2]))
        run(a[1], a[2], int(opts.get('--rounds', 6)), int(opts.get('--seed', 7)),
            opts.get('--modes', 'interleaved,duet,duet-pin').split(','))
    else:
        sys.exit(__doc__)

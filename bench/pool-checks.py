#!/usr/bin/env python3
"""Judges the pools of bench/pool-run.sh with `ibench check` itself (docs/method.md, "Duet
runs: the second measurement": the same against the same, 20 checks, and the power table).

The pools: one interleaved matrix and one duet matrix of the same two configs (`a`, `b`:
identical settings), up to 60 rounds each. Each pool's completed rounds are cut into DISJOINT
sets of consecutive rounds (rounds 1-3, 4-6, ...; no run in two checks), each set made a matrix output dir of its own (the
plan's cells filtered to those rounds, the cells linked), and judged by `ibench check
--format json`:
  single       one run a side: the first round of each set of 3 of the interleaved pool,
               its two runs given as run directories (`--base LABEL`), as a user compares two runs;
  interleaved  the set's interleaved rounds as a matrix: paired by round (method paired);
  unpaired     the same interleaved runs given as run directories (`--base LABEL`): run
               directories never pair, so Welch over the same runs;
  interleaved-keep  the same, with --keep-host-affected: every repeat judged, as a duet's are;
  duet         the set's duet rounds as a matrix: each step cut to the seconds both sides ran,
               paired by round (a duet is not held to the host screening's flags).
`false` judges sets of 3 rounds as they ran (c = 0). `power` judges sets of 3, 5 and 10 rounds
with b's figures moved by a known change: b's runs copied, each step's throughput × (1 - c)
and each second's counts of the timeline × (1 - c) (a duet is judged on those), as
scripts/check-power.py does.

Usage:
  bench/pool-checks.py false IBENCH POOL [--sets 20]        -> POOL/false.json, a table
  bench/pool-checks.py power IBENCH POOL                    -> POOL/power.json, two tables
"""
import collections, json, os, shutil, subprocess, sys

STEPS = ['l.i0', 'l.x', 'l.i1', 'qr100', 'qp100']
VERDICTS = ['regressed', 'improved', 'no_change', 'cannot_tell']
MODES = ['single', 'unpaired', 'interleaved', 'interleaved-keep', 'duet']


def rounds_done(mdir):
    """The rounds whose two cells both completed."""
    plan = json.load(open(f'{mdir}/plan.json'))
    done = collections.defaultdict(set)
    for c in plan['cells']:
        st = f"{mdir}/cells/{c['name']}/state.json"
        if os.path.exists(st) and json.load(open(st))['status'] == 'completed':
            done[c['repeat']].add(c['config'])
    return sorted(r for r, cs in done.items() if cs == {'a', 'b'})


def scale_run(src, dst, c):
    """A copy of run dir src with its throughputs and per-second counts × (1 - c)."""
    shutil.copytree(src, dst, symlinks=True)
    p = f'{dst}/run.json'
    r = json.load(open(p))
    for s in r['steps']:
        if s.get('throughput') is not None:
            s['throughput'] *= (1 - c)
    json.dump(r, open(p, 'w'))
    out = []
    for line in open(f'{dst}/timeline.jsonl'):
        if not line.strip():
            continue
        t = json.loads(line)
        for v in (t.get('ops') or {}).values():
            for k in ('ops', 'rows'):
                if isinstance(v.get(k), int):
                    v[k] = int(round(v[k] * (1 - c)))
        out.append(json.dumps(t))
    open(f'{dst}/timeline.jsonl', 'w').write('\n'.join(out) + '\n')


def cell_dir(mdir, config, r):
    return f'{mdir}/cells/pg.{config}.w.r{r}'


def subset_matrix(mdir, rounds, c, dst):
    """A matrix output dir of these rounds of mdir, b's runs moved by c."""
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(f'{dst}/cells')
    plan = json.load(open(f'{mdir}/plan.json'))
    plan['cells'] = [x for x in plan['cells'] if x['repeat'] in rounds]
    plan['repeats'] = len(rounds)
    json.dump(plan, open(f'{dst}/plan.json', 'w'), indent=1)
    for f in ('shard.json', 'matrix.toml'):
        if os.path.exists(f'{mdir}/{f}'):
            shutil.copy(f'{mdir}/{f}', dst)
    for r in rounds:
        for config in ('a', 'b'):
            src = os.path.abspath(cell_dir(mdir, config, r))
            name = os.path.basename(src)
            if config == 'b' and c:
                os.makedirs(f'{dst}/cells/{name}')
                for f in os.listdir(src):
                    if f != 'run':
                        os.symlink(f'{src}/{f}', f'{dst}/cells/{name}/{f}')
                scale_run(f'{src}/run', f'{dst}/cells/{name}/run', c)
            else:
                os.symlink(src, f'{dst}/cells/{name}')
    return [dst]


def subset_runs(mdir, rounds, c, dst):
    """The runs of these rounds as run directories (never paired: Welch), b's moved by c."""
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    dirs = []
    for r in rounds:
        for config in ('a', 'b'):
            src = os.path.abspath(f'{cell_dir(mdir, config, r)}/run')
            d = f'{dst}/{config}{r}'
            if config == 'b' and c:
                scale_run(src, d, c)
            else:
                os.symlink(src, d)
            dirs.append(d)
    return ['--base', 'PostgreSQL 15.18 a', *dirs]


def check(ib, args):
    p = subprocess.run([ib, 'check', '--format', 'json', *args], capture_output=True, text=True)
    if not p.stdout.strip():
        sys.exit(f'ibench check {" ".join(args)}: exit {p.returncode}: {p.stderr.strip()}')
    v = json.loads(p.stdout)
    figs = [{k: x.get(k) for k in ('step', 'figure', 'kind', 'verdict', 'reason', 'ratio',
                                    'interval', 'method')}
            for x in v['pairs'][0]['verdicts']]
    return {'exit': p.returncode, 'figures': figs}


def judged(ib, pool, mode, rounds, c, work):
    if mode == 'duet':
        args = subset_matrix(f'{pool}/duet', rounds, c, work)
    elif mode == 'interleaved':
        args = subset_matrix(f'{pool}/interleaved', rounds, c, work)
    elif mode == 'interleaved-keep':  # paired, every repeat judged (as a duet is)
        args = ['--keep-host-affected', *subset_matrix(f'{pool}/interleaved', rounds, c, work)]
    else:  # single, unpaired: run directories of the interleaved pool
        args = subset_runs(f'{pool}/interleaved', rounds, c, work)
    return check(ib, args)


def sets(pool, k, most, mode):
    """Disjoint sets of k consecutive rounds done in the mode's pool (the duet's for a duet,
    the interleaved one's otherwise): rounds 1..k, k+1..2k, ..."""
    done = rounds_done(f"{pool}/{'duet' if mode == 'duet' else 'interleaved'}")
    out = []
    for i in range(0, len(done) - k + 1, k):
        s = done[i:i + k]
        if s == list(range(s[0], s[0] + k)):
            out.append(s)
    return out[:most]


def tally(results):
    """Per kind (rate, work): figures by verdict; checks by exit code."""
    t = {'exit': collections.Counter(r['exit'] for r in results)}
    for kind in ('rate', 'work'):
        t[kind] = collections.Counter(f['verdict'] for r in results for f in r['figures']
                                      if f['kind'] == kind)
    t['rate_reasons'] = collections.Counter(
        f"{f['verdict']}:{f['reason']}" for r in results for f in r['figures'] if f['kind'] == 'rate')
    # A "cannot tell: host-affected" whose interval lies wholly beyond ±5%: a call the host
    # screening held back (a duet is not held to it).
    def beyond(f):
        lo, hi = f['interval'] or (None, None)
        return lo is not None and (lo > 1.05 or hi < 1 / 1.05 or lo > 1 / 0.95 or hi < 0.95)
    t['held_by_host_screening'] = collections.Counter(
        f"{f['step']} {f['figure']}" for r in results for f in r['figures']
        if f['kind'] == 'rate' and f['reason'] == 'host_affected' and beyond(f))
    return {k: dict(v) for k, v in t.items()}


def false_checks(ib, pool, nsets):
    work = f'{pool}/work-false'
    res = {'sets': {m: sets(pool, 3, nsets, m) for m in MODES}}
    for mode in MODES:
        rs = []
        for s in res['sets'][mode]:
            rounds = s[:1] if mode == 'single' else s
            rs.append(judged(ib, pool, 'single' if mode == 'single' else mode, rounds, 0.0, work))
        res[mode] = {'checks': rs, 'tally': tally(rs)}
        t = res[mode]['tally']
        print(f"{mode:12} {len(rs)} checks  exit {t['exit']}  rates {t['rate']}  work {t['work']}")
        print(f"{'':12} rate reasons {t['rate_reasons']}")
        print(f"{'':12} rates beyond ±5% held by the host screening {t['held_by_host_screening']}")
    shutil.rmtree(work, ignore_errors=True)
    json.dump(res, open(f'{pool}/false.json', 'w'), indent=1)
    print('\n| checks of | checks | exit 0 / 1 / 3 | rates: regressed / improved / no change / '
          'cannot tell | work per op: regressed / improved / no change / cannot tell |')
    print('|---|---|---|---|---|')
    for mode in MODES:
        t = res[mode]['tally']
        e = '/'.join(str(t['exit'].get(x, 0)) for x in (0, 1, 3))
        r = ' / '.join(str(t['rate'].get(x, 0)) for x in VERDICTS)
        w = ' / '.join(str(t['work'].get(x, 0)) for x in VERDICTS)
        print(f"| {mode} | {len(res[mode]['checks'])} | {e} | {r} | {w} |")


def power(ib, pool):
    work = f'{pool}/work-power'
    res = {}
    for k, most in ((3, 20), (5, 12), (10, 6)):
        for c in (0.0, 0.05, 0.10, 0.20):
            for mode in MODES[1:]:
                rs = [judged(ib, pool, mode, s, c, work) for s in sets(pool, k, most, mode)]
                cell = {}
                for step in STEPS:
                    vs = [f['verdict'] for r in rs for f in r['figures']
                          if f['step'] == step and f['figure'] == 'throughput']
                    cell[step] = dict(collections.Counter(vs))
                cell['exit'] = dict(collections.Counter(r['exit'] for r in rs))
                cell['checks'] = len(rs)
                res[f'{k}|{c}|{mode}'] = cell
                print(k, c, mode, len(rs), {s: cell[s] for s in STEPS}, file=sys.stderr, flush=True)
                json.dump({'cells': res}, open(f'{pool}/power.json', 'w'), indent=1)
    shutil.rmtree(work, ignore_errors=True)
    print('| rounds | c | method | checks | ' + ' | '.join(STEPS) + ' |')
    print('|---|---|---|---|' + '---|' * len(STEPS))
    for key, cell in res.items():
        k, c, mode = key.split('|')
        row = [f"{cell[s].get('regressed', 0)}/{cell[s].get('no_change', 0)}"
               + (f" (+{cell[s]['improved']})" if cell[s].get('improved') else '') for s in STEPS]
        print(f"| {k} | {float(c):.0%} | {mode} | {cell['checks']} | " + ' | '.join(row) + ' |')


def compact(pool):
    """The power table summed over the judged steps (l.x is too short everywhere): figures
    called regressed / no change (+ improved) out of steps × sets, one column per method."""
    cells = json.load(open(f'{pool}/power.json'))['cells']
    steps = [s for s in STEPS if s != 'l.x']
    print('| rounds | true change | ' + ' | '.join(MODES[1:]) + ' |')
    print('|---|---|' + '---|' * len(MODES[1:]))
    for k in (3, 5, 10):
        for c in (0.0, 0.05, 0.10, 0.20):
            row = []
            for mode in MODES[1:]:
                cell = cells[f'{k}|{c}|{mode}']
                n = cell['checks'] * len(steps)
                tot = collections.Counter()
                for st in steps:
                    tot.update(cell[st])
                x = f"{tot['regressed']}/{tot['no_change']} of {n}"
                row.append(x + (f" (+{tot['improved']})" if tot['improved'] else ''))
            print(f'| {k} | {c:.0%} | ' + ' | '.join(row) + ' |')


if __name__ == '__main__':
    a = sys.argv[1:]
    if len(a) < 3:
        sys.exit(__doc__)
    if a[0] == 'false':
        false_checks(a[1], a[2], int(dict(zip(a[3::2], a[4::2])).get('--sets', 20)))
    elif a[0] == 'power':
        power(a[1], a[2])
        compact(a[2])
    else:
        sys.exit(__doc__)

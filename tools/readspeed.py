#!/usr/bin/env python3
"""readspeed.py: how fast symlookup reads a .sym against wc -l and cat (issue 30, docs/performance.md).

Usage (from the project root, as root for chrt; perf from Debian's linux-perf):
    go build -o /tmp/after/ ./cmd/symlookup
    tools/readspeed.py [--file SYM] [--addr ADDR] [--runs N] NAME=SYMLOOKUP...
e.g. tools/readspeed.py before=/tmp/before/symlookup after=/tmp/after/symlookup

Runs `wc -l FILE`, `cat FILE >/dev/null` and each `SYMLOOKUP FILE ADDR` in turn, N rounds (61),
each one under `chrt -f 10` (SCHED_FIFO, so that other processes' load does not count: every run
is tens of ms) through `perf stat` (wall time elapsed, user and system time from rusage), on a warm
page cache. Prints the medians (quartiles) as a markdown table and each symlookup's speed against
wc -l: wc's median divided by its own, in wall time (both cores for symlookup, one for wc) and in
CPU time (user + system, summed over cores). Default FILE: the corpus's 65 MB perf .sym.
"""
import argparse, glob, os, re, statistics as st, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument('--file', default=None)
ap.add_argument('--addr', default='0x1170')
ap.add_argument('--runs', type=int, default=61)
ap.add_argument('programs', nargs='+', help='NAME=PATH of a symlookup binary')
a = ap.parse_args()
f = a.file or (glob.glob(os.path.join(os.getcwd(), '../shared/corpus/perf/big-symbols/*/*/*.sym')) or [None])[0]
if not f:
    sys.exit('readspeed.py: no --file and no ../shared/corpus/perf .sym')
cmds = {'wc -l FILE': ['wc', '-l', f], 'cat FILE >/dev/null': ['cat', f]}
for p in a.programs:
    name, _, path = p.partition('=')
    cmds[f'symlookup FILE {a.addr}, {name}'] = [path, f, a.addr]
for c in cmds.values():  # warm the page cache
    subprocess.run(c, stdout=subprocess.DEVNULL, check=False)
res = {k: [] for k in cmds}
for _ in range(a.runs):
    for k, c in cmds.items():
        out = subprocess.run(['chrt', '-f', '10', 'perf', 'stat', '-e', 'task-clock', '--'] + c,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
        g = lambda pat: float(re.search(pat, out).group(1)) * 1e3
        res[k].append({'wall': g(r'([\d.]+) seconds time elapsed'), 'user': g(r'([\d.]+) seconds user'),
                       'sys': g(r'([\d.]+) seconds sys')})


def med(k, fn):
    v = [fn(x) for x in res[k]]
    q = st.quantiles(v, n=4)
    return st.median(v), q[0], q[2]


wall = lambda x: x['wall']
cpu = lambda x: x['user'] + x['sys']
print(f'{f}: {a.runs} rounds, medians (quartiles)\n')
print('| command | wall | CPU (user + sys) | user | sys |\n|---|---:|---:|---:|---:|')
for k in cmds:
    w, c = med(k, wall), med(k, cpu)
    print(f'| `{k}` | {w[0]:.1f} ms ({w[1]:.1f}-{w[2]:.1f}) | {c[0]:.1f} ms ({c[1]:.1f}-{c[2]:.1f}) | '
          f'{med(k, lambda x: x["user"])[0]:.1f} | {med(k, lambda x: x["sys"])[0]:.1f} |')
print()
for k in list(cmds)[2:]:
    print(f'{k}: speed against wc -l: wall {med("wc -l FILE", wall)[0] / med(k, wall)[0]:.2f}, '
          f'CPU {med("wc -l FILE", cpu)[0] / med(k, cpu)[0]:.2f}')

#!/usr/bin/python3
"""The floors of the house, drawn from the code: which src/*.c file calls
which, every circle of files that call each other, and every call that
runs from a lower floor up to a higher one.

Each file is compiled on its own (cc -O0, so nothing is inlined or
dropped) and read back with nm: the global symbols it defines, and the
undefined ones it uses, each mapped to the file that defines it.  A use
of a function is a call, a use of a variable a reference; both make a
dependency.  Circles are the strongly connected components of that graph
with more than one file.  Inside a circle the files are ordered so that
as few uses as possible run upward (the smaller side of each circle is
the one to remove); after that every file's floor is 0 if it uses no
other file, else one above the highest file it uses.

Usage: scripts/layers.py [--src DIR] [--objects DIR] [--json]
  --src DIR      the sources (default src/ beside this script)
  --objects DIR  read DIR/NAME.o for each SRC/NAME.c instead of compiling
                 them (build/ after make; -O2 may drop a dead call)
  --json         print the graph as JSON instead of the report
Exit status: 0 when no circle exists, 1 when one does, 2 on a failure to
compile or read the objects.  tests/packaging/test_layers.py holds the
circles still allowed.
"""
import argparse
import concurrent.futures
import itertools
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKGS = ["libevent", "inih", "libsystemd"]


def cflags(src):
    """The flags the Makefile compiles with, minus warnings and optimisation."""
    flags = ["-std=c11", "-O0", "-w", "-D_GNU_SOURCE",
             '-DZKELECTD_VERSION="layers"', "-I", str(src)]
    r = subprocess.run(["pkg-config", "--cflags"] + PKGS,
                       capture_output=True, text=True)
    if r.returncode == 0:
        flags += shlex.split(r.stdout)
    return flags


def compile_all(src, outdir):
    cc = os.environ.get("CC", "cc")
    flags = cflags(src)

    def one(c):
        obj = Path(outdir) / (c.stem + ".o")
        r = subprocess.run([cc] + flags + ["-c", "-o", str(obj), str(c)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{c}: {cc} failed:\n{r.stderr}")
        return obj

    sources = sorted(Path(src).glob("*.c"))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, sources))


def symbols(obj):
    """(defined, undefined): defined maps a global name to 'call' for a
    function or 'ref' for data; undefined is the set of names used."""
    r = subprocess.run(["nm", "-P", str(obj)], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"nm {obj}: {r.stderr.strip()}")
    defined, undefined = {}, set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper():
            defined[name] = "call" if kind in "TWI" else "ref"
    return defined, undefined


def graph(objects):
    """{caller: {callee: [(symbol, 'call'|'ref'), ...]}} over file names."""
    defs, uses = {}, {}
    for obj in objects:
        name = Path(obj).stem + ".c"
        d, u = symbols(obj)
        uses[name] = u
        for sym, kind in d.items():
            defs.setdefault(sym, []).append((name, kind))
    edges = {name: {} for name in uses}
    for caller, used in uses.items():
        for sym in sorted(used):
            for callee, kind in defs.get(sym, []):
                if callee != caller:
                    edges[caller].setdefault(callee, []).append((sym, kind))
    return edges


def components(edges):
    """Tarjan's strongly connected components, each a sorted list."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = itertools.count()

    def visit(v):
        index[v] = low[v] = next(counter)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def order_circle(edges, comp):
    """The bottom-to-top order of a circle's files that leaves the fewest
    uses running upward (exact, by dynamic programming over subsets;
    circles are small).  Ties go to the alphabetical order."""
    n = len(comp)
    weight = [[len(edges[a].get(b, ())) for b in comp] for a in comp]
    best = {0: (0, [])}
    for mask in range(1 << n):
        if mask not in best:
            continue
        cost, order = best[mask]
        for v in range(n):
            if mask & (1 << v):
                continue
            # v goes above every file already placed: their uses of v run up.
            up = sum(weight[u][v] for u in range(n) if mask & (1 << u))
            nxt = mask | (1 << v)
            cand = (cost + up, order + [v])
            if nxt not in best or cand < best[nxt]:
                best[nxt] = cand
    return [comp[i] for i in best[(1 << n) - 1][1]]


def analyse(edges):
    comps = components(edges)
    circles = [c for c in comps if len(c) > 1]
    rank = {}
    for c in circles:
        for i, f in enumerate(order_circle(edges, c)):
            rank[f] = i
    circle_of = {f: tuple(c) for c in circles for f in c}
    upward = []
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if circle_of.get(a) and circle_of.get(a) == circle_of.get(b) \
                    and rank[a] < rank[b]:
                for sym, kind in edges[a][b]:
                    upward.append((a, b, sym, kind))
    up = {(a, b) for a, b, _, _ in upward}
    floor = {}

    def floor_of(f):
        if f not in floor:
            below = [b for b in edges[f] if (f, b) not in up]
            floor[f] = 1 + max(map(floor_of, below)) if below else 0
        return floor[f]

    for f in sorted(edges):
        floor_of(f)
    return circles, upward, floor


def report(edges, circles, upward, floor):
    out = []
    top = max(floor.values(), default=-1)
    out.append(f"{top + 1} floors for {len(floor)} files "
               "(a file uses only files on lower floors, but for the "
               "upward uses below):")
    for level in range(top, -1, -1):
        files = sorted(f for f in floor if floor[f] == level)
        out.append(f"  {level:2d}  {' '.join(files)}")
    out.append(f"{len(circles)} circle(s) of files that use each other:")
    for c in circles:
        out.append("  " + " <-> ".join(c))
        for a in c:
            for b in c:
                if b in edges[a]:
                    syms = ", ".join(s for s, _ in edges[a][b])
                    out.append(f"      {a} -> {b}: {syms}")
    out.append(f"{len(upward)} use(s) from a lower floor up to a higher one:")
    for a, b, sym, kind in upward:
        out.append(f"  {a} -> {b}  {sym} ({kind})")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=str(ROOT / "src"))
    ap.add_argument("--objects")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    src = Path(args.src)
    try:
        if args.objects:
            objects = [Path(args.objects) / (c.stem + ".o")
                       for c in sorted(src.glob("*.c"))]
            edges = graph(objects)
        else:
            with tempfile.TemporaryDirectory(prefix="layers.") as tmp:
                edges = graph(compile_all(src, tmp))
    except (RuntimeError, OSError) as e:
        print(f"layers: {e}", file=sys.stderr)
        return 2
    circles, upward, floor = analyse(edges)
    if args.json:
        print(json.dumps({
            "floors": floor,
            "edges": {a: {b: [s for s, _ in syms]
                          for b, syms in sorted(bs.items())}
                      for a, bs in sorted(edges.items())},
            "circles": circles,
            "upward": [list(u) for u in upward],
        }, indent=1, sort_keys=True))
    else:
        print(report(edges, circles, upward, floor))
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main())

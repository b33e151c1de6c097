#!/usr/bin/python3
"""Mechanical mutants of the election core, each run against the simulator
as `make check` runs it, to find what the checker cannot see.

    tests/sim/mutate.py [-n N] [--seed S] [--jobs J] [--tree DIR]
                        [--only ID ...] [--list] [--ledger FILE] [FILE ...]

The hand-made mutants of src/election_int.h (`make sim-mutants`) are old
defects put back; the blind rounds (bench/sim-campaign-1M.md) were defects
someone imagined. These are neither: every small change of the core's
code an operator below can make, drawn at random (--seed) and tried one
at a time, so that what survives shows where the invariants are blind
without anyone choosing where to look.

Operators, on code only (comments, strings and preprocessor lines left
alone): a relational operator moved by one (< and <=, > and >=) or negated
(== and !=), && and || swapped, a ! dropped, an integer constant changed
(0 and 1 swapped, others plus one), a binary + and - swapped, a one-line
expression statement deleted (not a free() or a log line).

Each mutant is built in DIR (a git worktree of this repository, default
/work/wt-mut; its sources are put back after each mutant) without -Werror
(a warning is no verdict) and run as scripts/check.sh runs the simulator:
the regression seeds, then 400 schedules of every flag combination from
seed 1 (6,000 plain), with -A, stopping at the first failure. Verdicts:
`killed` (with what found it), `SURVIVED`, `stillborn` (does not compile),
`timeout` (a simulator run over --timeout seconds: a core that loops; the
check's own time limit would stop it, so it counts as found). One line per
mutant goes to the ledger (--ledger), so that a long run can be read as it
goes and its survivors examined.
"""

import argparse
import os
import random
import re
import subprocess
import sys
import time

CORE = ["election.c", "election_act.c", "election_claim.c",
        "election_event.c", "election_mark.c", "election_next.c",
        "election_preempt.c", "election_queue.c", "election_reply.c",
        "election_time.c"]
FAMILIES = ["-k 2000", "-W", "-P", "-L|-K", "-R", "-H"]


def strip_code(text):
    """The text with comments and string/char literals blanked (same
    length, newlines kept), so that columns still match the original."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j == -1 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j == -1 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


ROR = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
RE_ROR = re.compile(r"(?<![<>=!&|+\-*/%^])(<=|>=|==|!=|<|>)(?![<>=])")
RE_LCR = re.compile(r"&&|\|\|")
RE_NEG = re.compile(r"!(?!=)")
RE_INT = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
RE_AOR = re.compile(r"(?<=[\w)\]] )([+-])(?= [\w(])")
RE_STMT = re.compile(r"^(\s*)(\S.*;)\s*$")
NOT_STMT = re.compile(r"^(return|if|for|while|switch|case|default|break|"
                      r"continue|goto|else|do|static|const|struct|enum|"
                      r"union|unsigned|signed|int|char|long|short|size_t|"
                      r"int64_t|uint64_t|int32_t|uint32_t|bool|void|double|"
                      r"float|typedef|extern|\}|\{)\b")
# Freeing and logging change nothing the simulator could see.
NO_DELETE = re.compile(r"^(free|log_\w+|el_log\w*|xfree)\(")


def balanced(s):
    return s.count("(") == s.count(")") and s.count("[") == s.count("]")


def sites(path, name):
    """Every mutant of one file: (file, line, col, old, new, op)."""
    with open(path) as f:
        text = f.read()
    code = strip_code(text)
    lines, clines = text.split("\n"), code.split("\n")
    depth = 0
    res = []
    for no, (line, cl) in enumerate(zip(lines, clines), 1):
        if cl.lstrip().startswith("#"):
            continue
        inside = depth > 0
        depth += cl.count("{") - cl.count("}")
        if not inside:
            continue    # only inside function bodies (and initialisers)
        for m in RE_ROR.finditer(cl):
            res.append((name, no, m.start(), m.group(1), ROR[m.group(1)],
                        "ror"))
        for m in RE_LCR.finditer(cl):
            res.append((name, no, m.start(), m.group(0),
                        "||" if m.group(0) == "&&" else "&&", "lcr"))
        for m in RE_NEG.finditer(cl):
            res.append((name, no, m.start(), "!", "", "neg"))
        for m in RE_INT.finditer(cl):
            v = int(m.group(1))
            res.append((name, no, m.start(1), m.group(1),
                        str(1 if v == 0 else 0 if v == 1 else v + 1), "int"))
        for m in RE_AOR.finditer(cl):
            res.append((name, no, m.start(1), m.group(1),
                        "-" if m.group(1) == "+" else "+", "aor"))
        m = RE_STMT.match(cl)
        if m and not NOT_STMT.match(m.group(2)) and balanced(m.group(2)) \
                and ":" not in m.group(2).split("(")[0] \
                and not NO_DELETE.match(m.group(2)):
            # A statement's first line only: the line before ends one.
            prev = clines[no - 2].rstrip() if no >= 2 else ""
            if prev.endswith((";", "{", "}", ":")) or prev == "":
                # The original text: strings are blanked in cl.
                res.append((name, no, m.start(2),
                            line[m.start(2):m.end(2)], ";", "sdl"))
    return res


def mutate_text(text, site):
    _, no, col, old, new, _ = site
    lines = text.split("\n")
    line = lines[no - 1]
    assert line[col:col + len(old)] == old, (site, line)
    lines[no - 1] = line[:col] + new + line[col + len(old):]
    return "\n".join(lines)


def combos():
    """The flag combinations as tests/sim/sweep.sh numbers them."""
    forms = [f.split("|") for f in FAMILIES]
    total = 1
    for f in forms:
        total *= len(f) + 1
    for mask in range(total):
        flags, rest = [], mask
        for f in forms:
            d = rest % (len(f) + 1)
            rest //= len(f) + 1
            if d:
                flags += f[d - 1].split()
        yield mask, flags


def runs(sim, count, plain):
    """What check.sh runs, as (label, argv), in the order tried."""
    yield "regression seeds", [sim, "-f", "tests/sim/seeds.txt", "-x",
                               "-t", "0"]
    for mask, flags in combos():
        n = plain if mask == 0 else count
        base = 1 + mask * 1000000
        # Two halves, as check.sh's two processes split them.
        half = (n + 1) // 2
        for s, k in ((base, half), (base + half, n - half)):
            yield ("combination %d (%s) seeds %d.." %
                   (mask, " ".join(flags) or "none", s),
                   [sim, "-s", str(s), "-n", str(k), "-x", "-t", "0", "-A"]
                   + flags)


def judge(tree, sim, args):
    """Runs the campaign on args.jobs processes; the first failure ends it."""
    todo = list(runs(sim, args.count, args.plain))
    running = []
    verdict = None
    while (todo or running) and verdict is None:
        while todo and len(running) < args.jobs:
            label, argv = todo.pop(0)
            p = subprocess.Popen(argv, cwd=tree, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
            running.append((label, p, time.monotonic()))
        time.sleep(0.02)
        for item in list(running):
            label, p, t0 = item
            rc = p.poll()
            if rc is None:
                if time.monotonic() - t0 > args.timeout:
                    verdict = "timeout in %s" % label
                continue
            running.remove(item)
            out = p.stdout.read()
            if rc != 0:
                m = re.search(r"seed (\d+) FAILED: (.*)", out)
                verdict = "killed by %s: %s" % (
                    label, ("seed %s: %s" % m.groups())[:160] if m else
                    "status %d" % rc)
                break
    for _, p, _ in running:
        p.kill()
        p.wait()
    return verdict or "SURVIVED"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", default=CORE)
    ap.add_argument("-n", type=int, default=50, help="mutants to try")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--tree", default="/work/wt-mut")
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--plain", type=int, default=6000)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--only", nargs="*", type=int, default=None)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--ledger", default=None)
    args = ap.parse_args()

    src = os.path.join(args.tree, "src")
    every = []
    for name in args.files:
        every += sites(os.path.join(src, name), name)
    ids = list(range(len(every)))
    random.Random(args.seed).shuffle(ids)
    pick = args.only if args.only is not None else ids[:args.n]
    if args.list:
        for i in pick:
            f, no, col, old, new, op = every[i]
            print("%5d %s:%d:%d %s %r -> %r" % (i, f, no, col + 1, op,
                                               old, new))
        print("%d sites in %d files" % (len(every), len(args.files)))
        return 0
    ledger = open(args.ledger, "a") if args.ledger else None
    build = "build-mt"
    sim = os.path.join(build, "sim")
    counts = {}
    for i in pick:
        f, no, col, old, new, op = every[i]
        path = os.path.join(src, f)
        with open(path) as fh:
            orig = fh.read()
        t0 = time.monotonic()
        try:
            with open(path, "w") as fh:
                fh.write(mutate_text(orig, every[i]))
            b = subprocess.run(
                ["make", "-s", "BUILD=" + build, "WARNINGS=-std=c11 -w",
                 "CFLAGS=-O2", sim], cwd=args.tree, capture_output=True,
                text=True)
            if b.returncode != 0:
                verdict = "stillborn"
            else:
                verdict = judge(args.tree, sim, args)
        finally:
            with open(path, "w") as fh:
                fh.write(orig)
            # Make's timestamps: the restored file is rebuilt next time.
            os.utime(path)
        kind = verdict.split()[0]
        counts[kind] = counts.get(kind, 0) + 1
        line = "%5d %s:%d:%d %s %r -> %r | %s | %.0f s" % (
            i, f, no, col + 1, op, old, new, verdict, time.monotonic() - t0)
        print(line, flush=True)
        if ledger:
            ledger.write(line + "\n")
            ledger.flush()
    print("mutate: " + ", ".join("%s %d" % kv for kv in sorted(
        counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())

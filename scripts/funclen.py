#!/usr/bin/python3
"""Functions longer than a screen (STYLE.md: handlers stay short).

    scripts/funclen.py [--max N] [FILE...]

Counts the body lines of every function defined in the files (default:
src/election*.c): the lines between the function's opening brace and its
closing one, both in column 0 as the house style puts them. Prints each
function over N lines (default 80) with its length, and exits 1 if there
is one; with --all, prints every function's length.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(")


def functions(path):
    """(name, its line, body lines) of each function in path."""
    name = None
    at = start = None
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines, 1):
        m = NAME.match(line)
        if m and start is None:
            name, at = m.group(1), i
        elif line == "{" and name is not None and start is None:
            start = i
        elif line == "}" and start is not None:
            yield name, at, i - start - 1
            name = start = None
        elif line.endswith(";") and start is None:
            name = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=80)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = [pathlib.Path(f) for f in a.files] or sorted(
        (ROOT / "src").glob("election*.c"))
    over = 0
    for f in files:
        for name, line, n in functions(f):
            if n > a.max:
                over += 1
            if n > a.max or a.all:
                print(f"{f.name}:{line}: {name}: {n} lines"
                      + (f" (over {a.max})" if n > a.max else ""))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

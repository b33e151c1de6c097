"""The length check (scripts/funclen.py): no function of the pure core,
src/election*.c, longer than 80 lines (STYLE.md: handlers stay short, one
screen each; issue 20 item 1).
"""
import sys

from conftest import ROOT, run

FUNCLEN = ROOT / "scripts/funclen.py"


def funclen(*args):
    return run([sys.executable, str(FUNCLEN), *map(str, args)])


def test_no_function_of_the_core_over_80_lines():
    r = funclen()
    assert r.returncode == 0, (
        "functions over 80 lines in src/election*.c (split them into "
        "handlers):\n" + r.stdout + r.stderr)


def test_the_core_is_counted():
    # Every function of the core is found: a parse that found none would
    # pass the check above for nothing.
    r = funclen("--all")
    assert r.returncode == 0, r.stderr
    names = {line.split(": ")[1] for line in r.stdout.splitlines()}
    assert {"election_next", "election_op_done", "election_clock",
            "el_claim_build"} <= names
    assert len(names) > 100


def body(n):
    return "".join(f"\tx += {i};\n" for i in range(n))


def test_check_finds_a_long_function(tmp_path):
    f = tmp_path / "long.c"
    f.write_text("static int x;\n\nstatic void\nshort_one(void)\n{\n"
                 + body(80) + "}\n\n/* a comment; */\nvoid\n"
                 "long_one(int a,\n    int b)\n{\n" + body(81) + "}\n")
    r = funclen(f)
    assert r.returncode == 1
    assert r.stdout == "long.c:90: long_one: 81 lines (over 80)\n"
    r = funclen("--max", 81, f)
    assert r.returncode == 0 and r.stdout == ""

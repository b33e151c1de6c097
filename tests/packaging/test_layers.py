"""The layering check (scripts/layers.py): no new circle of src/*.c files
that call each other.

ALLOWED lists the circles the code still has.  It may only shrink: a new
circle, or a file joining an old one, fails test_no_new_circle; a circle
that is broken or smaller than listed fails test_allowed_is_current until
its entry is removed or narrowed here, so that a file cannot rejoin it
unnoticed.  Run `scripts/layers.py` to see the floors, the circles and the
uses that run upward.
"""
import json
import sys
import textwrap

import pytest

from conftest import ROOT, run

LAYERS = ROOT / "scripts/layers.py"

# Each circle still allowed, with the files that own breaking it.
ALLOWED = {
}


def layers(src=None):
    cmd = [sys.executable, str(LAYERS), "--json"]
    if src is not None:
        cmd += ["--src", str(src)]
    r = run(cmd)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


@pytest.fixture(scope="module")
def house():
    return layers()


def test_no_new_circle(house):
    rc, g = house
    new = [c for c in g["circles"]
           if not any(set(c) <= allowed for allowed in ALLOWED)]
    assert not new, (
        "new circle(s) of files calling each other: "
        + "; ".join(" <-> ".join(c) for c in new)
        + "\n(calls go down the layers, STYLE.md 'State and direction'; "
        "scripts/layers.py shows who calls whom)")
    assert rc == (1 if g["circles"] else 0)


def test_allowed_is_current(house):
    _, g = house
    found = {frozenset(c) for c in g["circles"]}
    stale = [a for a in ALLOWED if a not in found]
    assert not stale, (
        "circle(s) broken or narrowed: remove or narrow their entry in "
        "ALLOWED: " + "; ".join(" <-> ".join(sorted(a)) + f" ({ALLOWED[a]})"
                                for a in stale))


def write(d, files):
    d.mkdir()
    for name, text in files.items():
        (d / name).write_text(textwrap.dedent(text))
    return d


def test_check_finds_a_circle_and_the_upward_call(tmp_path):
    # low.c is used twice by high.c and calls back up once: the call back
    # is the upward one, and it closes a circle of all three files.
    src = write(tmp_path / "src", {
        "low.c": """
            int high_cb(void);
            int low_a(void) { return 1; }
            int low_b(void) { return high_cb(); }
        """,
        "mid.c": """
            int low_a(void);
            int mid(void) { return low_a(); }
        """,
        "high.c": """
            int low_a(void); int low_b(void); int mid(void);
            int high_cb(void) { return 2; }
            int high(void) { return low_a() + low_b() + mid(); }
        """,
        "alone.c": """
            int alone(void) { return 0; }
        """,
    })
    rc, g = layers(src)
    assert rc == 1
    assert g["circles"] == [["high.c", "low.c", "mid.c"]]
    assert g["upward"] == [["low.c", "high.c", "high_cb", "call"]]
    assert g["floors"] == {"alone.c": 0, "low.c": 0, "mid.c": 1,
                           "high.c": 2}
    r = run([sys.executable, str(LAYERS), "--src", str(src)])
    assert r.returncode == 1
    assert "high.c <-> low.c <-> mid.c" in r.stdout
    assert "low.c -> high.c  high_cb (call)" in r.stdout


def test_check_passes_without_a_circle(tmp_path):
    src = write(tmp_path / "src", {
        "low.c": "int low_a(void) { return 1; }\n",
        "high.c": "int low_a(void);\nint high(void) { return low_a(); }\n",
    })
    rc, g = layers(src)
    assert rc == 0
    assert g["circles"] == [] and g["upward"] == []
    assert g["floors"] == {"low.c": 0, "high.c": 1}
    assert g["edges"]["high.c"] == {"low.c": ["low_a"]}


def test_check_fails_on_a_file_that_does_not_compile(tmp_path):
    src = write(tmp_path / "src", {"bad.c": "int bad(void) { return }\n"})
    r = run([sys.executable, str(LAYERS), "--src", str(src)])
    assert r.returncode == 2
    assert "bad.c" in r.stderr

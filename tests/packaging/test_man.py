"""The manual pages are clean under mandoc's linter, down to style
messages (an unterminated quote is one)."""
import pytest

from conftest import ROOT, run

PAGES = sorted(p for p in (ROOT / "man").iterdir()
               if p.suffix in (".1", ".5", ".8"))


def test_all_pages_found():
    assert {p.name for p in PAGES} >= {"zkelectd.8", "zkelectctl.1",
                                       "zkelectd.conf.5"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_mandoc_lint_is_silent(page):
    r = run(["mandoc", "-Tlint", "-W", "style", str(page)])
    assert (r.returncode, r.stdout + r.stderr) == (0, "")

"""Shared helpers of the packaging tests: examples, man pages, install,
bash completion and the Debian package.  They do not depend on how the
binaries were built, so scripts/check.sh runs them once.

Environment: ZKELECTD_BIN_DIR (default build/), where zkelectd and
zkelectctl are.
"""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def bin_dir():
    return (ROOT / os.environ.get("ZKELECTD_BIN_DIR", "build")).resolve()


def run(cmd, **kw):
    """Runs cmd, returning the CompletedProcess with text stdout/stderr."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run(cmd, **kw)


def need_root():
    if os.geteuid() != 0:
        pytest.skip("needs root")


@pytest.fixture(scope="session")
def bindir():
    d = bin_dir()
    for b in ("zkelectd", "zkelectctl"):
        if not os.access(d / b, os.X_OK):
            pytest.fail(f"{d / b} missing: run make first")
    return d

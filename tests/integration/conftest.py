"""Fixtures for zkelectd's integration tests.

zk          the session's standalone ZooKeeper (tickTime 200 ms), restarted
            when a test left it down
zk_factory  private servers or ensembles for tests that stop them
kz          a kazoo client on `zk`, for inspecting the tree
election    the daemons of one test (zkharness.Election): a unique service,
            a temporary directory, a hook history file; every daemon is
            stopped at the end and its log scanned for sanitizer reports

A test (or fixture) may set request.node.zke_logs to a function returning
{name: text}: those logs are shown when the test fails.

Environment: ZKELECTD_BIN_DIR (default build/), ZKELECTD_SAN=1 for a
sanitizer build, ZKELECTD_KEEP_TMP=1 to keep temporary directories.
"""

import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import zkharness  # noqa: E402


def _terminate(signo, frame):
    # Turn SIGTERM/SIGHUP into an interrupt so that fixture finalizers and
    # the atexit handler stop every server and daemon.
    raise KeyboardInterrupt(f"signal {signo}")


def pytest_configure(config):
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _terminate)
    zkharness.sweep_stale_tmpdirs()


@pytest.fixture(scope="session")
def zk_session():
    cluster = zkharness.ZkCluster(size=1)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def zk(zk_session):
    zk_session.ensure_serving()
    return zk_session


@pytest.fixture
def zk_factory():
    made = []

    def make(size=1, **kw):
        c = zkharness.ZkCluster(size=size, **kw)
        made.append(c)
        c.start()
        return c
    yield make
    for c in made:
        c.close()


@pytest.fixture
def kz(zk):
    from kazoo.client import KazooClient
    client = KazooClient(hosts=zk.hosts, timeout=10)
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()


@pytest.fixture
def election(request, zk):
    zkharness.binary("zkelectd")
    e = zkharness.Election(zk.hosts, request.node.name)
    request.node.zke_election = e
    yield e
    problems = e.close()
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    e = getattr(item, "zke_election", None)
    extra = getattr(item, "zke_logs", None)     # () -> {name: text}
    if (e is None and extra is None) or not rep.failed \
            or getattr(item, "zke_logs_shown", False):
        return
    item.zke_logs_shown = True
    logs = dict(e.collect_logs()) if e is not None else {}
    if extra is not None:
        logs.update(extra())
    for name, text in logs.items():
        rep.sections.append((name, text))


# The longest tests start first, so that under pytest-xdist (make check
# runs the suite on several workers) no worker is left with one of them
# at the end while the others idle. Names, not markers: a test that grows
# long is added here, and the order of the rest is kept.
SLOW_FIRST = (
    "test_chaos",
    "test_highest_priority_leads_after_preempt_delay",
    "test_connection_flapping",
    "test_cut_off_leader_answers_sync_until_it_steps_down",
    "test_run_exit_makes_the_node_resign",
    "test_quorum_lost_longer_than_session_timeout",
)


def pytest_collection_modifyitems(config, items):
    def rank(item):
        name = getattr(item, "originalname", item.name)
        return SLOW_FIRST.index(name) if name in SLOW_FIRST else len(SLOW_FIRST)
    items.sort(key=rank)     # stable: the others keep their order

"""A reconnect of a session is a touch by the quorum (the lease of issue 17).

The lease takes a re-established connection of the session for a touch
that the quorum's leader made after the reconnect was asked for
(election_time.c): the server revalidates the session with the quorum's
leader before it answers the handshake. Shown here against a real
three-server ensemble (zkharness.CutEnsemble, as in test_zk_model.py) with
a bare client (zkraw.RawZk) that sends nothing but its handshakes: no
ping, no sync, no write.

RV1 A session whose only traffic is a reconnect to another server every
    T/2 outlives T many times over, while the quorum expires it within
    about T once the reconnects stop.
RV2 A reconnect to a follower cut off from its quorum does not complete:
    the handshake goes unanswered until the follower gives up on its
    leader and drops it, so it renews nothing (the quorum expires the
    session about T after its last touch meanwhile).

Times: tickTime 200 ms, T = 3 s, syncLimit 30 (a cut-off follower serves
for 6 s). Waits have deadlines; a sleep is the time between reconnects.
"""

import os
import time

import pytest
from kazoo.protocol.serialization import Create
from kazoo.security import OPEN_ACL_UNSAFE

from test_zk_model import clients, ens, raws  # noqa: F401 - fixtures
from zkharness import wait_for
from zkraw import RawZk, RawZkError

pytestmark = pytest.mark.skipif(
    os.environ.get("ZKELECTD_SAN") == "1",
    reason="ZooKeeper's own behaviour: nothing for the sanitizers to see")

T_MS = 3000
T = T_MS / 1000
EPHEMERAL_SEQUENTIAL = 3


def owned_ephemeral(ens, raws, sid=1):  # noqa: F811 - the fixture
    """A session on server sid with one ephemeral node; the connection is
    dropped at once (the session lives on). Returns (session, passwd,
    path)."""
    r = raws("127.0.0.1", ens.server(sid).port, timeout_ms=T_MS)
    path = r.call(Create("/rv-", b"", OPEN_ACL_UNSAFE, EPHEMERAL_SEQUENTIAL))
    r.close()
    return r.session_id, r.passwd, path


def test_reconnects_alone_keep_a_session_alive(ens, clients, raws):  # noqa: F811
    """RV1."""
    quorum = clients(ens.hosts_of(1, 2))
    session, passwd, path = owned_ephemeral(ens, raws)
    start = time.monotonic()
    n = 0
    while time.monotonic() < start + 4 * T:
        time.sleep(T / 2)
        n += 1
        r = raws("127.0.0.1", ens.server(n % 3 + 1).port, timeout_ms=T_MS,
                 session_id=session, passwd=passwd)
        assert r.timeout_ms == T_MS
        r.close()
    assert quorum.exists(path) is not None, \
        f"the session did not outlive {4 * T}s of reconnects alone"
    stopped = time.monotonic()
    wait_for(lambda: quorum.exists(path) is None, T + 2,
             "the quorum expired the session once the reconnects stopped")
    assert time.monotonic() - stopped >= T / 2


def test_reconnect_to_a_cut_off_follower_does_not_complete(ens, clients,
                                                           raws):  # noqa: F811
    """RV2."""
    quorum = clients(ens.hosts_of(1, 2))
    session, passwd, path = owned_ephemeral(ens, raws)
    touched = time.monotonic()
    ens.cut_off(3)
    failed = None
    try:
        r = RawZk("127.0.0.1", ens.server(3).port, timeout_ms=T_MS,
                  session_id=session, passwd=passwd,
                  connect_timeout=ens.sync_window_s + 5)
        r.close()
    except (TimeoutError, ConnectionError, OSError, RawZkError) as e:
        failed = e
    assert failed is not None, \
        "the cut-off follower completed the reconnect of the session"
    # Meanwhile the quorum expired the session, about T after its touch.
    wait_for(lambda: quorum.exists(path) is None, 5,
             "the quorum expired the session")
    assert time.monotonic() - touched >= T

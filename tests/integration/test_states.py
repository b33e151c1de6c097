"""The election's states in the log (issue 20 item 1): every change of what
the candidate is doing is logged at debug with its cause, and none is a
move the transition table lacks. Real daemons, a real ZooKeeper; every
wait has a deadline."""

from zkharness import wait_for


def test_state_changes_are_logged_with_their_cause(election):
    a = election.daemon("node1")
    a.wait_role("leader")
    wait_for(lambda: "state: promoting -> leading (promote hook done)"
             in a.log_text(), 5, "the leader's state change in the log")
    assert "state: head -> promoting (elected)" in a.log_text()
    a.ctl("resign")
    wait_for(lambda: "state: leading -> demoting (resign)" in a.log_text(),
             10, "the resign's state change in the log")
    assert "transition table" not in a.log_text()

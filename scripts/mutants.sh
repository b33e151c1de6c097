#!/bin/bash
# Runs the election's unit tests against each mutant of the core (see
# EL_MUTANT in src/election_int.h): each re-introduces one old defect, and
# the tests must fail on every one of them (26-28 are the simulator's:
# tests/sim/seeds.txt). Exits 1 if a mutant survives.
#   scripts/mutants.sh BUILD_DIR
set -u
build=${1:-build-mut}
survivors=0
# 30-33 are a resumed session's: test_election_resume. 26-28 and 95-97
# are found by the simulator alone (tests/sim/seeds.txt). 40-49 are issue 19's,
# 50 the leader's markers (preemption), 60 issue 21's, 70 issue 20's (the
# transition table), 83, 84, 85, 86 and 100 the 1,000,000-schedule
# campaign's, 87 a review's (a reload's check interval), 88-92 a claim or
# a marker deleted by hand (the claim's own watch, a leader making its
# claim again, a stale claim ahead of the head, the marker's own watch, a
# promote begun said by the session file: test_election_resume), 93 a
# release refused for a node changed by hand waiting the retry time, 94
# a restart ignoring that the claim its session file names is gone, 98 a
# resumed leader not naming the claim it led on (test_election_resume), 99
# the session file given a leader's node epoch, 0 once the node is gone.
# 71 is retired: 100's guard covers its case too.
# 101 and 102 a third blind round's (a pause answered before its release,
# check failures not in a row counted). 103-105 are (idle)'s: a follower
# that polls E/leader, a leader's queue reads without their pause,
# keepalive syncs twice as often. 106 (rel)'s: the breadcrumb's version
# after an ack not counted up (a blind round's); 107 (hand)'s: the
# release deletes the breadcrumb before its claim (a blind round's); 108
# (f)'s: the heir never prepares its claim (a mechanical mutant's). 109
# and 110 are the third blind round's two windows of a resume (a startup
# demote that stops naming its claim, a stop that ends while a startup
# demote waits): test_election_resume. 110 is retired: since 143's fix
# nothing goes while a startup demote waits, the stop's answer included. 111 the second and third blind rounds' fence
# killed at the demote point whose lost contact outlives it
# (test_fence_killed_renewed_while_it_dies). 112-114 are a fourth blind
# round's: 113 (a switchover's handoff telling its demote "resign") fails
# test_switchover_deletes_those_between_then_hands_over; 112 and 114 are
# found by the simulator alone (tests/sim/seeds.txt), as is 115 (a
# resumed leader not knowing its breadcrumb); 116 ("lease-lost" only for a
# promoted leader) fails test_promote_killed_then_renewed_still_demotes.
# 117 (the campaign on the tied faults: "paused" before the session a
# third refused release replaces is gone) fails
# test_pause_refused_three_times_answers_after_the_restart; 118 (a
# reconnection clearing the loss a promote was killed for) fails
# test_promote_killed_for_a_disconnect_demotes_after_the_reconnect; 119
# (an ack on a claim made behind a heir's, found by the campaign) fails
# test_leader_acks_again_only_on_the_first_claim; 120 (the ack's multi
# without the claim's check) fails test_elected; 121 (a disconnection told
# during a promote starts no disconnect_grace: the fourth blind round's)
# fails test_demote_waits_for_promote; 122 (a confirmation's reply time as
# the reconnection's base, the fourth blind round's, found by loop stalls)
# fails test_reconnect_renews_the_lease; 123 (a resume's owed demote
# dropped from the session file before it starts, found by loop stalls)
# fails test_owed_startup_demote_kept_until_it_starts. 124-126 are the
# fifth blind round's misses: a resume keeping the start's demote (fails
# test_election_resume), a reload computing the lease's figures before it
# stores tick_time and demote_timeout (test_timeout_below_two_ticks_stays_out),
# a pause answered while a demote with no release runs
# (test_pause_during_a_demote_without_release_waits_for_it). 127 (a reload
# raising demote_timeout past what the lease has left, demoting with the
# whole new budget, found by the simulator's timing reloads) fails
# test_reload_raising_demote_timeout_keeps_the_lease_end. 129 and 130 are a
# sixth blind round's (a resigner's marker hold ignored; a late demote's
# budget without the margin): test_resigned_marker_stays_away_until_another_leads
# and test_reload_raising_demote_timeout_keeps_the_lease_end. 128 and 131
# (the preemption's wait following the id; `resigned` before the release)
# are found by the simulator alone (tests/sim/seeds.txt). 132, a seventh
# blind round's (a promote the daemon killed taken for a failed one: its
# node given away), fails
# test_promote_killed_at_the_demote_point_keeps_the_node. 133 and 134 (a
# disconnect_grace reloaded during a disconnection counted from the reload,
# or not applied until the next one) fail
# test_disconnect_grace_reloaded_during_a_disconnect. 135 (an ack's
# breadcrumb ours only once its reply came) fails
# test_ack_with_its_reply_lost_releases_the_breadcrumb. 136, an eighth
# blind round's (a stop that waits for a reconnection to send its
# release), fails test_stop_while_disconnected_ends_without_the_release.
# 137 (the same round: a failed fence run again at once) is found by the
# simulator alone (tests/sim/seeds.txt). 138 (the same round: a keepalive
# in flight kept across a replaced session) fails
# test_replaced_session_sends_its_own_keepalive, 139 (a re-exec's unhealthy
# verdict kept with no check) test_resumed_unhealthy_without_a_check_is_healthy,
# 140 (`resigned` before the session owning the node is replaced)
# test_resign_refused_three_times_answers_after_the_restart. 141-143, the
# campaign on 7aa5e9e's (a NOAUTH answer not counted before a reconnect; a
# reload's shorter demote_timeout not taking back a lease-lost decision; a
# resume's startup demote letting requests go while its check is reaped)
# fail test_reconnect_lease_counts_a_refused_request,
# test_reload_shortening_demote_timeout_at_its_point_leads_on and
# test_owed_startup_demote_sends_nothing_before_it. 144 (a fence on a view
# of the breadcrumb from before the release that deleted it) fails
# test_heir_first_before_the_release_fences_only_what_is_left. 145 and 147
# (a tenth blind round's: a renewal taking back any lost contact; the
# claims' relist flag never cleared) are found by the simulator alone
# (tests/sim/seeds.txt); 146 (a reload's grace applied without clearing
# the one under way) fails test_disconnect_grace_reloaded_during_a_disconnect.
# 148 (the same round: unmarked nodes behind a head counted at its own
# priority) is found by the simulator alone. 149 (the same round: a
# queue read that finds nobody above the leader keeps the outranker seen
# before and its wait) fails test_preemption_wait_starts_again_after_a_drop;
# 150 (a leader's new data written to E/leader, not to its breadcrumb)
# fails test_new_data_applies_at_once; 151 (a resume that takes a claim
# not first for a first one, and demotes) fails
# test_resumed_heir_with_a_prepared_claim_runs_no_hook; 152 (a claim of
# sequence 0 not guarding its breadcrumb) fails
# test_own_node_deleted_while_leader. An eleventh blind round's: 153 (a
# session of two markers counted at the higher) fails
# test_session_of_two_markers_counts_at_the_lower; 154 (a lost release
# reply counted as an attempt) fails
# test_release_lost_twice_and_refused_once_goes_again; 155 (a reload
# moving the planned check by old - new) fails
# test_check_interval_reload_applies_at_once. A fresh schedule's: 156 (a
# resumed leader taking its promote's claim for its breadcrumb's) fails
# test_resumed_leader_releases_the_breadcrumb_of_its_ack. A twelfth
# blind round's: 157 (the outranker forgotten whenever outranking is not
# known) fails
# test_preemption_wait_runs_on_while_the_markers_are_read; 158 (a release
# deleting a marker the core is unsure of) fails
# test_marker_of_a_lost_release_is_deleted. A thirteenth blind round's:
# 159 (a fence killed at the demote point ending as a failed one, the
# state leading) fails test_fence_killed_at_the_demote_point_then_renewed.
# 160 (an unhealthy daemon's resign waiting for a rejoin) fails
# test_resign_answered_when_unhealthy_before_the_rejoin.
# 161 (a release after a lost create listing without the connection's
# sync) fails test_pause_after_lost_create_deletes_orphan; the simulator
# does not find it (tests/sim/README.md).
# 162 (our marker deleted by hand while any UNMARK flies taken for that
# UNMARK's deletion) fails
# test_marker_deleted_by_hand_during_a_reload_is_made_again.
# 163 (a change of the breadcrumb notified only re-arms its watch: a
# decision before the read's reply takes the old view) fails
# test_heir_reads_a_breadcrumb_written_after_its_read.
# test_marker_deleted_by_hand_during_a_reload_is_made_again. A
# fourteenth's: 165 (a leader not listed yet taken for one not first: a
# resumed leader demotes for preempted) fails
# test_resumed_leader_leads_on_without_a_hook (test_election_resume).
# A fourteenth blind round's: 164 (the promote's room dropped) fails
# test_no_promote_on_a_lease_nearly_spent.
# A core fix's (the session file's down line): 166 (the line ignored)
# fails test_resumed_down_does_not_demote_again (test_election_resume);
# 167 (down kept across a promote's start) fails
# test_down_from_a_demote_to_a_promote. 168 (the breadcrumb's version
# counted up at the ack) and 169 (a disconnect not noted while the lease
# was lost already) are the campaigns' finds, found by the simulator
# alone (tests/sim/seeds.txt).
for m in $(seq 1 25) 30 31 32 33 $(seq 40 49) 50 60 70 $(seq 83 94) 98 99 100 $(seq 101 109) 111 113 116 117 118 119 120 121 122 123 124 125 126 127 129 130 132 133 134 135 136 138 139 140 141 142 143 144 146 149 150 151 152 153 154 155 156 157 158 159 160 161 162 163 165 164 166 167; do
	t=test_election
	{ [ "$m" -ge 30 ] && [ "$m" -le 33 ]; } || [ "$m" -eq 92 ] ||
	    { [ "$m" -eq 94 ] || [ "$m" -eq 98 ]; } ||
	    [ "$m" -eq 109 ] ||
	    { [ "$m" -eq 123 ] || [ "$m" -eq 124 ]; } ||
	    { [ "$m" -eq 139 ] || [ "$m" -eq 143 ]; } ||
	    { [ "$m" -eq 151 ] || [ "$m" -eq 156 ]; } ||
	    { [ "$m" -eq 165 ] || [ "$m" -eq 166 ]; } &&
	    t=test_election_resume
	if ZKELECT_MUTANT=$m "$build/unit/$t" >/dev/null 2>&1; then
		echo "mutant $m: survived (no unit test fails)"
		survivors=$((survivors + 1))
	else
		echo "mutant $m: caught"
	fi
done
[ "$survivors" -eq 0 ]

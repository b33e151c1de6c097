#!/bin/sh
# app-hook.sh -- zkelectd promote, demote and check hook: starts and stops
# a systemd unit, so that the application runs on the leader only.
#
#   promote: systemctl start UNIT -- blocks until systemd's start job is
#            done: for Type=notify until the unit sent READY=1, for
#            Type=exec until it was executed, for Type=forking until its
#            parent exited.  A failed start fails the promote, so zkelectd
#            never announces a leader whose application did not come up.
#   demote:  systemctl stop UNIT -- blocks until the unit is stopped.
#            Stopping a unit that is not running succeeds, so the demote
#            at start (reason "startup") is safe.
# Starting a running unit or stopping a stopped one changes nothing.
#   check:   on the leader (ZKELECT_ROLE=leader), fails when the unit is
#            not active: with hooks.check set to this script, a leader
#            whose application died leaves the election after check_fall
#            failures and hands over.  Elsewhere it succeeds (the unit is
#            meant to be stopped there).
#
# Why through systemd and not "myapp &" from the hook: a process put in the
# background by a hook escapes the hook's time limit (zkelectd would report
# the promote done before the application is up), stays in zkelectd's own
# cgroup (so "systemctl restart zkelectd@web" kills it, and KillMode=mixed
# sends it SIGKILL), gets no supervision, logging or resource limits of its
# own, and survives zkelectd's kill of the hook's process group only if it
# left that group, in which case nothing stops it any more.  A unit has
# none of these problems.
#
# Wiring (see zkelectd.conf beside this file):
#   [hooks]
#   promote = /usr/local/lib/zkelectd/app-hook.sh myapp@web.service
#   demote = /usr/local/lib/zkelectd/app-hook.sh myapp@web.service
#   check = /usr/local/lib/zkelectd/app-hook.sh myapp@web.service
# zkelectd must be allowed to start the unit: root (the stock unit), or a
# polkit rule for a non-root zkelectd.  Keep the unit's TimeoutStartSec=
# below hooks.timeout and its TimeoutStopSec= below 3/4 of
# hooks.demote_timeout (the demote gets SIGTERM then).
#
# Exit status: 0 done, 1 systemctl failed or (check) the unit is not
# active on the leader, 2 usage.
set -u

prog=app-hook.sh
unit=${1:-}

say() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

if [ -z "$unit" ]; then
	say "usage: ZKELECT_EVENT=promote|demote|check $prog UNIT"
	exit 2
fi

case ${ZKELECT_EVENT:-} in
promote) action=start ;;
demote) action=stop ;;
check)
	[ "${ZKELECT_ROLE:-}" = leader ] || exit 0
	if ! systemctl is-active --quiet "$unit"; then
		say "$unit is not active on the leader"
		exit 1
	fi
	exit 0
	;;
*)
	say "ZKELECT_EVENT is '${ZKELECT_EVENT:-}'; this hook handles promote, demote and check"
	exit 2
	;;
esac

if ! systemctl "$action" "$unit"; then
	say "systemctl $action $unit failed"
	exit 1
fi
say "$action $unit: done"

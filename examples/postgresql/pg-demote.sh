#!/bin/sh
# pg-demote.sh -- zkelectd demote hook: make sure the local PostgreSQL is no
# longer a primary.
#
# A primary cannot turn back into a standby while it runs, so the demote
# stops it: "pg_ctl stop -m fast" (clients are disconnected, a checkpoint
# is written), and "-m immediate" when fast does not finish in STOP_WAIT
# seconds (default 3).  Bringing it back as a standby of the new primary
# (pg_rewind, standby.signal, start) is left to the operator or to your
# tooling: it needs a decision this hook cannot make.
#
# A standby (standby.signal in PGDATA) and a stopped server are left
# alone: that is the usual case at start (reason "startup") and on the
# followers.
#
# This must end within hooks.demote_timeout (SIGTERM at 3/4 of it): the
# example zkelectd.conf sets session_timeout = 30s and demote_timeout = 9s
# for that.  PGDATA must name the data directory and the hook must run as
# its owner or root (pg_ctl is run through runuser as PGUSER_OS, default
# postgres, when root).  pg_ctl is taken from PGBIN when set, else from
# the PATH, else from Debian's /usr/lib/postgresql/<PG_VERSION>/bin (Debian
# puts only pg_ctlcluster on the PATH).
#
# Wiring:
#   [hooks]
#   demote = /usr/local/lib/zkelectd/pg-demote.sh
#
# Exit status: 0 the server is not a primary any more, 1 it may still be.
set -u

prog=pg-demote.sh
STOP_WAIT=${STOP_WAIT:-3}
PGUSER_OS=${PGUSER_OS:-postgres}

say() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

if [ -z "${PGDATA:-}" ]; then
	say "PGDATA is not set"
	exit 1
fi

if [ -n "${PGBIN:-}" ]; then
	pg_ctl=$PGBIN/pg_ctl
elif command -v pg_ctl >/dev/null; then
	pg_ctl=$(command -v pg_ctl)
elif [ -r "$PGDATA/PG_VERSION" ]; then
	pg_ctl=/usr/lib/postgresql/$(cat "$PGDATA/PG_VERSION")/bin/pg_ctl
else
	pg_ctl=pg_ctl
fi
if [ ! -x "$pg_ctl" ]; then
	say "no pg_ctl ($pg_ctl): set PGBIN to PostgreSQL's bin directory"
	exit 1
fi

pgctl() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "$PGUSER_OS" -- "$pg_ctl" -D "$PGDATA" "$@"
	else
		"$pg_ctl" -D "$PGDATA" "$@"
	fi
}

# pg_ctl status: 0 running, 3 not running, 4 no accessible data directory.
pgctl status >/dev/null 2>&1
case $? in
0) ;;
3)
	say "PostgreSQL is not running: nothing to demote"
	exit 0
	;;
*)
	say "pg_ctl status failed for $PGDATA"
	exit 1
	;;
esac

# standby.signal marks a standby (PostgreSQL 12 and later) and goes away
# when it is promoted; a standby still starting up answers no query yet,
# so the file is the test, not pg_is_in_recovery().
if [ -e "$PGDATA/standby.signal" ]; then
	say "PostgreSQL is a standby: nothing to demote"
	exit 0
fi

say "stopping PostgreSQL (it is a primary)"
if pgctl stop -m fast -w -t "$STOP_WAIT" >/dev/null 2>&1; then
	exit 0
fi
say "fast shutdown did not finish in ${STOP_WAIT}s: immediate shutdown"
if pgctl stop -m immediate -w -t "$STOP_WAIT" >/dev/null 2>&1; then
	exit 0
fi
pgctl status >/dev/null 2>&1
if [ $? -eq 3 ]; then
	exit 0
fi
say "PostgreSQL is still running"
exit 1

#!/bin/sh
# pg-promote.sh -- zkelectd promote hook: make the local PostgreSQL the primary
# and record ZKELECT_EPOCH, zkelectd's fencing token, in the database.
#
# 1. If the local server is a standby, promote it (pg_promote(), waiting
#    up to PROMOTE_WAIT seconds, default 20, so keep it below
#    hooks.timeout) and check that it left recovery.
# 2. Record the epoch in the table zkelectd_epoch (created if missing):
#    one row per leadership, epoch as the primary key.  The row replicates
#    to the standbys, so every node and every client can read the epoch of
#    the current primary, and a writer can refuse to act on a stale one:
#      SELECT max(epoch) FROM zkelectd_epoch;
#    The epoch grows from one leader to the next; a promote again on the
#    same epoch (after a connection blip) keeps its row.
# 3. If the table already holds an epoch higher than ours, this server's
#    data has seen a newer leader than us: refuse (exit 1), so zkelectd
#    does not announce a leader on a server that is behind.
#
# Wiring (see zkelectd.conf beside this file):
#   [hooks]
#   promote = /usr/local/lib/zkelectd/pg-promote.sh
# The connection comes from the usual libpq variables (PGHOST, PGPORT,
# PGUSER, PGDATABASE, ...), e.g. set by Environment= in a drop-in of
# zkelectd@.service; the role needs pg_promote() (superuser or GRANT
# EXECUTE ON FUNCTION pg_promote) and the right to create the table.
# Run as root (as zkelectd runs it), psql runs as PGUSER_OS (default
# postgres) through runuser, so that Debian's default "local all postgres
# peer" lets it in.
#
# Exit status: 0 this server is the primary and the epoch is recorded;
# 1 otherwise (zkelectd then runs the demote hook and retries later);
# 2 not run by zkelectd or a bad PROMOTE_WAIT.
set -u

prog=pg-promote.sh
PROMOTE_WAIT=${PROMOTE_WAIT:-20}
PGUSER_OS=${PGUSER_OS:-postgres}
epoch=${ZKELECT_EPOCH:-}
id=${ZKELECT_ID:-}

say() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

case $epoch in
'' | *[!0-9]*)
	say "ZKELECT_EPOCH '$epoch' is not a number (run me from zkelectd)"
	exit 2
	;;
esac
case $PROMOTE_WAIT in
'' | *[!0-9]*)
	say "PROMOTE_WAIT '$PROMOTE_WAIT' is not a number of seconds"
	exit 2
	;;
esac

sql() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "$PGUSER_OS" -- psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"
	else
		psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"
	fi
}

if ! recovery=$(sql -c 'SELECT pg_is_in_recovery()'); then
	say "cannot reach the local PostgreSQL server"
	exit 1
fi
if [ "$recovery" = t ]; then
	say "promoting the standby (waiting up to ${PROMOTE_WAIT}s)"
	if ! done=$(sql -c "SELECT pg_promote(true, $PROMOTE_WAIT)" 2>&1) ||
	    [ "$done" != t ]; then
		say "pg_promote failed: $done"
		exit 1
	fi
fi
if [ "$(sql -c 'SELECT pg_is_in_recovery()')" != f ]; then
	say "the server is still in recovery after the promote"
	exit 1
fi

# psql interpolates :epoch and :'id' (quoted as a literal) in its input.
if ! newer=$(sql -v epoch="$epoch" -v id="$id" <<'SQL'
CREATE TABLE IF NOT EXISTS zkelectd_epoch (
	epoch bigint PRIMARY KEY,
	id text NOT NULL,
	promoted_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO zkelectd_epoch (epoch, id)
	SELECT :epoch, :'id'
	WHERE NOT EXISTS (SELECT 1 FROM zkelectd_epoch WHERE epoch > :epoch)
	ON CONFLICT (epoch) DO NOTHING;
SELECT max(epoch) FROM zkelectd_epoch WHERE epoch > :epoch;
SQL
); then
	say "could not record epoch $epoch"
	exit 1
fi
if [ -n "$newer" ]; then
	say "the database already records epoch $newer > $epoch: refusing"
	exit 1
fi
say "primary at epoch $epoch"

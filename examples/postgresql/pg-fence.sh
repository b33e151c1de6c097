#!/bin/sh
# pg-fence.sh -- zkelectd fence hook: make sure the previous primary can no
# longer accept writes before this node promotes.
#
# zkelectd runs the fence hook on a new leader, before its promote hook,
# when the previous leader did not hand over in order (it crashed, froze,
# or lost ZooKeeper and may not have run its demote hook).  Its identity is
# in ZKELECT_FENCE_ID, ZKELECT_FENCE_DATA (e.g. host:port, what it set as
# election.data) and ZKELECT_FENCE_EPOCH.  If this hook fails, zkelectd
# does not promote: a failed fence is safe, a fake success is not.
#
# There is no way to fence a PostgreSQL server from here that fits every
# site, so this script runs the command you give it, the STONITH of your
# setup, and refuses to succeed without one:
#   - power the old node off through its BMC:
#       ipmitool -I lanplus -H "bmc-$ZKELECT_FENCE_ID" -U fence -E \
#           chassis power off
#   - stop its PostgreSQL over ssh:
#       ssh "postgres@$ZKELECT_FENCE_ID" pg_ctl -D /var/lib/... stop -m immediate
#   - cut it off the storage or the network (switch port, cloud API).
# The command is FENCE_COMMAND (run by /bin/sh -c, with ZKELECT_FENCE_* in
# its environment); it must exit 0 only once the old primary is fenced.
#
# After it succeeds, if ZKELECT_FENCE_DATA is host:port and that server
# still answers as a primary (pg_is_in_recovery() false), the fence did not
# work: exit 1.  A server that still accepts connections but whose role
# cannot be read (Debian's default pg_hba.conf wants a password over TCP:
# give one through PGPASSFILE or PGPASSWORD) counts as not fenced too.
# (An unreachable server proves nothing on its own, which is why the
# command is required.)
#
# Wiring:
#   [hooks]
#   fence = /usr/local/lib/zkelectd/pg-fence.sh
# with FENCE_COMMAND set for zkelectd, e.g. in a drop-in of
# zkelectd@.service: Environment="FENCE_COMMAND=/usr/local/sbin/stonith"
#
# Exit status: 0 fenced, 1 not fenced (zkelectd does not promote).
set -u

prog=pg-fence.sh
old=${ZKELECT_FENCE_ID:-}
olddata=${ZKELECT_FENCE_DATA:-}
oldepoch=${ZKELECT_FENCE_EPOCH:-}

say() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

if [ -z "${FENCE_COMMAND:-}" ]; then
	say "previous leader '$old' (epoch $oldepoch) left without demoting,"
	say "and no FENCE_COMMAND is set: cannot fence it, so not promoting."
	say "Set FENCE_COMMAND to a command that powers it off or stops its"
	say "PostgreSQL, or bring it down by hand and restart this node."
	exit 1
fi

say "fencing '$old' (epoch $oldepoch, data '$olddata'): $FENCE_COMMAND"
if ! /bin/sh -c "$FENCE_COMMAND"; then
	say "FENCE_COMMAND failed: '$old' is not fenced"
	exit 1
fi

case $olddata in
?*:*[0-9])
	if ! command -v psql >/dev/null; then
		say "no psql: cannot check that $olddata stopped answering"
		say "'$old' fenced (by FENCE_COMMAND alone)"
		exit 0
	fi
	host=${olddata%:*}
	port=${olddata##*:}
	recovery=$(psql -X -q -A -t -h "$host" -p "$port" \
	    -d "dbname=postgres connect_timeout=3" \
	    -c 'SELECT pg_is_in_recovery()' 2>/dev/null)
	if [ "$recovery" = f ]; then
		say "$host:$port still answers as a primary after the fence"
		exit 1
	fi
	if [ -z "$recovery" ] && command -v pg_isready >/dev/null &&
	    pg_isready -q -h "$host" -p "$port" -t 3; then
		say "$host:$port still accepts connections after the fence," \
		    "and its role cannot be read (a password for psql?)"
		exit 1
	fi
	;;
esac
say "'$old' fenced"

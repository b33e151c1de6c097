#!/bin/bash
# Failover benchmark (issue 8): zkelectd against kazoo's Election recipe and
# etcd's election, with one hook script, on this machine. Run by hand, not
# part of `make check`. See bench/failover/README.md.
#
# Usage (as root on Debian 12, from anywhere):
#   bench/failover/run.sh [--rounds N] [--quick] [--zkelectd PATH] [--keep]
#                         [--json FILE] [more options: run.sh --help]
#
# Needs: the packages of scripts/deps.sh (ZooKeeper, Java, python3-kazoo),
# and for the etcd columns Debian's etcd (not in scripts/deps.sh on purpose):
#   apt-get install -y etcd-server etcd-client
# (the package enables an etcd.service; this script never uses it, it starts
# its own server on free loopback ports). Without etcd, etcd is skipped.
#
# ZKELECTD=/path/to/zkelectd (or --zkelectd) measures another binary;
# default: build/zkelectd of this checkout (built with `make` if missing).
# Everything runs in a temporary directory, removed on exit (--keep keeps
# it); every process the run started is killed however it ends.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
KEEP=0
ZKELECTD_ARG=""
prev=""
for arg in "$@"; do
	case $arg in
	--keep) KEEP=1 ;;
	-h | --help)
		exec /usr/bin/python3 "$HERE/bench.py" --dir /nonexistent --help
		;;
	esac
	if [ "$prev" = --zkelectd ]; then
		ZKELECTD_ARG=$arg
	fi
	prev=$arg
done
if [ -z "$ZKELECTD_ARG" ] && [ -z "${ZKELECTD:-}" ]; then
	make -C "$REPO" -s all # the checkout's binary, up to date
fi
export PYTHONDONTWRITEBYTECODE=1

# 500 daemons, their sockets and ZooKeeper's 500 connections.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
ulimit -u unlimited 2>/dev/null || true

DIR=$(mktemp -d /tmp/zkfailover.XXXXXX)
MARK="BENCH_FAILOVER_DIR=$DIR"
# The daemons' runtime files (status files, sockets, logs) on a tmpfs, as
# their default /run/zkelectd is on a real host: not on the disk whose
# journal ZooKeeper's fsync of every write has to commit.
RUNDIR=$(mktemp -d /dev/shm/zkfailover.XXXXXX)

# Last resort: kill whatever carries this run's mark in its environment
# (bench.py sets it in every child), then remove the directory.
PYPID=""
cleanup() {
	local pids pid i
	if [ -n "$PYPID" ] && kill -0 "$PYPID" 2>/dev/null; then
		kill -TERM "$PYPID" 2>/dev/null || true
		for i in $(seq 100); do
			kill -0 "$PYPID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$PYPID" 2>/dev/null || true
	fi
	for i in $(seq 50); do
		pids=$(grep -lzsx -F -e "$MARK" /proc/[0-9]*/environ 2>/dev/null |
			sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p') || true
		[ -n "$pids" ] || break
		for pid in $pids; do
			kill -KILL "$pid" 2>/dev/null || true
		done
		[ "$i" -lt 50 ] && sleep 0.1
	done
	if [ "$KEEP" = 1 ]; then
		# The runtime files join the rest, where they were before.
		find "$DIR" -maxdepth 1 -type l -name 'zkelectd-*' -delete
		cp -a "$RUNDIR"/. "$DIR"/ 2>/dev/null || true
		rm -rf "$RUNDIR"
		echo "kept $DIR" >&2
	else
		rm -rf "$DIR" "$RUNDIR"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# In the background, so that a signal to this script runs the trap at once.
/usr/bin/python3 "$HERE/bench.py" --dir "$DIR" --run-dir "$RUNDIR" "$@" &
PYPID=$!
wait "$PYPID"

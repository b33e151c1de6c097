#!/bin/sh
# bench/maintenance: zkelectd and kazoo's Election through routine ZooKeeper
# maintenance, in one run. Run by hand, as root, on Debian 12 (the packages
# of scripts/deps.sh); see README.md. Arguments go to bench.py:
#   bench/maintenance/run.sh [--zkelectd PATH] [--timeouts 10 4] [--json FILE]
# Without --zkelectd, build/zkelectd of this checkout (made first).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
case " $* " in
*" --zkelectd "*) ;;
*) make -C "$REPO" -s all ;;
esac
DIR=$(mktemp -d /tmp/zkmaint.XXXXXX)
# BENCH_KEEP=1 keeps the daemons' logs, configs and hook lines.
if [ "${BENCH_KEEP:-0}" = 1 ]; then
	trap 'echo "kept $DIR" >&2' EXIT
else
	trap 'rm -rf "$DIR"' EXIT
fi
# Every child is started with PDEATHSIG (zkharness._spawn): none outlives
# bench.py, however it ends.
PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$HERE/bench.py" --dir "$DIR" "$@"

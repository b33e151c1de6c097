#!/bin/bash
# What the handoff's company costs the successor: the bare client's whole
# handoff of zkelectd's protocol (floor2.py MULTI 4) in four variants,
# alternating on one throwaway ZooKeeper: as it is (a third session that
# sets its watch of E/leader again, the old session closed at the reply),
# the close 30 ms later, no third session, and neither. Prints each
# variant's median gap per round.
#   bench/failover/company.sh [ROUNDS [N]]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
# shellcheck source=scripts/zklib.sh
. scripts/zklib.sh
rounds=${1:-4} n=${2:-30}
dir=$(mktemp -d /tmp/company.XXXXXX)
ZK_PID=
trap '[ -z "$ZK_PID" ] || kill -- -"$ZK_PID" 2>/dev/null; rm -rf "$dir"' EXIT
zk_start "$dir/zk" 60
hp=127.0.0.1:$ZK_PORT
/usr/bin/python3 "$here/floor2.py" "$hp" 20 4 >/dev/null	# JIT warm-up
variants=("as-it-is" "late-close FLOOR2_LATE_CLOSE_MS=30"
    "no-third FLOOR2_NO_THIRD=1"
    "neither FLOOR2_LATE_CLOSE_MS=30 FLOOR2_NO_THIRD=1")
for r in $(seq "$rounds"); do
	echo "round $r"
	for v in "${variants[@]}"; do
		read -r -a words <<<"$v"
		env "${words[@]:1}" /usr/bin/python3 "$here/floor2.py" "$hp" \
		    "$n" 4 | /usr/bin/python3 -c '
import json, statistics, sys
r = sorted(json.load(sys.stdin))
print(f"  {sys.argv[1]:<11} median {statistics.median(r):.2f} ms, "
      f"min {r[0]:.2f}, max {r[-1]:.2f}")' "${words[0]}"
	done
done

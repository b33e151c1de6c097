#!/bin/bash
# The release's notification between two processes, three clients side by
# side on one throwaway ZooKeeper: libzookeeper_mt (as zkelectd), the
# threadless libzookeeper_st, and the bare protocol client (floor2.py);
# the bare client also as zkelectd's release meets its successor (five
# deletes, a third watcher, the deleter closing: floor2.py's MULTI 2), and
# with the claim deleted first (MULTI 3).
# Rounds alternate; each prints its median. Needs libzookeeper-st2 for the
# st build (it is skipped without).
#   bench/failover/floor2.sh [ROUNDS [N]]
# With `company` first, it measures instead what the handoff's company
# costs: the bare client's whole handoff (floor2.py MULTI 4) as it is (a
# third session that sets its watch of E/leader again, the old session
# closed at the reply), the close 30 ms later, no third session, and
# neither, alternating; each variant's median per round.
#   bench/failover/floor2.sh company [ROUNDS [N]]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
# shellcheck source=scripts/zklib.sh
. scripts/zklib.sh
company=0
if [ "${1:-}" = company ]; then
	company=1
	shift
fi
rounds=${1:-3} n=${2:-30}
dir=$(mktemp -d /tmp/floor2.XXXXXX)
ZK_PID=
trap '[ -z "$ZK_PID" ] || kill -- -"$ZK_PID" 2>/dev/null; rm -rf "$dir"' EXIT
if [ "$company" = 1 ]; then
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
			env "${words[@]:1}" /usr/bin/python3 "$here/floor2.py" \
			    "$hp" "$n" 4 | /usr/bin/python3 -c '
import json, statistics, sys
r = sorted(json.load(sys.stdin))
print(f"  {sys.argv[1]:<11} median {statistics.median(r):.2f} ms, "
      f"min {r[0]:.2f}, max {r[-1]:.2f}")' "${words[0]}"
		done
	done
	exit 0
fi
cc -O2 -DTHREADED -o "$dir/floor2-mt" "$here/floor2.c" -lzookeeper_mt
st=/usr/lib/x86_64-linux-gnu/libzookeeper_st.so.2
if [ -e "$st" ]; then
	cc -O2 -o "$dir/floor2-st" "$here/floor2.c" "$st"
fi
zk_start "$dir/zk" 60
hp=127.0.0.1:$ZK_PORT
"$dir/floor2-mt" "$hp" 10 1 >/dev/null	# the server's JIT warms up
for r in $(seq "$rounds"); do
	echo "round $r"
	"$dir/floor2-mt" "$hp" "$n" 1
	if [ -x "$dir/floor2-st" ]; then "$dir/floor2-st" "$hp" "$n" 1; fi
	for m in 1 2 3; do
		/usr/bin/python3 "$here/floor2.py" "$hp" "$n" "$m" |
		    /usr/bin/python3 -c '
import json, statistics, sys
what = {"1": "two processes, multi of four",
        "2": "the release as it is (five deletes, the claim then the "
             "breadcrumb last, four watched, a third watcher, the "
             "deleter closing)",
        "3": "the same, the claim deleted first"}[sys.argv[1]]
r = sorted(json.load(sys.stdin))
print(f"bare client, {what}: median "
      f"{statistics.median(r):.2f} ms, min {r[0]:.2f}, max {r[-1]:.2f}")' "$m"
	done
done

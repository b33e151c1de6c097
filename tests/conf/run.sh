#!/bin/sh
# Config golden tests: for each tests/conf/NAME.conf, runs
#   build/zkelectd -t -c tests/conf/NAME.conf
# from the repository root and compares its output (stdout and stderr
# together) with NAME.expected.  "configuration OK" must come with exit
# status 0, anything else with 1.  ZKELECTD=path picks another binary
# (e.g. ZKELECTD=build-san/zkelectd).
set -u

cd "$(dirname "$0")/../.." || exit 1
bin=${ZKELECTD:-build/zkelectd}
if [ ! -x "$bin" ]; then
	echo "$bin: not built (run make)" >&2
	exit 1
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

passed=0
failed=0
for conf in tests/conf/*.conf; do
	name=$(basename "$conf" .conf)
	expected=tests/conf/$name.expected
	if [ ! -f "$expected" ]; then
		echo "FAIL $name"
		echo "  missing $expected"
		failed=$((failed + 1))
		continue
	fi
	if [ "$(cat "$expected")" = "configuration OK" ]; then
		want_rc=0
	else
		want_rc=1
	fi
	timeout 10 "$bin" -t -c "$conf" >"$tmp/out" 2>&1
	rc=$?
	if cmp -s "$expected" "$tmp/out" && [ "$rc" -eq "$want_rc" ]; then
		echo "ok $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name"
		[ "$rc" -eq "$want_rc" ] ||
		    echo "  exit status $rc, expected $want_rc"
		diff -u "$expected" "$tmp/out" | sed 's/^/  /'
		failed=$((failed + 1))
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

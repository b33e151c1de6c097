#!/bin/bash
# The rows of a campaign table from a tests/sim/longrun.sh ledger: one per
# combination whose chunks all passed and add up to COUNT schedules
#   combination | flags | schedules | failed | events | wall | date (UTC)
# (wall: the chunks' own times summed; date: the first chunk's start), in
# the order of combinations; then, on standard error, a line for each
# combination still short of COUNT and each chunk that failed.
#   tests/sim/ledger-table.sh LEDGER [COUNT]
set -u
ledger=$1
count=${2:-1000000}
awk -v want="$count" '
/^combo [0-9]+ chunk [0-9]+ / {
	c = $2 + 0
	k = $4 + 0
	if (!match($0, / rc [0-9]+ ::/))
		next
	rc = substr($0, RSTART + 4, RLENGTH - 7) + 0
	if (rc != 0) {
		printf "combination %d chunk %d: rc %d\n", c, k, rc > "/dev/stderr"
		next
	}
	if ((c, k) in seen)
		next
	seen[c, k] = 1
	f = $0
	sub(/^.* flags: /, "", f)
	sub(/ start .*$/, "", f)
	flags[c] = f
	s = $0
	sub(/^.* start /, "", s)
	sub(/ .*$/, "", s)
	if (!(c in first) || s < first[c])
		first[c] = s
	if (match($0, /sim: [0-9]+ schedules, [0-9]+ passed, [0-9]+ failed, [0-9]+ events, [0-9.]+ s/)) {
		split(substr($0, RSTART, RLENGTH), w, /[ ,]+/)
		n[c] += w[2]
		bad[c] += w[6]
		ev[c] += w[8]
		wall[c] += w[10]
	}
	any[c] = 1
}
END {
	for (c = 0; c <= 1000; c++) {
		if (!(c in any))
			continue
		if (n[c] != want) {
			printf "combination %d: %d of %d schedules\n", c, n[c],
			    want > "/dev/stderr"
			continue
		}
		f = flags[c]
		sub(/ ?-A$/, "", f)
		if (f == "" || f == "none")
			f = "(none)"
		d = first[c]
		sub(/T/, " ", d)
		sub(/:[0-9]+$/, "", d)
		printf "| %d | %s | %d | %d | %.2f G | %d s | %s |\n", c, f,
		    n[c], bad[c], ev[c] / 1e9, wall[c] + 0.5, d
	}
}' "$ledger"

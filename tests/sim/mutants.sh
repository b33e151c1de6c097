#!/bin/bash
# Finds, for each mutant of the core (issue 7's defect N put back by
# EL_MUTANT(N), a build with -DEL_MUTANTS), seeds on which the simulator
# reports that defect's violation while the core as it is passes the same
# seed. Prints them as tests/sim/seeds.txt lines; the trajectories depend
# on the core, so after a change of the core the seeds of seeds.txt are
# found again with this script.
#   tests/sim/mutants.sh [BUILD_DIR [COUNT [PER_MUTANT [MUTANT...]]]]
# Exits 1 if some mutant has no such seed among COUNT (default 5000).
set -u
build=${1:-build-mut}
count=${2:-5000}
want=${3:-2}
shift $(($# < 3 ? $# : 3))
only=" $* "
sim="$build/sim"
admin=delete-leader,delete-node,delete-claim

# mutant; fault kinds left out; what its violation looks like (an
# extended regex, | within it); and the model's options it needs (for
# build/sim, then as seeds.txt words), separated by ';'; tied faults
# (-y) and loop stalls (-Y) only where the options ask for them. Mutant
# 123 (a chain: a crash between a resume's decision and its demote) and
# 156 (a chain: a claim deleted mid-promote, a re-exec, a node deleted by
# hand) have the one seed that found each in seeds.txt. Mutants 6, 11,
# 19, 21, 24 and 161 are not here: the simulator does not find them
# (tests/sim/README.md, "Mutants the simulator does not find").
spec() {
	cat <<EOT
1;$admin;\((a|c|g|L1)\)
2;$admin;owns 0 candidate|0 leader|owns 2|resign asked|first claim is|holds no claim
3;$admin;paused but owns|owns 2|unhealthy but owns
4;delete-leader;0 leader|stuck
5;$admin;\(b\) .*check starts while
7;$admin;\(h\) .*demote with epoch
8;$admin;\(a\) two|\((g|c)\)
9;$admin;\(g\)|deadline stays;-L;l=1
10;$admin;sessions replaced
12;delete-leader;\(a\) two|\(d\)
13;$admin;\(a\) two|0 leader|first claim is missing|claims besides
15;$admin;\(d\) .*below the last|not the first|\(j\)
16;$admin;\(d\) .*below the last|not the first|\(j\)
17;delete-node;E/leader is missing|reports leader
18;$admin;\(a\) two|\(i\)
25;$admin;\(L1\);-L;l=1
26;$admin;\(L1\);-L;l=1
27;$admin;\(L1\);-k 2000;k=2000
28;$admin;\(L2\) .*promote starts
14;$admin;\(L1\);-L;l=1
20;$admin;\(L1\)
32;$admin;\(AV\) .*reconnect;-L -R -A;l=1 r=1 A=1
46;;\(data\);-k 2000;k=2000
47;;\(data\);-k 2000;k=2000
40;;\(data\) .*marker;-P -W;p=1 w=1
48;;\(prio\) .*but set to;-P -W -k 2000;p=1 w=1 k=2000
41;;\(prio\) .*preempts;-P -W;p=1 w=1
42;;\(prio\) .*yields;-P -W;p=1 w=1
43;;\(sw\);-P -W;p=1 w=1
44;;pause asked
45;;unhealthy with no check|\(health\) .*unhealthy, but;-H;h=1
30;;\((h|f|j|i|a)\);-R;r=1
31;;stays at or before now;-R;r=1
82;;\(data\);-P -R -H -A;p=1 r=1 h=1 A=1
33;;\(data\) .*marker|\(prio\);-P -R;p=1 r=1
60;auth;\(a\) two|on a claim behind
50;;\(top\);-P -W;p=1 w=1
70;;\(st\)
22;;\(self\)
23;;\(prio\) .*again;-P;p=1
49;;\(prio\) .*taken for priority 0;-P -W;p=1 w=1
88;delete-leader,delete-node;holds no claim
89;delete-node;0 leader|first claim is
90;delete-node;0 leader|first claim is
91;;\(data\) .*no marker at the end;-P -W;p=1 w=1
92;delete-leader,delete-node;\((g|h)\);-R;r=1
100;;\(i\) .*deletes the breadcrumb;-k 2000 -A;k=2000 A=1
101;;\(pause\)
102;;\(health\)
103;;\(idle\)
104;;\(idle\) .*queue reads;-P;p=1
105;;\(idle\) .*keepalive syncs
106;;\(rel\)
107;;\(hand\)
108;;without a prepared claim
112;;\(answer\) .*target-gone;-W;w=1
113;;\(h\) .*resign;-W;w=1
114;;\(rel\) .*leaves the breadcrumb
115;;\(rel\) .*leaves the breadcrumb;-R;r=1
116;;\(b\) .*killed;-L;l=1
121;;\(G\)
122;;\(L1\);-Y 3000;Y=3000
119;;\(j\) .*creates .*without the first claim;-W -y 200;w=1 y=200
120;;\(j\) .*creates .*without the first claim|\(i\);-W -y 200;w=1 y=200
124;;\(RS\);-R -A;r=1 A=1
125;;\(DT\);-H;h=1
126;;\(pause\) .*hook runs
127;;\(L2\);-H -A;h=1 A=1
128;;\(prio\) .*within its preempt_delay;-P;p=1
129;;\(prio\) .*makes its marker;-P -W;p=1 w=1
130;;\(L2\) .*less the margin
131;;\(resign\);-W;w=1
132;;\(h\) .*promote-failed
133;;\((G|AV)\);-H -A -L;h=1 A=1 l=1
134;;\((G|AV)\);-H -A -L;h=1 A=1 l=1
135;;\(rel\) .*leaves the breadcrumb
136;;\(stop\)
137;;\(back\)
138;;\(keep\);-H;h=1
139;;\(health\)|\(f\);-R -H;r=1 h=1
140;;\(resign\);-H;h=1
141;;\(AV\) .*reconnect;-k 2000 -W -P -H -A -y c -Y c;k=2000 w=1 p=1 h=1 A=1 y=c Y=c z=1
142;;\(AV\);-k 2000 -W -K -H -A -y c -Y c;k=2000 w=1 K=1 h=1 A=1 y=c Y=c z=1
143;;\(g\) .*before demoting;-W -K -R -A -y c -Y c;w=1 K=1 r=1 A=1 y=c Y=c z=1
144;;\(i\) .*fences;-A -y c -Y c;A=1 y=c Y=c z=1
145;;\(G\);-W -P -L -H -A;w=1 p=1 l=1 h=1 A=1
146;;\(AV\) .*disconnected;-P -H -A -y c -Y c;p=1 h=1 A=1 y=c Y=c z=1
147;;\(f\);-k 2000 -A;k=2000 A=1
148;;\(prio\) .*promotes with priority;-k 2000 -P -A -y c -Y c;k=2000 p=1 A=1 y=c Y=c z=1
149;server-cut,server-crash,server-lag,blip,isolate,freeze,crash,resign,stop,delete-node,delete-leader,health,set-data,auth,delete-claim;\(prio\) .*with a priority not above;-P;p=1
150;;\(crumb\);-A;A=1
151;;\(RH\);-R -A;r=1 A=1
152;;\(rel\) .*leaves the breadcrumb
153;server-cut,server-crash,server-lag,blip,isolate,freeze,crash,resign,stop,delete-node,delete-leader,health,set-data,auth,delete-claim,forge-mark;\(prio\) .*has a marker of priority;-P -W -y c -Y c;p=1 w=1 y=c Y=c z=1
154;server-lag,freeze,crash,pause,resume,stop,health,set-data,auth,priority,forge-mark,election,reexec,run-exit,check-reload;\(rel\) .*gives its release up;-y 1000;y=1000 z=1
155;;\(health\) .*(was due at|needless);-H;h=1
157;;\(prio\) .*told again;-P;p=1
158;server-crash,server-lag,isolate,freeze,crash,stop,delete-node,delete-leader,health,set-data,auth,switchover,forge-mark,server-restart,election,reexec,run-exit,check-reload,delete-claim,acl;\(rel\) .*never held;-P -y 1000;p=1 y=1000 z=1
159;;\((undo|ack)\);-L -A;l=1 A=1
160;server-cut,server-crash,server-lag,freeze,crash,pause,resume,stop,delete-node,delete-leader,set-data,auth,switchover,priority,forge-mark,server-restart,election,reexec,run-exit,check-reload,delete-claim,acl;\(resign\) .*not answered;-H;h=1
162;server-cut,server-crash,server-lag,blip,isolate,freeze,crash,delete-node,delete-leader,health,set-data,auth,server-restart,election,reexec,run-exit,check-reload,delete-claim,acl;\(rel\) .*told was deleted;-P -y 1000;p=1 y=1000 z=1
163;;\((i|rel)\);-H -A -y c -Y c;h=1 A=1 y=c Y=c z=1
165;;\(h\) .*demotes for preempted;-R;r=1
166;;\(RH\);-R -A -k 2000 -y c -Y c;k=2000 r=1 A=1 y=c Y=c z=1
167;;\((a|c|g|h|L|L1|ack|b|undo)\);-R -A -y c -Y c;r=1 A=1 y=c Y=c z=1
164;;\(room\);-A;A=1
EOT
}

missing=0
while IFS=';' read -r m off re opts words; do
	[ "$only" = "  " ] || [[ "$only" == *" $m "* ]] || continue
	# Tied faults only where the spec asks (as a seeds.txt line has
	# none without y=); "-y c" and "-Y c" draw them as a campaign does
	# (the simulator's default: its words say y=c Y=c z=1).
	# Mutants 141-143 and 146 are rare under their flags (the campaign
	# found the first three about once in 100,000 schedules; none in
	# 6,000): look for them with a COUNT of 200,000.
	[[ " $opts " == *" -y "* ]] || opts="-y 0 $opts"
	[[ " $opts " == *" -Y "* ]] || opts="-Y 0 $opts"
	opts=${opts//-y c/}
	opts=${opts//-Y c/}
	found=0
	# shellcheck disable=SC2086 # opts are words on purpose
	while read -r seed why; do
		if ZKELECT_MUTANT=0 "$sim" -s "$seed" -n 1 -t 0 -D "$off" \
		    $opts >/dev/null; then
			printf '%-6s D=%s%s m=%s  # %s\n' "$seed" "$off" \
			    "${words:+ $words}" "$m" "${why#t=* }"
			found=$((found + 1))
			[ "$found" -ge "$want" ] && break
		fi
	done < <(ZKELECT_MUTANT=$m "$sim" -s 1 -n "$count" -t 0 -D "$off" $opts |
	    sed -n 's/^sim: seed \([0-9]*\) FAILED: \(.*\)/\1 \2/p' |
	    grep -E -- "$re")
	if [ "$found" -eq 0 ]; then
		echo "# mutant $m: no seed among $count"
		missing=$((missing + 1))
	fi
done < <(spec)
[ "$missing" -eq 0 ]

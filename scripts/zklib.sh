# shellcheck shell=bash
# Helpers shared by scripts/demo.sh and bench/socket/run.sh: a throwaway
# ZooKeeper on a free loopback port. Source it; it defines functions only.

# now_ms: a clock for deadlines, in milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# zk_reserve_port: sets ZK_PORT to a loopback port for the server, the way
# tests/integration/ports.py reserves them (read why there): outside the
# kernel's ephemeral range, which connect() and bind(0) draw from, and
# locked (flock) in the directory ports.py shares, so that concurrent runs
# never pick the same port. The lock is held on descriptor ZK_PORT_LOCK_FD
# of this shell, and so of what it starts, until they exit. Not to be run
# in a subshell: the lock would go with it.
zk_reserve_port() {
	local lo hi first last port fd
	if ! read -r lo hi </proc/sys/net/ipv4/ip_local_port_range; then
		lo=32768 hi=60999
	fi
	if [ $((lo - 10000)) -ge 1024 ]; then
		first=$((lo - 10000)) last=$((lo - 1))
	else
		first=$((hi + 1)) last=$((hi + 10000 > 65535 ? 65535 : hi + 10000))
	fi
	mkdir -m 1777 /tmp/zkelectd-ports 2>/dev/null ||
	    [ -d /tmp/zkelectd-ports ] || return 1
	for port in $(shuf -i "$first-$last" -n 200); do
		exec {fd}<>"/tmp/zkelectd-ports/$port" || continue
		if flock -n "$fd" && /usr/bin/python3 -c 'import socket, sys
socket.socket().bind(("127.0.0.1", int(sys.argv[1])))' "$port" 2>/dev/null; then
			ZK_PORT=$port
			# shellcheck disable=SC2034 # kept open, not read
			ZK_PORT_LOCK_FD=$fd
			return 0
		fi
		exec {fd}>&-
	done
	echo "no free loopback port in $first-$last" >&2
	return 1
}

# zk_mode PORT: prints the server's Mode (standalone, leader, ...) once it
# serves; `ruok` says imok too early, `srvr` answers only when serving.
zk_mode() {
	local answer
	answer=$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 &&
	    printf srvr >&3 && cat <&3" 2>/dev/null) || return 1
	sed -n 's/^Mode: //p' <<<"$answer" | grep .
}

# The servers' tickTime, in ms: zkelectd's zookeeper.tick_time must match.
ZK_TICK_MS=200

# zk_start DIR SECONDS: starts a standalone ZooKeeper (tickTime ZK_TICK_MS) with
# its data, configuration and log in DIR, in a process group of its own, and
# waits until it serves. Sets ZK_PORT, ZK_PID (also the group id) and ZK_MODE
# (its first answer's: a second question may time out on a loaded machine).
# Returns 1 with the reason on stderr when it exits or does not serve in time.
zk_start() {
	local dir=$1 deadline
	zk_reserve_port || return 1
	mkdir -p "$dir/data"
	cat >"$dir/zoo.cfg" <<-EOF
	tickTime=$ZK_TICK_MS
	dataDir=$dir/data
	clientPort=$ZK_PORT
	clientPortAddress=127.0.0.1
	admin.enableServer=false
	4lw.commands.whitelist=srvr
	minSessionTimeout=$((2 * ZK_TICK_MS))
	maxSessionTimeout=60000
	maxClientCnxns=0
	EOF
	cat >"$dir/log4j.properties" <<-'EOF'
	log4j.rootLogger=WARN, CONSOLE
	log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
	log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
	log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p %m%n
	EOF
	# The directory comes first on the class path: log4j finds its
	# properties there. zookeeper.jar's manifest names its other needs.
	setsid java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
	    -Djava.net.preferIPv4Stack=true \
	    -cp "$dir:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar" \
	    org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" \
	    </dev/null >"$dir/zookeeper.log" 2>&1 &
	ZK_PID=$!
	deadline=$(($(now_ms) + $2 * 1000))
	# shellcheck disable=SC2034 # ZK_MODE is for the caller
	until ZK_MODE=$(zk_mode "$ZK_PORT"); do
		if ! kill -0 "$ZK_PID" 2>/dev/null; then
			tail -n 20 "$dir/zookeeper.log" >&2
			echo "ZooKeeper exited" >&2
			return 1
		fi
		if [ "$(now_ms)" -ge "$deadline" ]; then
			echo "ZooKeeper did not serve within $2 s" >&2
			return 1
		fi
		sleep 0.2
	done
}

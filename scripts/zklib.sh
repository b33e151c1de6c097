# shellcheck shell=bash
# Helpers shared by scripts/demo.sh and bench/socket/run.sh: a throwaway
# ZooKeeper on a free loopback port. Source it; it defines functions only.

# now_ms: a clock for deadlines, in milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

free_port() {
	/usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# zk_mode PORT: prints the server's Mode (standalone, leader, ...) once it
# serves; `ruok` says imok too early, `srvr` answers only when serving.
zk_mode() {
	local answer
	answer=$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 &&
	    printf srvr >&3 && cat <&3" 2>/dev/null) || return 1
	sed -n 's/^Mode: //p' <<<"$answer" | grep .
}

# zk_start DIR SECONDS: starts a standalone ZooKeeper (tickTime 200 ms) with
# its data, configuration and log in DIR, in a process group of its own, and
# waits until it serves. Sets ZK_PORT and ZK_PID (also the group id).
# Returns 1 with the reason on stderr when it exits or does not serve in time.
zk_start() {
	local dir=$1 deadline
	ZK_PORT=$(free_port)
	mkdir -p "$dir/data"
	cat >"$dir/zoo.cfg" <<-EOF
	tickTime=200
	dataDir=$dir/data
	clientPort=$ZK_PORT
	clientPortAddress=127.0.0.1
	admin.enableServer=false
	4lw.commands.whitelist=srvr
	minSessionTimeout=400
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
	until zk_mode "$ZK_PORT" >/dev/null; do
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

#!/usr/bin/env bash
# zookeeper.sh up|down|status: a three-member ZooKeeper ensemble on loopback, for
# LOCK_BACKEND=zookeeper (docs/dlock.md, "Which lock service").
#
# up:     start (or reuse) members 1 to 3 with QuorumPeerMain from Debian's zookeeper jars
#         (installed with apt-get when missing, root only): client ports $ZK_PORTS (default
#         2181 2182 2183), quorum and election ports $ZK_PEER_PORTS (default 2888 2889 2890)
#         and $ZK_ELECTION_PORTS (default 3888 3889 3890), a tick of 500 ms (sessions of 1 s
#         to 30 s), no admin server, the four-letter words srvr, ruok and mntr. Each member's
#         configuration, data, log and pid file are in .run/zookeeper/zkN; the data stays across
#         `down`, so that zxids, the ZooKeeper lock's fences, only grow. Waits until each
#         serves, and prints the ZOOKEEPER_SERVERS to give cmd/api.
# down:   stop the members (their data stays; `rm -rf .run/zookeeper` forgets it).
# status: each member's mode (leader, follower), or that it does not serve.
#
# Failure drills: `status` names the leader; kill -9 its pid (.run/zookeeper/zkN/pid) and
# watch another lead within a second or two; `up` again starts it, and it rejoins.
set -euo pipefail
cd "$(dirname "$0")/.."

ZK_PORTS=${ZK_PORTS:-"2181 2182 2183"}
ZK_PEER_PORTS=${ZK_PEER_PORTS:-"2888 2889 2890"}
ZK_ELECTION_PORTS=${ZK_ELECTION_PORTS:-"3888 3889 3890"}
DIR=$PWD/.run/zookeeper
CP=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar

# shellcheck source=scripts/lib.sh
source scripts/lib.sh

ports=($ZK_PORTS)
peers=($ZK_PEER_PORTS)
elections=($ZK_ELECTION_PORTS)
[ ${#ports[@]} -eq 3 ] && [ ${#peers[@]} -eq 3 ] && [ ${#elections[@]} -eq 3 ] || die "ZK_PORTS, ZK_PEER_PORTS and ZK_ELECTION_PORTS take three ports each"

# mode PORT: the mode (leader, follower, standalone) of the member on 127.0.0.1:PORT, as srvr
# tells it; empty when it does not serve.
mode() {
	( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && timeout 2 cat <&3) 2>/dev/null || true) |
		sed -n 's/^Mode: //p'
}
serves() { [ -n "$(mode "$1")" ]; }

need() {
	if [ ! -f /usr/share/java/zookeeper.jar ] || ! command -v java >/dev/null; then
		[ "$(id -u)" = 0 ] || die "zookeeper is not installed: sudo apt-get install zookeeper"
		say "installing zookeeper with apt-get"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zookeeper >/dev/null
	fi
}

start_member() { # start_member N (1-based)
	local n=$1 i=$(($1 - 1)) dir=$DIR/zk$1 j
	if [ -f "$dir/pid" ] && ! gone "$(cat "$dir/pid")"; then return 0; fi
	port_taken "${ports[$i]}" && die "port ${ports[$i]} is taken by something that is not our member $n; free it or set ZK_PORTS"
	mkdir -p "$dir"
	echo "$n" >"$dir/myid"
	{
		echo "tickTime=500"; echo "initLimit=20"; echo "syncLimit=4"
		echo "minSessionTimeout=1000"; echo "maxSessionTimeout=30000"
		echo "dataDir=$dir"; echo "clientPortAddress=127.0.0.1"; echo "clientPort=${ports[$i]}"
		echo "admin.enableServer=false"; echo "4lw.commands.whitelist=srvr,cons,ruok,mntr"
		echo "autopurge.snapRetainCount=3"; echo "autopurge.purgeInterval=1"
		for j in 0 1 2; do echo "server.$((j + 1))=127.0.0.1:${peers[$j]}:${elections[$j]}"; done
	} >"$dir/zoo.cfg"
	say "starting zookeeper member $n on 127.0.0.1:${ports[$i]} (data in $dir)"
	setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' zk "$dir/pid" java -Xmx256m -XX:+UseSerialGC \
		-Dzookeeper.admin.enableServer=false -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
		-Dorg.slf4j.simpleLogger.showDateTime=true -cp "$CP" \
		org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" </dev/null >>"$dir/log" 2>&1 &
	poll 2 test -s "$dir/pid" || die "zookeeper member $n did not start (log: $dir/log)"
}

up() {
	need
	local n servers=()
	for n in 1 2 3; do start_member "$n"; done
	for n in 1 2 3; do
		poll 60 serves "${ports[$((n - 1))]}" || die "zookeeper member $n does not serve within 60s (log: $DIR/zk$n/log)"
		servers+=("127.0.0.1:${ports[$((n - 1))]}")
	done
	status
	say "ready: LOCK_BACKEND=zookeeper ZOOKEEPER_SERVERS=$(IFS=,; echo "${servers[*]}")"
}

down() {
	local n
	for n in 1 2 3; do
		[ -f "$DIR/zk$n/pid" ] || continue
		say "stopping zookeeper member $n (its data stays in $DIR/zk$n)"
		stop_pidfile "$DIR/zk$n/pid"
	done
}

status() {
	local n m
	for n in 1 2 3; do
		m=$(mode "${ports[$((n - 1))]}")
		say "member $n on 127.0.0.1:${ports[$((n - 1))]}: ${m:-does not serve}"
	done
}

case ${1:-} in
up | down | status) "$1" ;;
*) die "usage: $0 up|down|status" ;;
esac

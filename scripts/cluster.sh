#!/usr/bin/env bash
# cluster.sh up|down|status|stop PORT|start PORT: the two multi-node Redis topologies and a
# three-member etcd cluster on loopback (docs/deployment.md).
#
# up:     a Redis Cluster of three masters on $CLUSTER_PORTS (default 7001-7003) and three
#         independent Redis servers for Redlock on $REDLOCK_PORTS (default 7101-7103), from
#         the same redis-server binary as `make up` (installed with apt-get when missing, as
#         root). No persistence. And one etcd cluster whose members serve clients on
#         $ETCD_CLUSTER_PORTS (default 23791-23793) and talk to each other on
#         $ETCD_CLUSTER_PEER_PORTS (default: each port + 10, 23801-23803), from the etcd of
#         `make up` (Debian's etcd-server). Data, logs and pid files under $CLUSTER_DIR
#         (default .run/cluster). Idempotent: servers it started and that still answer are
#         reused, an etcd member it started and that died is restarted on its data.
#         Prints the REDIS_CLUSTER_ADDRS, REDLOCK_ADDRS and ETCD_ENDPOINTS to give cmd/api.
# down:   stop only the servers that `up` started (recorded in $CLUSTER_DIR/started), delete
#         their data.
# status: which of them answer, whether the Redis Cluster is ok, and the etcd leader.
# stop PORT / start PORT: stop (SIGKILL, as a crash) or restart one server that `up` started,
#         for failure drills; a restarted Redis comes back empty, a restarted etcd member
#         rejoins on its data (it is healthy once a majority of the members runs).
#
# CLUSTER_PORTS='', REDLOCK_PORTS='' or ETCD_CLUSTER_PORTS='' leaves that topology out.
# CLUSTER_BUS_PORTS sets the cluster bus ports (default: each port + 10000), for tests that
# pick free ports at random.
set -euo pipefail
cd "$(dirname "$0")/.."

CLUSTER_PORTS=${CLUSTER_PORTS-"7001 7002 7003"} # set but empty: no cluster
REDLOCK_PORTS=${REDLOCK_PORTS-"7101 7102 7103"} # set but empty: no Redlock servers
ETCD_CLUSTER_PORTS=${ETCD_CLUSTER_PORTS-"23791 23792 23793"} # set but empty: no etcd cluster
CLUSTER_BUS_PORTS=${CLUSTER_BUS_PORTS:-}
ETCD_CLUSTER_PEER_PORTS=${ETCD_CLUSTER_PEER_PORTS:-}
CLUSTER_DIR=${CLUSTER_DIR:-$PWD/.run/cluster}
STARTED=$CLUSTER_DIR/started

# shellcheck source=scripts/lib.sh
source scripts/lib.sh
answers() { redis_pings "$1"; } # answers PORT: a Redis on 127.0.0.1:PORT replies to PING

ours() { grep -qx "$1" "$STARTED" 2>/dev/null; }

need_binaries() {
	if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
		[ "$(id -u)" = 0 ] || die "redis-server and redis-cli are needed: run 'sudo make up' or install redis-server"
		say "installing redis-server with apt-get"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
	fi
	if [ -n "$ETCD_CLUSTER_PORTS" ] && ! command -v etcd >/dev/null; then
		[ "$(id -u)" = 0 ] || die "etcd is needed: run 'sudo make up' or install etcd-server"
		say "installing etcd-server with apt-get"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
	fi
}

# paired_port PORT "PORTS" "PAIRED" OFFSET: the port paired with PORT, the one at PORT's place
# in the list PAIRED, or PORT + OFFSET when PAIRED has none there.
paired_port() {
	local ports=($2) paired=($3) i
	for i in "${!ports[@]}"; do
		if [ "${ports[$i]}" = "$1" ] && [ -n "${paired[$i]:-}" ]; then
			echo "${paired[$i]}"
			return
		fi
	done
	echo $(($1 + $4))
}

bus_port() { paired_port "$1" "$CLUSTER_PORTS" "$CLUSTER_BUS_PORTS" 10000; } # of cluster node PORT

# server_args PORT: the redis-server arguments of server PORT (cluster mode for a cluster port).
server_args() {
	local dir=$CLUSTER_DIR/$1
	printf '%s\n' --port "$1" --bind 127.0.0.1 --daemonize yes --save '' --appendonly no \
		--dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
	case " $CLUSTER_PORTS " in
	*" $1 "*) printf '%s\n' --cluster-enabled yes --cluster-config-file "$dir/nodes.conf" \
		--cluster-port "$(bus_port "$1")" --cluster-node-timeout 5000 ;;
	esac
}

start_server() { # start_server PORT
	local port=$1
	if answers "$port"; then
		ours "$port" && return 0
		die "port $port already runs a Redis that cluster.sh did not start; set CLUSTER_PORTS / REDLOCK_PORTS"
	fi
	port_taken "$port" && die "port $port is taken; set CLUSTER_PORTS / REDLOCK_PORTS"
	mkdir -p "$CLUSTER_DIR/$port"
	local args=()
	mapfile -t args < <(server_args "$port")
	redis-server "${args[@]}"
	ours "$port" || echo "$port" >>"$STARTED"
	poll 10 answers "$port" || die "redis-server on port $port did not answer within 10s (log: $CLUSTER_DIR/$port/redis.log)"
}

cluster_ok() { # cluster_ok PORT: node PORT sees the whole cluster ok
	local info
	info=$(redis-cli -p "$1" cluster info 2>/dev/null) || return 1
	[[ $info == *cluster_state:ok* && $info == *"cluster_known_nodes:$(wc -w <<<"$CLUSTER_PORTS")"* ]]
}

create_cluster() {
	local first port nodes=()
	first=$(awk '{print $1}' <<<"$CLUSTER_PORTS")
	if ! cluster_ok "$first"; then
		for port in $CLUSTER_PORTS; do nodes+=("127.0.0.1:$port"); done
		say "creating the cluster: ${nodes[*]}"
		redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$CLUSTER_DIR/create.log" 2>&1 ||
			die "redis-cli --cluster create failed (log: $CLUSTER_DIR/create.log)"
	fi
	for port in $CLUSTER_PORTS; do
		poll 15 cluster_ok "$port" || die "cluster node $port not ok within 15s"
	done
}

# The etcd members: member PORT is named etcd-PORT, its files are in $CLUSTER_DIR/etcd-PORT, and
# it is recorded in $STARTED as etcd-PORT.
is_etcd() { [[ " $ETCD_CLUSTER_PORTS " == *" $1 "* ]]; }

peer_port() { paired_port "$1" "$ETCD_CLUSTER_PORTS" "$ETCD_CLUSTER_PEER_PORTS" 10; } # of etcd member PORT

start_member() { # start_member PORT: start etcd member PORT (on its data, if it has any)
	local port=$1 dir=$CLUSTER_DIR/etcd-$1 state=new p initial=
	[ -d "$dir/data/member" ] && state=existing
	for p in $ETCD_CLUSTER_PORTS; do initial+=${initial:+,}etcd-$p=http://127.0.0.1:$(peer_port "$p"); done
	mkdir -p "$dir"
	etcd_run "$dir/etcd.pid" "$dir/etcd.log" --name "etcd-$port" --data-dir "$dir/data" \
		--listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
		--listen-peer-urls "http://127.0.0.1:$(peer_port "$port")" \
		--initial-advertise-peer-urls "http://127.0.0.1:$(peer_port "$port")" \
		--initial-cluster "$initial" --initial-cluster-state "$state" --initial-cluster-token seckill-cluster \
		--logger zap --log-outputs stderr
	ours "etcd-$port" || echo "etcd-$port" >>"$STARTED"
}

# etcd_cluster_up: start the members that do not run (all before waiting: a member is healthy
# only once a majority runs), then wait until each is healthy.
etcd_cluster_up() {
	local port
	for port in $ETCD_CLUSTER_PORTS; do
		if etcd_healthy "$port"; then
			ours "etcd-$port" && continue
			die "port $port already runs an etcd that cluster.sh did not start; set ETCD_CLUSTER_PORTS"
		fi
		if ours "etcd-$port" && pid_runs "$CLUSTER_DIR/etcd-$port/etcd.pid"; then continue; fi # not healthy yet
		port_taken "$port" && die "port $port is taken; set ETCD_CLUSTER_PORTS"
		port_taken "$(peer_port "$port")" && die "port $(peer_port "$port") is taken; set ETCD_CLUSTER_PEER_PORTS"
		if ours "etcd-$port"; then
			say "restarting the etcd member on port $port on its data"
		else
			rm -rf "${CLUSTER_DIR:?}/etcd-$port" # a stale member's data would not join a new cluster
			say "starting an etcd member on port $port (peer port $(peer_port "$port"))"
		fi
		start_member "$port"
	done
	for port in $ETCD_CLUSTER_PORTS; do
		poll 30 etcd_healthy "$port" || die "etcd member $port not healthy within 30s (log: $CLUSTER_DIR/etcd-$port/etcd.log)"
	done
}

pid_runs() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; } # pid_runs PIDFILE

# etcd_leader: the client port of the leader that the members answering a status request name.
etcd_leader() {
	local port reply leader= ids=()
	for port in $ETCD_CLUSTER_PORTS; do
		reply=$(etcd_http "$port" /v3/maintenance/status '{}')
		[[ $reply =~ \"member_id\":\"([0-9]+)\" ]] || continue
		ids+=("${BASH_REMATCH[1]}=$port")
		[[ $reply =~ \"leader\":\"([0-9]+)\" ]] && leader=${BASH_REMATCH[1]}
	done
	[ -n "$leader" ] || return 1
	for port in "${ids[@]}"; do [ "${port%%=*}" != "$leader" ] || { echo "${port#*=}"; return 0; }; done
	echo "member $leader (not one of $ETCD_CLUSTER_PORTS)"
}

addrs() { local p out=; for p in $1; do out+=${out:+,}${2:-}127.0.0.1:$p; done; echo "$out"; } # addrs PORTS [SCHEME]

up() {
	need_binaries
	mkdir -p "$CLUSTER_DIR"
	local port
	for port in $CLUSTER_PORTS $REDLOCK_PORTS; do start_server "$port"; done
	[ -z "$CLUSTER_PORTS" ] || create_cluster
	[ -z "$ETCD_CLUSTER_PORTS" ] || etcd_cluster_up
	say "ready"
	[ -z "$CLUSTER_PORTS" ] || echo "REDIS_CLUSTER_ADDRS=$(addrs "$CLUSTER_PORTS")"
	[ -z "$REDLOCK_PORTS" ] || echo "REDLOCK_ADDRS=$(addrs "$REDLOCK_PORTS")"
	[ -z "$ETCD_CLUSTER_PORTS" ] || echo "ETCD_ENDPOINTS=$(addrs "$ETCD_CLUSTER_PORTS" http://)"
}

stop_server() { # stop_server PORT [SIGNAL]: a Redis server or an etcd member
	local pidfile=$CLUSTER_DIR/$1/redis.pid
	[ ! -d "$CLUSTER_DIR/etcd-$1" ] || pidfile=$CLUSTER_DIR/etcd-$1/etcd.pid
	stop_pidfile "$pidfile" "${2:-TERM}"
}

down() {
	[ -f "$STARTED" ] || { say "nothing to stop: cluster.sh up started nothing"; return 0; }
	local port
	while read -r port; do
		case $port in
		etcd-*) say "stopping the etcd member on port ${port#etcd-}"; stop_server "${port#etcd-}" ;;
		*) say "stopping Redis on port $port"; stop_server "$port" ;;
		esac
		rm -rf "${CLUSTER_DIR:?}/$port"
	done <"$STARTED"
	rm -f "$STARTED" "$CLUSTER_DIR/create.log"
	rmdir "$CLUSTER_DIR" 2>/dev/null || true
}

status() {
	local port
	for port in $CLUSTER_PORTS $REDLOCK_PORTS; do
		if answers "$port"; then say "port $port answers$(ours "$port" && echo ' (started by cluster.sh)')"; else say "port $port is down"; fi
	done
	[ -z "$CLUSTER_PORTS" ] || { cluster_ok "$(awk '{print $1}' <<<"$CLUSTER_PORTS")" && say "cluster ok" || say "cluster not ok"; }
	[ -n "$ETCD_CLUSTER_PORTS" ] || return 0
	for port in $ETCD_CLUSTER_PORTS; do
		local by=; ours "etcd-$port" && by=' (started by cluster.sh)'
		if etcd_healthy "$port"; then say "etcd port $port is healthy$by"
		elif port_taken "$port"; then say "etcd port $port listens but is not healthy (no quorum?)$by"
		else say "etcd port $port is down"; fi
	done
	local leader
	if leader=$(etcd_leader); then say "etcd leader: $leader"; else say "etcd has no leader that a member reports"; fi
}

one() { # one stop|start PORT
	if [ -n "${2:-}" ] && is_etcd "$2" && ours "etcd-$2"; then
		case $1 in
		stop) say "stopping the etcd member on port $2 (SIGKILL)"; stop_server "$2" KILL ;;
		start)
			pid_runs "$CLUSTER_DIR/etcd-$2/etcd.pid" && return 0
			say "restarting the etcd member on port $2 on its data"
			start_member "$2"
			poll 10 etcd_healthy "$2" && return 0
			port_taken "$2" || die "etcd member $2 did not start (log: $CLUSTER_DIR/etcd-$2/etcd.log)"
			say "etcd member $2 runs but is not healthy: the cluster has no quorum yet" ;;
		esac
		return 0
	fi
	[ -n "${2:-}" ] && ours "$2" || die "port ${2:-?} was not started by cluster.sh up"
	case $1 in
	stop) say "stopping Redis on port $2 (SIGKILL)"; stop_server "$2" KILL ;;
	start) say "restarting Redis on port $2 (its data is gone)"; start_server "$2" ;;
	esac
}

case ${1:-} in
up | down | status) "$1" ;;
stop | start) one "$@" ;;
*) die "usage: $0 up|down|status|stop PORT|start PORT" ;;
esac

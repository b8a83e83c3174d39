#!/usr/bin/env bash
# cluster.sh up|down|status|stop PORT|start PORT: the two multi-node Redis topologies on loopback
# (docs/deployment.md).
#
# up:     a Redis Cluster of three masters on $CLUSTER_PORTS (default 7001-7003) and three
#         independent Redis servers for Redlock on $REDLOCK_PORTS (default 7101-7103), from
#         the same redis-server binary as `make up` (installed with apt-get when missing, as
#         root). No persistence. Data, logs and pid files under $CLUSTER_DIR (default
#         .run/cluster). Idempotent: servers it started and that still answer are reused.
#         Prints the REDIS_CLUSTER_ADDRS and REDLOCK_ADDRS to give cmd/api.
# down:   stop only the servers that `up` started (recorded in $CLUSTER_DIR/started), delete
#         their data.
# status: which of them answer.
# stop PORT / start PORT: stop (SIGKILL, as a crash) or restart one server that `up` started,
#         for failure drills; a restarted server comes back empty.
#
# CLUSTER_PORTS='' or REDLOCK_PORTS='' leaves that topology out. CLUSTER_BUS_PORTS sets the
# cluster bus ports (default: each port + 10000), for tests that pick free ports at random.
set -euo pipefail
cd "$(dirname "$0")/.."

CLUSTER_PORTS=${CLUSTER_PORTS-"7001 7002 7003"} # set but empty: no cluster
REDLOCK_PORTS=${REDLOCK_PORTS-"7101 7102 7103"} # set but empty: no Redlock servers
CLUSTER_BUS_PORTS=${CLUSTER_BUS_PORTS:-}
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
}

bus_port() { # bus_port PORT: the cluster bus port of cluster node PORT
	local ports=($CLUSTER_PORTS) buses=($CLUSTER_BUS_PORTS) i
	for i in "${!ports[@]}"; do
		if [ "${ports[$i]}" = "$1" ] && [ -n "${buses[$i]:-}" ]; then
			echo "${buses[$i]}"
			return
		fi
	done
	echo $(($1 + 10000))
}

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
	local port=$1 i
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
	for i in $(seq 1 100); do
		answers "$port" && return 0
		sleep 0.1
	done
	die "redis-server on port $port did not answer within 10s (log: $CLUSTER_DIR/$port/redis.log)"
}

cluster_ok() { # cluster_ok PORT: node PORT sees the whole cluster ok
	local info
	info=$(redis-cli -p "$1" cluster info 2>/dev/null) || return 1
	[[ $info == *cluster_state:ok* && $info == *"cluster_known_nodes:$(wc -w <<<"$CLUSTER_PORTS")"* ]]
}

create_cluster() {
	local first port nodes=() i
	first=$(awk '{print $1}' <<<"$CLUSTER_PORTS")
	if ! cluster_ok "$first"; then
		for port in $CLUSTER_PORTS; do nodes+=("127.0.0.1:$port"); done
		say "creating the cluster: ${nodes[*]}"
		redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$CLUSTER_DIR/create.log" 2>&1 ||
			die "redis-cli --cluster create failed (log: $CLUSTER_DIR/create.log)"
	fi
	for port in $CLUSTER_PORTS; do
		for i in $(seq 1 150); do
			cluster_ok "$port" && continue 2
			sleep 0.1
		done
		die "cluster node $port not ok within 15s"
	done
}

addrs() { local p out=; for p in $1; do out+=${out:+,}127.0.0.1:$p; done; echo "$out"; }

up() {
	need_binaries
	mkdir -p "$CLUSTER_DIR"
	local port
	for port in $CLUSTER_PORTS $REDLOCK_PORTS; do start_server "$port"; done
	[ -z "$CLUSTER_PORTS" ] || create_cluster
	say "ready"
	[ -z "$CLUSTER_PORTS" ] || echo "REDIS_CLUSTER_ADDRS=$(addrs "$CLUSTER_PORTS")"
	[ -z "$REDLOCK_PORTS" ] || echo "REDLOCK_ADDRS=$(addrs "$REDLOCK_PORTS")"
}

stop_server() { # stop_server PORT [SIGNAL]
	local pidfile=$CLUSTER_DIR/$1/redis.pid pid i
	[ -f "$pidfile" ] || return 0
	pid=$(cat "$pidfile")
	kill -"${2:-TERM}" "$pid" 2>/dev/null || true
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	rm -f "$pidfile"
}

down() {
	[ -f "$STARTED" ] || { say "nothing to stop: cluster.sh up started nothing"; return 0; }
	local port
	while read -r port; do
		say "stopping Redis on port $port"
		stop_server "$port"
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
}

one() { # one stop|start PORT
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

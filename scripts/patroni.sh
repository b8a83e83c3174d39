#!/usr/bin/env bash
# patroni.sh up|down|status: a two-node PostgreSQL cluster managed by Patroni on loopback, on the
# etcd that `make up` runs (docs/deployment.md, "PostgreSQL high availability").
#
# up:     start (or reuse) node1 and node2 with deploy/patroni/patroni.yml: PostgreSQL on
#         $PATRONI_PG_PORTS (default 5441 5442), Patroni's REST API on $PATRONI_API_PORTS
#         (default 8011 8012), the leader key in the etcd on 127.0.0.1:$ETCD_PORT under
#         /service/$PATRONI_SCOPE (default seckill-local). Debian's patroni is installed with
#         apt-get when missing. Each node runs as the postgres OS user (root needed), with its
#         data, log and pid file in $PATRONI_DIR/<node> (default /var/lib/postgresql/seckill-patroni,
#         which the postgres user can reach wherever the checkout is). Waits until one node is
#         the primary and the other its synchronous standby, creates the role and database
#         seckill (password seckill), and prints the DATABASE_URL to give cmd/api: both nodes,
#         target_session_attrs=read-write, so the service follows the primary.
# down:   stop both nodes (Patroni shuts its PostgreSQL down), delete their data and the
#         cluster's keys in etcd.
# status: each node's role and state (patronictl list).
#
# Failure drills: kill -9 the primary's Patroni and PostgreSQL (`status` names it) and watch
# the standby take over about 10 s later (ttl); `patronictl -c $PATRONI_DIR/patronictl.yml
# switchover` for a planned one; `up` again starts a stopped node, which rejoins.
set -euo pipefail
cd "$(dirname "$0")/.."

PATRONI_PG_PORTS=${PATRONI_PG_PORTS:-"5441 5442"}
PATRONI_API_PORTS=${PATRONI_API_PORTS:-"8011 8012"}
PATRONI_SCOPE=${PATRONI_SCOPE:-seckill-local}
PATRONI_DIR=${PATRONI_DIR:-/var/lib/postgresql/seckill-patroni}
ETCD_PORT=${ETCD_PORT:-2379}
# Development passwords, like `make up`'s: set them for anything else.
PATRONI_SUPERUSER_PASSWORD=${PATRONI_SUPERUSER_PASSWORD:-postgres}
PATRONI_REPLICATION_PASSWORD=${PATRONI_REPLICATION_PASSWORD:-replicator}
PATRONI_REST_PASSWORD=${PATRONI_REST_PASSWORD:-patroni}
DB_NAME=${DB_NAME:-seckill}
DB_USER=${DB_USER:-seckill}
DB_PASS=${DB_PASS:-seckill}

# shellcheck source=scripts/lib.sh
source scripts/lib.sh

pg_ports=($PATRONI_PG_PORTS)
api_ports=($PATRONI_API_PORTS)
[ ${#pg_ports[@]} -eq 2 ] && [ ${#api_ports[@]} -eq 2 ] || die "PATRONI_PG_PORTS and PATRONI_API_PORTS take two ports each"

# rest PORT PATH: the body of the REST API's answer on 127.0.0.1:PORT, with its status on the
# last line; empty when it does not answer within 2s.
rest() { curl -s -m 2 -w '\n%{http_code}' "http://127.0.0.1:$1$2" 2>/dev/null || true; }
is_primary() { [ "$(rest "$1" /primary | tail -n 1)" = 200 ]; }
primary_port() { # the REST port of the node that is the primary, or nothing
	local p
	for p in "${api_ports[@]}"; do if is_primary "$p"; then echo "$p"; return 0; fi; done
	return 1
}
sync_standby() { rest "${api_ports[0]}" /cluster | grep -q '"role": "sync_standby", "state": "\(running\|streaming\)"'; }

need() {
	[ "$(id -u)" = 0 ] || die "PostgreSQL runs as the postgres OS user: run 'sudo make patroni-up'"
	command -v curl >/dev/null || die "curl is needed"
	if ! command -v patroni >/dev/null; then
		say "installing patroni with apt-get"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patroni >/dev/null
	fi
	id postgres >/dev/null 2>&1 || die "no postgres OS user: install PostgreSQL ('make up' does)"
	etcd_healthy "$ETCD_PORT" || die "no healthy etcd on 127.0.0.1:$ETCD_PORT: run 'make up' first"
}

# start_node N: node N (1 or 2) in the background as the postgres user, its settings in Patroni's
# own variables (deploy/patroni/patroni.yml lists them), unless it runs already.
start_node() {
	local n=$1 dir=$PATRONI_DIR/node$1 pg=${pg_ports[$(($1 - 1))]} api=${api_ports[$(($1 - 1))]}
	if [ -f "$dir/patroni.pid" ] && ! gone "$(cat "$dir/patroni.pid")"; then
		say "node$n runs already (REST API on 127.0.0.1:$api)"
		return 0
	fi
	port_taken "$pg" && die "port $pg is taken: free it or set PATRONI_PG_PORTS"
	port_taken "$api" && die "port $api is taken: free it or set PATRONI_API_PORTS"
	install -d -o postgres -g postgres -m 700 "$PATRONI_DIR" "$dir"
	# A copy the postgres user can read, wherever the checkout is (a home directory may be closed).
	install -o postgres -g postgres -m 600 deploy/patroni/patroni.yml "$dir/patroni.yml"
	say "starting node$n: PostgreSQL on 127.0.0.1:$pg, REST API on 127.0.0.1:$api (log: $dir/patroni.log)"
	env -i PATH="$PATH" HOME="$dir" LANG=C.UTF-8 \
		PATRONI_SCOPE="$PATRONI_SCOPE" PATRONI_NAME="node$n" \
		PATRONI_RESTAPI_LISTEN="127.0.0.1:$api" PATRONI_RESTAPI_CONNECT_ADDRESS="127.0.0.1:$api" \
		PATRONI_RESTAPI_USERNAME=patroni PATRONI_RESTAPI_PASSWORD="$PATRONI_REST_PASSWORD" \
		PATRONI_POSTGRESQL_LISTEN="127.0.0.1:$pg" PATRONI_POSTGRESQL_CONNECT_ADDRESS="127.0.0.1:$pg" \
		PATRONI_POSTGRESQL_DATA_DIR="$dir/data" PATRONI_POSTGRESQL_PGPASS="$dir/pgpass" \
		PATRONI_ETCD3_HOSTS="127.0.0.1:$ETCD_PORT" \
		PATRONI_SUPERUSER_PASSWORD="$PATRONI_SUPERUSER_PASSWORD" PATRONI_REPLICATION_PASSWORD="$PATRONI_REPLICATION_PASSWORD" \
		setsid setpriv --reuid=postgres --regid=postgres --init-groups \
		bash -c 'echo $$ >"$1"; shift; exec "$@"' patroni "$dir/patroni.pid" patroni "$dir/patroni.yml" \
		</dev/null >>"$dir/patroni.log" 2>&1 &
	poll 5 test -s "$dir/patroni.pid" || die "node$n did not start (log: $dir/patroni.log)"
}

psql_primary() { # psql as the postgres role on the primary
	PGPASSWORD=$PATRONI_SUPERUSER_PASSWORD psql -h 127.0.0.1 -p "$1" -U postgres -d postgres -v ON_ERROR_STOP=1 -tAq "${@:2}"
}

ensure_database() {
	local port=$1
	psql_primary "$port" -c "DO \$\$ BEGIN
		IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN
			CREATE ROLE $DB_USER LOGIN PASSWORD '$DB_PASS';
		END IF; END \$\$;"
	if [ -z "$(psql_primary "$port" -c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" ]; then
		psql_primary "$port" -c "CREATE DATABASE $DB_NAME OWNER $DB_USER"
	fi
}

write_ctl_config() { # for patronictl: -c $PATRONI_DIR/patronictl.yml
	umask 077
	cat >"$PATRONI_DIR/patronictl.yml" <<-EOF
		scope: $PATRONI_SCOPE
		namespace: /service/
		etcd3:
		  hosts: 127.0.0.1:$ETCD_PORT
		restapi:
		  authentication:
		    username: patroni
		    password: $PATRONI_REST_PASSWORD
	EOF
}

up() {
	need
	start_node 1
	start_node 2
	poll 90 primary_port >/dev/null || die "no primary within 90s (logs: $PATRONI_DIR/node*/patroni.log)"
	poll 90 sync_standby || die "no synchronous standby within 90s (logs: $PATRONI_DIR/node*/patroni.log)"
	local api pg
	api=$(primary_port)
	pg=${pg_ports[0]}
	[ "$api" = "${api_ports[0]}" ] || pg=${pg_ports[1]}
	ensure_database "$pg"
	write_ctl_config
	say "primary: the node with REST API 127.0.0.1:$api; synchronous standby: the other"
	say "ready: DATABASE_URL='postgres://$DB_USER:***@127.0.0.1:${pg_ports[0]},127.0.0.1:${pg_ports[1]}/$DB_NAME?sslmode=disable&target_session_attrs=read-write&connect_timeout=2'"
}

down() {
	local n dir
	for n in 1 2; do
		dir=$PATRONI_DIR/node$n
		[ -f "$dir/patroni.pid" ] || continue
		say "stopping node$n"
		stop_pidfile "$dir/patroni.pid" # SIGTERM: Patroni stops its PostgreSQL (fast), then exits
	done
	for n in 1 2; do
		poll 20 bash -c "! (exec 3<>/dev/tcp/127.0.0.1/${pg_ports[$((n - 1))]}) 2>/dev/null" ||
			die "PostgreSQL of node$n still answers on ${pg_ports[$((n - 1))]}"
	done
	# The cluster's keys go with its data: a new `up` bootstraps a new cluster.
	local key end
	key=$(printf '/service/%s/' "$PATRONI_SCOPE" | base64 -w0)
	end=$(printf '/service/%s0' "$PATRONI_SCOPE" | base64 -w0) # '0' follows '/': the prefix's end
	etcd_http "$ETCD_PORT" /v3/kv/deleterange "{\"key\":\"$key\",\"range_end\":\"$end\"}" >/dev/null
	rm -rf "$PATRONI_DIR"
	say "stopped; data and etcd keys of $PATRONI_SCOPE removed"
}

status() {
	if [ -f "$PATRONI_DIR/patronictl.yml" ] && command -v patronictl >/dev/null; then
		patronictl -c "$PATRONI_DIR/patronictl.yml" list
		return
	fi
	local i
	for i in 0 1; do
		if [ "$(rest "${api_ports[$i]}" /patroni | tail -n 1)" != 000 ]; then
			say "node$((i + 1)): REST API answers on 127.0.0.1:${api_ports[$i]}"
		else
			say "node$((i + 1)): REST API 127.0.0.1:${api_ports[$i]} not answering"
		fi
	done
}

case ${1:-} in
up | down | status) "$1" ;;
*) die "usage: $0 up|down|status" ;;
esac

#!/usr/bin/env bash
# infra.sh up|down|status: bring up (or stop) the PostgreSQL, Redis and etcd that seckill needs.
#
# up:   1. reuse servers that already answer on 127.0.0.1:$PG_PORT / $REDIS_PORT / $ETCD_PORT
#          (etcd: GET /health says {"health":"true"});
#       2. otherwise, with a working Docker engine: docker compose up -d --wait with those of
#          the postgres, redis and etcd services that are missing;
#       3. otherwise install them with apt-get when missing (root only: postgresql,
#          redis-server, etcd-server) and start them on loopback: etcd as a single member
#          (peer port $ETCD_PEER_PORT) whose data stays in .run/etcd, so that its revisions
#          only grow (history older than an hour is compacted), with its log in .run/etcd.log.
#          Then create the role and database the service uses, and install Chromium (Debian's
#          chromium) for the lab report's browser test, HAProxy (Debian's haproxy) for make demo
#          and the rolling-restart test, PgBouncer (Debian's pgbouncer) for the tests of the API
#          behind a transaction pool, the fault tests' tools (iproute2, nftables, iptables,
#          faketime), Debian's zookeeper (its jars, for the ZooKeeper lock's tests and
#          make zookeeper-up), and Debian's prometheus (prometheus and promtool, for the tests of
#          deploy/prometheus and deploy/grafana; only the binaries are used: the package's own
#          service is left stopped). Idempotent.
# down: stop only what `up` started (recorded in .run/started); etcd's data stays.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_PORT=${PG_PORT:-5432}
REDIS_PORT=${REDIS_PORT:-6379}
ETCD_PORT=${ETCD_PORT:-2379}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-2380}
DB_NAME=${DB_NAME:-seckill}
DB_USER=${DB_USER:-seckill}
DB_PASS=${DB_PASS:-seckill}
STATE=$PWD/.run
STARTED=$STATE/started

# shellcheck source=scripts/lib.sh
source scripts/lib.sh

# compose.yaml takes its secrets from files in SECRETS_DIR, with no default, and compose checks
# the whole file even when it starts or stops only postgres, redis and etcd. Those get the
# development secrets of `make up` (PostgreSQL's password is $DB_PASS, as DATABASE_URL says),
# in .run/compose-secrets; the other files are placeholders that nothing reads.
compose() {
	local dir=$STATE/compose-secrets
	mkdir -p "$dir"
	[ -s "$dir/postgres-password" ] || printf '%s\n' "$DB_PASS" >"$dir/postgres-password"
	[ -s "$dir/database-url" ] || printf 'postgres://%s:%s@postgres:5432/%s?sslmode=disable\n' "$DB_USER" "$DB_PASS" "$DB_NAME" >"$dir/database-url"
	[ -s "$dir/admin-token" ] || echo unused-placeholder-postgres-redis-only >"$dir/admin-token"
	SECRETS_DIR=$dir docker compose "$@"
}

pg_answers() {
	if command -v pg_isready >/dev/null; then
		pg_isready -q -h 127.0.0.1 -p "$PG_PORT" -t 2
	else
		(exec 3<>"/dev/tcp/127.0.0.1/$PG_PORT") 2>/dev/null
	fi
}

redis_answers() { redis_pings "$REDIS_PORT"; }

etcd_answers() { etcd_healthy "$ETCD_PORT"; }

wait_for() { poll 30 "$2" || die "$1 did not answer on loopback within 30s"; } # wait_for NAME CHECK

record() { mkdir -p "$STATE"; grep -qx "$1" "$STARTED" 2>/dev/null || echo "$1" >>"$STARTED"; }

need_root() {
	[ "$(id -u)" = 0 ] || die "$1 is not installed and installing it needs root: run 'sudo make up', or install it yourself"
}

apt_install() {
	need_root "$1"
	say "installing $* with apt-get"
	if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq; APT_UPDATED=1; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

docker_works() { command -v docker >/dev/null && docker info >/dev/null 2>&1; }

pg_version() { ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1; }

start_postgres() {
	port_taken "$PG_PORT" && die "port $PG_PORT is taken by something that is not an answering PostgreSQL; free it or set PG_PORT"
	[ -n "$(pg_version)" ] || apt_install postgresql
	local v; v=$(pg_version)
	need_root "starting PostgreSQL $v"
	if ! pg_lsclusters -h 2>/dev/null | awk '{print $1, $2}' | grep -qx "$v main"; then
		pg_createcluster "$v" main -p "$PG_PORT" >/dev/null
	fi
	say "starting PostgreSQL $v"
	pg_ctlcluster --skip-systemctl-redirect "$v" main start
	record postgres
	wait_for PostgreSQL pg_answers
}

start_redis() {
	port_taken "$REDIS_PORT" && die "port $REDIS_PORT is taken by something that is not an answering Redis; free it or set REDIS_PORT"
	command -v redis-server >/dev/null || apt_install redis-server
	mkdir -p "$STATE"
	say "starting Redis on 127.0.0.1:$REDIS_PORT (no persistence)"
	redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
		--dir "$STATE" --pidfile "$STATE/redis.pid" --logfile "$STATE/redis.log"
	record redis
	wait_for Redis redis_answers
}

start_etcd() {
	port_taken "$ETCD_PORT" && die "port $ETCD_PORT is taken by something that is not a healthy etcd; free it or set ETCD_PORT"
	if ! command -v etcd >/dev/null; then
		apt_install etcd-server
		# Where an init system runs, the package starts an etcd service of its own on localhost:2379.
		if etcd_answers; then say "reusing the etcd that the etcd-server package started"; return 0; fi
	fi
	port_taken "$ETCD_PEER_PORT" && die "port $ETCD_PEER_PORT (etcd's peer port) is taken; free it or set ETCD_PEER_PORT"
	mkdir -p "$STATE"
	say "starting etcd on 127.0.0.1:$ETCD_PORT (peer port $ETCD_PEER_PORT, data in $STATE/etcd)"
	local peer=http://127.0.0.1:$ETCD_PEER_PORT client=http://127.0.0.1:$ETCD_PORT
	etcd_run "$STATE/etcd.pid" "$STATE/etcd.log" --name seckill --data-dir "$STATE/etcd" \
		--listen-client-urls "$client" --advertise-client-urls "$client" \
		--listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
		--initial-cluster "seckill=$peer" --initial-cluster-state new --initial-cluster-token seckill \
		--auto-compaction-retention 1h --logger zap --log-outputs stderr
	record etcd
	wait_for etcd etcd_answers
}

psql_admin() { # run SQL as a superuser: over TCP where trusted, else as the postgres OS user
	if psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -tAqc 'select 1' >/dev/null 2>&1; then
		psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -tAq "$@"
	elif [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1; then
		runuser -u postgres -- psql -p "$PG_PORT" -d postgres -v ON_ERROR_STOP=1 -tAq "$@"
	else
		return 1
	fi
}

ensure_database() {
	if PGPASSWORD=$DB_PASS psql -h 127.0.0.1 -p "$PG_PORT" -U "$DB_USER" -d "$DB_NAME" -tAqc 'select 1' >/dev/null 2>&1; then
		return 0
	fi
	command -v psql >/dev/null || apt_install postgresql-client
	say "creating role $DB_USER and database $DB_NAME"
	psql_admin -c "DO \$\$ BEGIN
		IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN
			CREATE ROLE $DB_USER LOGIN PASSWORD '$DB_PASS';
		END IF; END \$\$;" ||
		die "cannot reach PostgreSQL as a superuser to create role $DB_USER; create it and database $DB_NAME yourself"
	if [ -z "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" ]; then
		psql_admin -c "CREATE DATABASE $DB_NAME OWNER $DB_USER"
	fi
}

# The lab report's test (internal/labrun) opens the page in headless Chromium.
ensure_chromium() {
	command -v chromium >/dev/null && return 0
	if [ "$(id -u)" != 0 ]; then
		say "warning: chromium is not installed (the lab report's test needs it): sudo apt-get install chromium"
		return 0
	fi
	apt_install chromium
}

# ensure_haproxy: Debian's haproxy, the load balancer in front of the API processes of make demo
# and of the rolling-restart test (deploy/haproxy/haproxy.cfg); they run haproxy processes of
# their own, on ports of their own (the package's service, where an init system starts it,
# listens on nothing: Debian's /etc/haproxy/haproxy.cfg has no frontend).
ensure_haproxy() {
	{ command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ]; } && return 0
	if [ "$(id -u)" != 0 ]; then
		say "warning: haproxy is not installed (make demo and the rolling-restart test need it): sudo apt-get install haproxy"
		return 0
	fi
	apt_install haproxy
}

# ensure_pgbouncer: Debian's pgbouncer, for the tests that run the API behind a transaction pool
# (deploy/pgbouncer/seckill.ini); they run pgbouncer processes of their own, as the postgres
# user, on ports of their own. Where an init system starts the package's service, it is
# stopped: nothing should listen on :6432 on its behalf.
ensure_pgbouncer() {
	{ command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ]; } && return 0
	if [ "$(id -u)" != 0 ]; then
		say "warning: pgbouncer is not installed (the tests behind a transaction pool need it): sudo apt-get install pgbouncer"
		return 0
	fi
	apt_install pgbouncer
	if command -v systemctl >/dev/null && systemctl is-active --quiet pgbouncer 2>/dev/null; then
		systemctl disable --now pgbouncer >/dev/null 2>&1 || true
	fi
}

# The fault tests (internal/chaos, internal/labrun) cut an API process off in a network namespace
# of its own (iproute2's ip netns, veth) with silent drop rules (nftables, or iptables where nft
# is missing), and step the Redis host's clock with libfaketime (Debian's faketime). Sentinel
# needs nothing more: redis-server --sentinel is the same binary. Without root, the tests that
# need these skip, saying why.
ensure_fault_tools() {
	local missing=()
	command -v ip >/dev/null || missing+=(iproute2)
	command -v nft >/dev/null || missing+=(nftables)
	command -v iptables >/dev/null || missing+=(iptables)
	[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 ||
		missing+=(faketime)
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		say "warning: ${missing[*]} not installed (the partition and clock-step fault tests need them): sudo apt-get install ${missing[*]}"
		return 0
	fi
	apt_install "${missing[@]}"
}

# ensure_patroni installs Debian's patroni (3.0 on Debian 12, python3) for the PostgreSQL failover
# tests (internal/launch StartPatroni, internal/chaos failover_*_test.go) and `make patroni-up`,
# which run Patroni processes of their own. The package's service has no configuration
# (/etc/patroni/config.yml) and starts nothing.
ensure_patroni() {
	command -v patroni >/dev/null && return 0
	if [ "$(id -u)" != 0 ]; then
		say "warning: patroni is not installed (the PostgreSQL failover tests need it): sudo apt-get install patroni"
		return 0
	fi
	apt_install patroni
}

# ensure_zookeeper installs Debian's zookeeper (3.8, on the default Java) for the ZooKeeper lock's
# tests (internal/launch StartZooKeeperEnsemble: members of their own, run from the package's
# jars with QuorumPeerMain) and `make zookeeper-up`. Where the package starts its own service,
# it is stopped: nothing should listen on :2181 on its behalf.
ensure_zookeeper() {
	[ -f /usr/share/java/zookeeper.jar ] && command -v java >/dev/null && return 0
	if [ "$(id -u)" != 0 ]; then
		say "warning: zookeeper is not installed (the ZooKeeper lock's tests need it): sudo apt-get install zookeeper"
		return 0
	fi
	apt_install zookeeper
	if command -v systemctl >/dev/null && systemctl is-active --quiet zookeeper 2>/dev/null; then
		systemctl disable --now zookeeper >/dev/null 2>&1 || true
	fi
}

# ensure_prometheus installs Debian's prometheus package (prometheus and promtool) for
# internal/observecheck's tests, which start a Prometheus of their own. Where the package
# starts its service, it is stopped: nothing should listen on :9090 on its behalf.
ensure_prometheus() {
	command -v promtool >/dev/null && command -v prometheus >/dev/null && return 0
	if [ "$(id -u)" != 0 ]; then
		say "warning: prometheus not installed (the Prometheus rule and dashboard tests need it): sudo apt-get install prometheus"
		return 0
	fi
	apt_install prometheus
	if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
		systemctl disable --now prometheus >/dev/null 2>&1 || true
	fi
}

# ensure_alertmanager installs Debian's prometheus-alertmanager for internal/observecheck's
# alert test, which starts an Alertmanager of its own behind a real fault. Where the package
# starts its service, it is stopped: nothing should listen on :9093 on its behalf.
ensure_alertmanager() {
	{ command -v prometheus-alertmanager >/dev/null || command -v alertmanager >/dev/null; } && return 0
	if [ "$(id -u)" != 0 ]; then
		say "warning: prometheus-alertmanager not installed (the alert test needs it): sudo apt-get install prometheus-alertmanager"
		return 0
	fi
	apt_install prometheus-alertmanager
	if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus-alertmanager 2>/dev/null; then
		systemctl disable --now prometheus-alertmanager >/dev/null 2>&1 || true
	fi
}

up() {
	local pg=reuse redis=reuse etcd=reuse missing=()
	pg_answers || { pg=start; missing+=(postgres); }
	redis_answers || { redis=start; missing+=(redis); }
	etcd_answers || { etcd=start; missing+=(etcd); }
	if [ ${#missing[@]} -gt 0 ] && docker_works; then
		say "starting ${missing[*]} with docker compose"
		compose up -d --wait "${missing[@]}"
		record docker
		return 0
	fi
	if [ $pg = start ]; then start_postgres; else say "reusing PostgreSQL on 127.0.0.1:$PG_PORT"; fi
	if [ $redis = start ]; then start_redis; else say "reusing Redis on 127.0.0.1:$REDIS_PORT"; fi
	if [ $etcd = start ]; then start_etcd; else say "reusing etcd on 127.0.0.1:$ETCD_PORT"; fi
	ensure_database
	ensure_chromium
	ensure_haproxy
	ensure_pgbouncer
	ensure_fault_tools
	ensure_patroni
	ensure_zookeeper
	ensure_prometheus
	ensure_alertmanager
	say "ready: DATABASE_URL=postgres://$DB_USER:***@127.0.0.1:$PG_PORT/$DB_NAME REDIS_ADDR=127.0.0.1:$REDIS_PORT" \
		"ETCD_ENDPOINTS=http://127.0.0.1:$ETCD_PORT"
}

stop_etcd() { stop_pidfile "$STATE/etcd.pid"; } # SIGTERM, and wait up to 10s for it to exit

down() {
	[ -f "$STARTED" ] || { say "nothing to stop: make up started nothing"; return 0; }
	while read -r what; do
		case $what in
		docker) say "stopping docker compose services"; compose down ;;
		postgres) say "stopping PostgreSQL"; pg_ctlcluster --skip-systemctl-redirect "$(pg_version)" main stop || true ;;
		redis)
			say "stopping Redis"
			if [ -f "$STATE/redis.pid" ]; then kill "$(cat "$STATE/redis.pid")" 2>/dev/null || true; fi ;;
		etcd) say "stopping etcd (its data stays in $STATE/etcd)"; stop_etcd ;;
		esac
	done <"$STARTED"
	rm -f "$STARTED"
}

status() {
	pg_answers && say "PostgreSQL answers on 127.0.0.1:$PG_PORT" || say "PostgreSQL is down"
	redis_answers && say "Redis answers on 127.0.0.1:$REDIS_PORT" || say "Redis is down"
	etcd_answers && say "etcd answers on 127.0.0.1:$ETCD_PORT" || say "etcd is down"
	[ -f "$STARTED" ] && say "started by make up: $(tr '\n' ' ' <"$STARTED")" || true
}

case ${1:-} in
up | down | status) "$1" ;;
*) die "usage: $0 up|down|status" ;;
esac

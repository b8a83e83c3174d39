# lib.sh: the helpers the scripts share. Source it (after cd to the repository):
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Messages are prefixed with the running script's name (infra, cluster, demo, ...).

say() { printf '%s: %s\n' "$(basename "$0" .sh)" "$*" >&2; }
die() { say "error: $*"; exit 1; }

# port_taken PORT: something listens on TCP PORT.
port_taken() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }

# poll SECONDS COMMAND [ARGS...]: run COMMAND every 0.1s until it succeeds (status 0) or
# SECONDS have passed (status 1). Every wait of the scripts is one.
poll() {
	local tries=$(($1 * 10))
	shift
	while ((tries-- > 0)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# gone PID: no process PID runs (or it is not ours to signal).
gone() { ! kill -0 "$1" 2>/dev/null; }

# stop_pidfile PIDFILE [SIGNAL]: send SIGNAL (TERM) to the process in PIDFILE, wait up to 10s
# for it to exit, and remove PIDFILE. Nothing when there is no PIDFILE.
stop_pidfile() {
	local pid
	[ -f "$1" ] || return 0
	pid=$(cat "$1")
	kill -"${2:-TERM}" "$pid" 2>/dev/null || true
	poll 10 gone "$pid" || true
	rm -f "$1"
}

# redis_pings PORT: a Redis on 127.0.0.1:PORT replies to PING (no redis-cli needed).
redis_pings() {
	local reply
	reply=$( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf 'PING\r\n' >&3 && timeout 2 head -c 5 <&3) 2>/dev/null) || true
	[ "$reply" = +PONG ]
}

# etcd_http PORT PATH [BODY]: the body of the reply of the etcd on 127.0.0.1:PORT to GET PATH, or
# to POST BODY (its JSON gateway: POST /v3/maintenance/status with {}). Empty when it does not
# answer within 2s. With curl, else over /dev/tcp.
etcd_http() {
	if command -v curl >/dev/null; then
		local post=()
		[ -z "${3:-}" ] || post=(-X POST -d "$3")
		curl -s -m 2 "${post[@]}" "http://127.0.0.1:$1$2" 2>/dev/null || true
		return
	fi
	local req="GET $2 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
	[ -z "${3:-}" ] || req="POST $2 HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: ${#3}\r\n\r\n$3"
	( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf '%b' "$req" >&3 && timeout 2 cat <&3) 2>/dev/null || true) |
		sed '1,/^\r$/d'
}

# etcd_healthy PORT: an etcd on 127.0.0.1:PORT answers GET /health with {"health":"true"} (it
# has a leader and a quorum read succeeds).
etcd_healthy() { [[ $(etcd_http "$1" /health) == *'"health":"true"'* ]]; }

# etcd_run PIDFILE LOGFILE ARGS...: start etcd ARGS in the background, in a session of its own
# (it has no daemonize flag), appending to LOGFILE and writing its pid to PIDFILE. etcd reads
# every ETCD_* variable as a flag: it runs without them (make exports ETCD_ENDPOINTS for the
# tests), but with ETCD_UNSUPPORTED_ARCH on an architecture etcd 3.4 does not support.
etcd_run() {
	local pidfile=$1 logfile=$2 v unset=() arch
	shift 2
	rm -f "$pidfile"
	for v in $(compgen -e); do [[ $v != ETCD_* ]] || unset+=(-u "$v"); done
	case $(uname -m) in x86_64 | ppc64le) arch= ;; aarch64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
	env "${unset[@]}" ${arch:+ETCD_UNSUPPORTED_ARCH=$arch} \
		setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' etcd "$pidfile" etcd "$@" </dev/null >>"$logfile" 2>&1 &
	poll 1 test -s "$pidfile" || die "etcd did not start (log: $logfile)"
}

# haproxy_bin: the path of haproxy (Debian's package puts it in /usr/sbin, which a user's PATH
# may lack); empty when it is not installed.
haproxy_bin() { command -v haproxy 2>/dev/null || { [ -x /usr/sbin/haproxy ] && echo /usr/sbin/haproxy; } || true; }

# haproxy_run LOGFILE ADDR BACKEND...: HAProxy with deploy/haproxy/haproxy.cfg in the background,
# listening on ADDR (host:port) in front of the API processes at BACKEND... (host:port each, six at
# most: LB_API1..LB_API6), its log appended to LOGFILE; sets HAPROXY_PID. The configuration reads
# only the LB_* variables given here (any others in the environment are left out), and
# LB_STATS_ADDR when set: HAProxy's page (/stats) and its /metrics there. Waits up to 5s for it to
# listen.
haproxy_run() {
	local logfile=$1 addr=$2 bin v i=0 vars=() unset=()
	shift 2
	bin=$(haproxy_bin)
	[ -n "$bin" ] || die "haproxy is not installed: 'sudo make up' installs Debian's haproxy (or: apt-get install haproxy)"
	[ $# -le 6 ] || die "deploy/haproxy/haproxy.cfg has room for 6 API processes, not $#"
	for v in $(compgen -e); do [[ $v != LB_* ]] || unset+=(-u "$v"); done
	for v in "$@"; do vars+=("LB_API$((++i))=$v"); done
	[ -z "${LB_STATS_ADDR:-}" ] || vars+=("LB_STATS_ADDR=$LB_STATS_ADDR")
	env "${unset[@]}" "${vars[@]}" LB_ADDR="$addr" "$bin" -db -f deploy/haproxy/haproxy.cfg </dev/null >>"$logfile" 2>&1 &
	HAPROXY_PID=$!
	poll 5 port_taken "${addr##*:}" || die "HAProxy did not start on $addr (log: $logfile)"
}

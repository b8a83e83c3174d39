# lib.sh: the helpers the scripts share. Source it (after cd to the repository):
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Messages are prefixed with the running script's name (infra, cluster, demo, ...).

say() { printf '%s: %s\n' "$(basename "$0" .sh)" "$*" >&2; }
die() { say "error: $*"; exit 1; }

# port_taken PORT: something listens on TCP PORT.
port_taken() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }

# redis_pings PORT: a Redis on 127.0.0.1:PORT replies to PING (no redis-cli needed).
redis_pings() {
	local reply
	reply=$( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf 'PING\r\n' >&3 && timeout 2 head -c 5 <&3) 2>/dev/null) || true
	[ "$reply" = +PONG ]
}

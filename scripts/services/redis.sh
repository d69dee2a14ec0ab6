#!/usr/bin/env bash
# Installs (Debian package) and starts Redis on 127.0.0.1:6379. Idempotent.
set -euo pipefail
SERVICE=redis
# shellcheck source=scripts/services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REDIS_PORT=6379
REDIS_DIR="${CMS_CI_STATE}/redis"

install_redis() {
	if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
		log "redis already installed"
		return
	fi
	log "installing redis-server from Debian packages"
	apt_install redis-server redis-tools
}

redis_ready() { [[ $(redis-cli -h 127.0.0.1 -p "${REDIS_PORT}" ping 2>/dev/null) == PONG ]]; }

start_redis() {
	# The package's own init script may already have started it; fine.
	if redis_ready; then
		log "already answering PING on 127.0.0.1:${REDIS_PORT}"
		return
	fi
	mkdir -p "${REDIS_DIR}"
	chown redis:redis "${REDIS_DIR}" 2>/dev/null || true
	local user=redis
	id -u redis >/dev/null 2>&1 || user=root
	# Our own flags instead of /etc/redis/redis.conf: that file points at
	# /run/redis, which only systemd creates. No persistence: test data only.
	log "starting redis-server as ${user}"
	runuser -u "${user}" -- redis-server \
		--bind 127.0.0.1 --port "${REDIS_PORT}" \
		--daemonize yes \
		--dir "${REDIS_DIR}" \
		--pidfile "${REDIS_DIR}/redis.pid" \
		--logfile "${REDIS_DIR}/redis.log" \
		--save '' --appendonly no ||
		{
			show_log "${REDIS_DIR}/redis.log"
			die "redis-server failed to start"
		}
	wait_for 30 "redis on 127.0.0.1:${REDIS_PORT}" redis_ready || {
		show_log "${REDIS_DIR}/redis.log"
		die "redis did not answer PING within 30s"
	}
}

main() {
	require_root
	local t
	t=$(now)
	install_redis
	record_timing install "${t}"
	t=$(now)
	start_redis
	record_timing start "${t}"
	log "ready: redis://127.0.0.1:${REDIS_PORT}/0"
}

main "$@"

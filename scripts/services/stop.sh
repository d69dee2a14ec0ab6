#!/usr/bin/env bash
# Stops the services scripts/ci-services.sh started, by their pid files (and
# the PostgreSQL cluster by pg_ctlcluster). Keeps the caches and data, so the
# next ci-services.sh run only starts them again. For local use and for
# testing the scripts' cold-start path; CI does not need it.
set -euo pipefail
SERVICE=stop
# shellcheck source=scripts/services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# stop_pidfile NAME PIDFILE sends TERM and waits up to 60s for the exit.
stop_pidfile() {
	local name=$1 pidfile=$2 pid
	if ! pid_alive "${pidfile}"; then
		log "${name}: not running"
		return
	fi
	pid=$(<"${pidfile}")
	log "${name}: stopping pid ${pid}"
	kill "${pid}"
	wait_for 60 "${name} to exit" bash -c "! kill -0 ${pid} 2>/dev/null" ||
		die "${name} (pid ${pid}) did not exit"
	rm -f "${pidfile}"
}

main() {
	require_root
	stop_pidfile elasticsearch "${CMS_CI_STATE}/elasticsearch/es.pid"
	stop_pidfile jaeger "${CMS_CI_STATE}/jaeger/jaeger.pid"
	stop_pidfile nats "${CMS_CI_STATE}/nats/nats.pid"
	stop_pidfile redis "${CMS_CI_STATE}/redis/redis.pid"
	local ver name port status _
	# Only the cluster ci-services.sh uses (port 5432), if it runs.
	while read -r ver name port status _; do
		if [[ ${port} == 5432 && ${status} == online ]]; then
			log "postgres: stopping cluster ${ver}/${name}"
			pg_ctlcluster "${ver}" "${name}" stop
		fi
	done < <(pg_lsclusters -h 2>/dev/null || true)
}

main "$@"

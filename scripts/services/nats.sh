#!/usr/bin/env bash
# Builds nats-server at the version pinned in go.mod (so the server in CI is
# the one the embedded mode links) and starts it with JetStream on
# 127.0.0.1:4222, monitoring on 127.0.0.1:8222. Idempotent.
set -euo pipefail
SERVICE=nats
# shellcheck source=scripts/services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
NATS_MODULE=github.com/nats-io/nats-server/v2
NATS_PORT=4222
NATS_HTTP_PORT=8222
NATS_BIN="${CMS_CI_CACHE}/bin/nats-server"
NATS_DIR="${CMS_CI_STATE}/nats"

# pinned_version reads the version from go.mod (plain text, so it needs
# neither the network nor a resolved workspace). NATS_SERVER_VERSION overrides.
pinned_version() {
	if [[ -n ${NATS_SERVER_VERSION:-} ]]; then
		printf '%s\n' "${NATS_SERVER_VERSION}"
		return
	fi
	local v
	v=$(awk -v m="${NATS_MODULE}" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "${REPO_ROOT}/go.mod")
	[[ -n ${v} ]] || die "${NATS_MODULE} not found in ${REPO_ROOT}/go.mod"
	printf '%s\n' "${v}"
}

install_nats() {
	local ver=$1 have=""
	[[ -x ${NATS_BIN} ]] && have=$("${NATS_BIN}" --version 2>/dev/null | awk '{print $NF}')
	if [[ ${have} == "${ver}" ]]; then
		log "nats-server ${ver} already built at ${NATS_BIN}"
		return
	fi
	log "building ${NATS_MODULE}@${ver} (have: ${have:-none})"
	go_install "${NATS_MODULE}@${ver}"
}

nats_ready() {
	# /healthz?js-enabled-only=true answers 200 only once JetStream is on.
	curl -fsS --max-time 2 \
		"http://127.0.0.1:${NATS_HTTP_PORT}/healthz?js-enabled-only=true" >/dev/null 2>&1
}

start_nats() {
	if nats_ready; then
		log "already running with JetStream on 127.0.0.1:${NATS_PORT}"
		return
	fi
	local pidfile="${NATS_DIR}/nats.pid" logfile="${NATS_DIR}/nats.log"
	if pid_alive "${pidfile}"; then
		# Started by an earlier run and still booting: wait, don't start twice.
		log "nats-server pid $(<"${pidfile}") is running; waiting for it"
	else
		if port_open 127.0.0.1 "${NATS_PORT}"; then
			die "port ${NATS_PORT} is taken by something that is not a JetStream-enabled NATS"
		fi
		mkdir -p "${NATS_DIR}/jetstream"
		chown -R "${CMS_CI_USER}:" "${NATS_DIR}"
		rm -f "${pidfile}"
		log "starting nats-server with JetStream as ${CMS_CI_USER}"
		# setsid + nohup: detach from this script's session and pipes so the
		# server outlives the script and does not hold its output open.
		as_ci_user setsid nohup "${NATS_BIN}" \
			-a 127.0.0.1 -p "${NATS_PORT}" -m "${NATS_HTTP_PORT}" \
			-js -sd "${NATS_DIR}/jetstream" \
			-P "${pidfile}" -l "${logfile}" \
			</dev/null >>"${NATS_DIR}/stdout.log" 2>&1 &
	fi
	wait_for 30 "nats on 127.0.0.1:${NATS_PORT}" nats_ready || {
		show_log "${logfile}"
		die "nats-server did not become healthy within 30s"
	}
}

main() {
	require_root
	local t ver
	ver=$(pinned_version)
	t=$(now)
	install_nats "${ver}"
	record_timing install "${t}"
	t=$(now)
	start_nats
	record_timing start "${t}"
	log "ready: nats://127.0.0.1:${NATS_PORT} (nats-server ${ver}, JetStream)"
}

main "$@"

#!/usr/bin/env bash
# Builds promtool, Prometheus's rule checker, from its Go module at the
# version pinned here (PROMTOOL_VERSION overrides) into $CMS_CI_CACHE/bin:
# the deploy tests check the shipped alert rules with it
# (deploy/observability). Nothing to start. Idempotent: a second run only
# checks the version.
set -euo pipefail
SERVICE=promtool
# shellcheck source=scripts/services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PROMETHEUS_MODULE=github.com/prometheus/prometheus
PROMTOOL_VERSION="${PROMTOOL_VERSION:-v0.316.0}"
PROMTOOL_BIN="${CMS_CI_CACHE}/bin/promtool"

main() {
	require_root
	local t stamp="${PROMTOOL_BIN}.version"
	t=$(now)
	# A binary built by `go install` reports no version of its own, so the
	# version it was built at is kept beside it.
	if [[ -x ${PROMTOOL_BIN} && $(cat "${stamp}" 2>/dev/null) == "${PROMTOOL_VERSION}" ]]; then
		log "promtool ${PROMTOOL_VERSION} already built at ${PROMTOOL_BIN}"
	else
		go_install "${PROMETHEUS_MODULE}/cmd/promtool@${PROMTOOL_VERSION}"
		printf '%s\n' "${PROMTOOL_VERSION}" >"${stamp}"
	fi
	record_timing install "${t}"
	record_timing start "$(now)"
	log "ready: promtool ${PROMTOOL_VERSION} at ${PROMTOOL_BIN}"
}

main "$@"

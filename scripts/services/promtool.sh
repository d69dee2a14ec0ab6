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
	local t have=""
	t=$(now)
	[[ -x ${PROMTOOL_BIN} ]] && have=$("${PROMTOOL_BIN}" --version 2>/dev/null | awk 'NR == 1 {print $3}')
	# promtool prints the Prometheus release (3.x); the module version is
	# v0.<minor>.<patch> of it, so compare the minor and patch parts.
	if [[ -n ${have} && v0.${have#*.} == "${PROMTOOL_VERSION}" ]]; then
		log "promtool ${have} already built at ${PROMTOOL_BIN}"
	else
		go_install "${PROMETHEUS_MODULE}/cmd/promtool@${PROMTOOL_VERSION}"
	fi
	record_timing install "${t}"
	record_timing start "$(now)"
	log "ready: $("${PROMTOOL_BIN}" --version 2>&1 | head -n 1)"
}

main "$@"

#!/usr/bin/env bash
# Installs the compilers the code generator tests run (pkg/codegen): the C#
# compiler mcs (Debian package mono-mcs) and TypeScript's tsc (the npm
# package pinned by compilers/package-lock.json, installed with `npm ci`
# into $CMS_CI_CACHE/typescript). Nothing to start. Idempotent: a second run
# only checks the versions.
set -euo pipefail
SERVICE=compilers
# shellcheck source=scripts/services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LOCK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/compilers" && pwd)"
TS_DIR="${CMS_CI_CACHE}/typescript"

install_mcs() {
	if command -v mcs >/dev/null; then
		log "mcs already installed"
		return
	fi
	log "installing mono-mcs from Debian packages"
	apt_install mono-mcs
}

# tsc_current: the installed lock file equals ours and tsc runs.
tsc_current() {
	cmp -s "${LOCK_DIR}/package-lock.json" "${TS_DIR}/package-lock.json" &&
		"${TS_DIR}/node_modules/.bin/tsc" --version >/dev/null 2>&1
}

install_tsc() {
	command -v npm >/dev/null || die "npm is not on PATH: install Node.js (the tests need tsc)"
	if tsc_current; then
		log "tsc already installed"
		return
	fi
	log "installing typescript (package-lock.json) into ${TS_DIR}"
	mkdir -p "${TS_DIR}"
	cp "${LOCK_DIR}/package.json" "${LOCK_DIR}/package-lock.json" "${TS_DIR}/"
	npm ci --prefix "${TS_DIR}" --ignore-scripts --no-audit --no-fund --cache "${CMS_CI_CACHE}/npm" >&2
	chmod -R a+rX "${TS_DIR}"
}

main() {
	require_root
	local t
	t=$(now)
	install_mcs
	install_tsc
	record_timing install "${t}"
	record_timing start "$(now)"
	log "ready: $(mcs --version), tsc $("${TS_DIR}/node_modules/.bin/tsc" --version)"
}

main "$@"

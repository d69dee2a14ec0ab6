#!/usr/bin/env bash
# Installs and starts the real components the integration tests use:
# PostgreSQL, Redis, NATS (JetStream) and Elasticsearch, and installs the
# compilers the code generator tests run (mcs, tsc), promtool for the shipped
# alert rules, Jaeger (an OTLP receiver the end-to-end trace test exports
# to), and the browser the
# browser test drives (Debian's chromium), on a fresh Debian 12
# machine as root, without Docker. Idempotent: services that already answer
# are left running, so a second run is a quick no-op. Downloads and binaries
# are cached in CMS_CI_CACHE (default /var/cache/cms-ci).
#
# On success it writes an env file (CMS_CI_ENV_FILE, default
# $CMS_CI_CACHE/env) with the CMS_*_URL variables, the compiler paths
# (CMS_MCS, CMS_TSC), the browser's (CMS_CHROMIUM) and Jaeger's OTLP and
# query addresses (CMS_OTLP_URL, CMS_JAEGER_QUERY_URL) pkg/testenv reads:
#   sudo ./scripts/ci-services.sh && source /var/cache/cms-ci/env
# If any component fails it exits non-zero and says which, so CI fails too.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SERVICES=(browser compilers elasticsearch jaeger nats postgres promtool redis)

# Re-exec as root, keeping PATH: sudo's secure_path would otherwise hide the
# Go and Java that CI set up.
if [[ ${EUID} -ne 0 ]]; then
	if command -v sudo >/dev/null; then
		exec sudo -E env "PATH=${PATH}" bash "$0" "$@"
	fi
	echo "ci-services: must run as root and sudo is not available" >&2
	exit 1
fi

# shellcheck source=scripts/services/lib.sh
source "${SCRIPT_DIR}/services/lib.sh"
ENV_FILE="${CMS_CI_ENV_FILE:-${CMS_CI_CACHE}/env}"

# run_service NAME runs one service script, prefixing its output with the
# name so the parallel logs stay readable, and keeping a copy per service.
run_service() {
	local name=$1
	set -o pipefail
	# bash, not ./: works even if a checkout lost the executable bits.
	bash "${SCRIPT_DIR}/services/${name}.sh" 2>&1 |
		tee "${CMS_CI_STATE}/logs/${name}.log" |
		sed -u "s/^/[${name}] /"
}

timing() {
	local f="${CMS_CI_STATE}/timings/$1.$2"
	if [[ -s ${f} ]]; then printf '%ss' "$(<"${f}")"; else printf -- '-'; fi
}

write_env_file() {
	mkdir -p "$(dirname "${ENV_FILE}")"
	local tmp="${ENV_FILE}.tmp.$$"
	cat >"${tmp}" <<-'EOF'
		# Written by scripts/ci-services.sh: addresses of the CI components.
		export CMS_POSTGRES_URL='postgres://cms:cms@127.0.0.1:5432/cms?sslmode=disable'
		export CMS_REDIS_URL='redis://127.0.0.1:6379/0'
		export CMS_NATS_URL='nats://127.0.0.1:4222'
		export CMS_ELASTICSEARCH_URL='http://127.0.0.1:9200'
		export CMS_OTLP_URL='http://127.0.0.1:4318'
		export CMS_JAEGER_QUERY_URL='http://127.0.0.1:16686'
	EOF
	printf "export CMS_MCS='%s'\nexport CMS_TSC='%s'\n" "$(command -v mcs)" \
		"${CMS_CI_CACHE}/typescript/node_modules/.bin/tsc" >>"${tmp}"
	printf "export CMS_CHROMIUM='%s'\n" "${CHROMIUM_BIN}" >>"${tmp}"
	printf "export CMS_PROMTOOL='%s'\n" "${CMS_CI_CACHE}/bin/promtool" >>"${tmp}"
	chmod 644 "${tmp}"
	mv "${tmp}" "${ENV_FILE}"
}

main() {
	local start name failed=()
	start=$(now)
	# 755: the CI user must traverse both to reach its own subdirectories.
	mkdir -p "${CMS_CI_CACHE}" "${CMS_CI_STATE}/logs"
	chmod 755 "${CMS_CI_CACHE}" "${CMS_CI_STATE}"
	rm -rf "${CMS_CI_STATE}/timings"
	ensure_ci_user

	# All at once: Elasticsearch's download and boot and Jaeger's build (the
	# largest module graph here) are the long poles, the NATS build is
	# CPU-bound, the apt installs (mono-mcs, chromium,
	# PostgreSQL, Redis) serialise on a lock.
	declare -A pids=()
	for name in "${SERVICES[@]}"; do
		run_service "${name}" &
		pids[${name}]=$!
	done
	for name in "${SERVICES[@]}"; do
		wait "${pids[${name}]}" || failed+=("${name}")
	done

	log "component      install  start"
	for name in "${SERVICES[@]}"; do
		log "$(printf '%-14s %7s %6s' "${name}" "$(timing "${name}" install)" "$(timing "${name}" start)")"
	done
	log "total $(($(now) - start))s"

	if ((${#failed[@]} > 0)); then
		for name in "${failed[@]}"; do
			log "FAILED: ${name} (full log: ${CMS_CI_STATE}/logs/${name}.log)"
		done
		die "${#failed[@]} component(s) failed: ${failed[*]}; integration tests cannot run"
	fi
	write_env_file
	log "all components running; env file: ${ENV_FILE}"
	log "use it with: source ${ENV_FILE}"
}

main "$@"

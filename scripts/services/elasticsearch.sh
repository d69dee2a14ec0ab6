#!/usr/bin/env bash
# Fetches Elasticsearch's integ-test-zip distribution from Maven Central with
# mvn, unpacks it into the cache and runs it as an unprivileged user on the
# machine's JDK 17, single node on 127.0.0.1:9200. Idempotent.
#
# Why this distribution: it is the only Elasticsearch 8 build on Maven Central
# (the usual tarball comes from a host this CI cannot reach). What it holds,
# found by unpacking 8.19.7: modules apm, transport-netty4, x-pack-core and
# x-pack-security, and nothing else: no analysis-common (no stemmers, ngram,
# custom analyzer filters beyond core's), no lang-painless, mapper-extras,
# aggregations, reindex, ingest-common, data-streams. No bundled JDK either,
# hence ES_JAVA_HOME. Because x-pack-security IS in it, the setting
# xpack.security.enabled is known and accepted; tested without it, 8.19.7
# auto-configures TLS on HTTP and answers 401 without credentials, so the
# config sets it to false: plain HTTP, no auth. Also missing: the rest-root
# module, so `GET /` answers 405 (go-elasticsearch v8's product check reads
# the X-Elastic-Product header of real responses, which is present); index,
# mapping, match/bool queries, terms aggregations and highlighting work.
set -euo pipefail
SERVICE=elasticsearch
# shellcheck source=scripts/services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# 8.19.7 matches the go-elasticsearch client in go.mod (v8.19.7).
ES_VERSION="${ES_VERSION:-8.19.7}"
ES_ARTIFACT="org.elasticsearch.distribution.integ-test-zip:elasticsearch:${ES_VERSION}:zip"
# Pinned so mvn does not resolve "latest" plugin metadata on every run.
MVN_DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
ES_PORT=9200
ES_TRANSPORT_PORT=9300
ES_URL="http://127.0.0.1:${ES_PORT}"
ES_ZIP="${CMS_CI_CACHE}/downloads/elasticsearch-${ES_VERSION}.zip"
ES_HOME="${CMS_CI_CACHE}/elasticsearch-${ES_VERSION}"
ES_STATE="${CMS_CI_STATE}/elasticsearch"

# find_java_home prints a JDK home for ES: ES_JAVA_HOME, then JAVA_HOME, then
# the java on PATH; a JDK 17 from Debian when there is none (ES 8 needs 17+).
find_java_home() {
	local h
	for h in "${ES_JAVA_HOME:-}" "${JAVA_HOME:-}"; do
		[[ -n ${h} && -x ${h}/bin/java ]] && {
			printf '%s\n' "${h}"
			return
		}
	done
	if ! command -v java >/dev/null; then
		log "no java found; installing openjdk-17-jre-headless"
		apt_install openjdk-17-jre-headless >&2
	fi
	h=$(readlink -f "$(command -v java)")
	printf '%s\n' "${h%/bin/java}"
}

download_es() {
	if [[ -s ${ES_ZIP} ]]; then
		log "using downloaded ${ES_ZIP}"
		return
	fi
	command -v mvn >/dev/null || {
		log "installing maven"
		apt_install maven
	}
	log "fetching ${ES_ARTIFACT} from Maven Central"
	mkdir -p "${CMS_CI_CACHE}/downloads" "${CMS_CI_CACHE}/m2"
	# The local repository lives in the cache too, so the plugin's own jars
	# are cached with everything else. -B: no progress bars in CI logs; the
	# sed strips the colour resets Debian's mvn prints even then.
	(cd "${CMS_CI_CACHE}" && set -o pipefail && mvn -B -q -Dstyle.color=never \
		-Dmaven.repo.local="${CMS_CI_CACHE}/m2" \
		"${MVN_DEPENDENCY_PLUGIN}:copy" \
		-Dartifact="${ES_ARTIFACT}" \
		-DoutputDirectory="${CMS_CI_CACHE}/downloads" 2>&1 |
		sed -u $'s/\x1b\\[[0-9;]*m//g') ||
		die "mvn could not fetch ${ES_ARTIFACT}"
	[[ -s ${ES_ZIP} ]] || die "mvn succeeded but ${ES_ZIP} is missing"
}

unpack_es() {
	command -v unzip >/dev/null || apt_install unzip
	# Unpack beside the target and rename, so an interrupted unzip never
	# leaves a half tree that a later run would take as complete.
	local tmp="${ES_HOME}.tmp.$$"
	rm -rf "${tmp}"
	mkdir -p "${tmp}"
	unzip -q "${ES_ZIP}" -d "${tmp}" || die "cannot unzip ${ES_ZIP}"
	mv "${tmp}/elasticsearch-${ES_VERSION}" "${ES_HOME}"
	rm -rf "${tmp}"
	# Read-only for the CI user: all writes go to ES_STATE.
	chmod -R a+rX "${ES_HOME}"
	# The zip is also in the Maven repository in the cache; one copy is enough.
	rm -f "${ES_ZIP}"
	log "unpacked into ${ES_HOME}"
}

install_es() {
	if [[ -x ${ES_HOME}/bin/elasticsearch ]]; then
		log "using unpacked ${ES_HOME}"
		return
	fi
	download_es
	unpack_es
}

# write_config makes a config dir the CI user owns (ES writes its keystore
# there) from the distribution's, with our settings.
write_config() {
	local conf="${ES_STATE}/config"
	mkdir -p "${ES_STATE}/data" "${ES_STATE}/logs" "${ES_STATE}/tmp"
	rm -rf "${conf}"
	cp -r "${ES_HOME}/config" "${conf}"
	cat >"${conf}/elasticsearch.yml" <<-EOF
		# Written by scripts/services/elasticsearch.sh; changes are overwritten.
		cluster.name: cms-ci
		node.name: cms-ci-1
		discovery.type: single-node
		# Loopback only: also keeps ES in development mode, so production
		# bootstrap checks (vm.max_map_count etc.) only warn.
		network.host: 127.0.0.1
		http.port: ${ES_PORT}
		transport.port: ${ES_TRANSPORT_PORT}
		path.data: ${ES_STATE}/data
		path.logs: ${ES_STATE}/logs
		# x-pack-security is part of this build and on by default; tests
		# talk plain HTTP without credentials.
		xpack.security.enabled: false
		# CI disks are often nearly full; the watermarks would then stop
		# shard allocation and the cluster would never turn yellow.
		cluster.routing.allocation.disk.threshold_enabled: false
	EOF
	chown -R "${CMS_CI_USER}:" "${ES_STATE}"
}

es_ready() {
	curl -fsS --max-time 5 "${ES_URL}/_cluster/health?wait_for_status=yellow&timeout=4s" >/dev/null 2>&1
}

start_es() {
	if es_ready; then
		log "already answering on ${ES_URL}"
		return
	fi
	local pidfile="${ES_STATE}/es.pid"
	if pid_alive "${pidfile}"; then
		log "elasticsearch pid $(<"${pidfile}") is running; waiting for it"
	else
		if port_open 127.0.0.1 "${ES_PORT}"; then
			die "port ${ES_PORT} is taken by something that is not a healthy Elasticsearch"
		fi
		local java_home
		java_home=$(find_java_home)
		log "starting elasticsearch ${ES_VERSION} as ${CMS_CI_USER} on $("${java_home}/bin/java" -version 2>&1 | head -n 1)"
		write_config
		rm -f "${pidfile}"
		# cwd = ES_STATE: jvm.options writes gc.log and hs_err files relative
		# to it. -d daemonizes once the node has started; setsid detaches it
		# from this script's session and output pipes.
		(cd "${ES_STATE}" && as_ci_user env \
			ES_JAVA_HOME="${java_home}" \
			ES_PATH_CONF="${ES_STATE}/config" \
			ES_TMPDIR="${ES_STATE}/tmp" \
			ES_JAVA_OPTS="-Xms512m -Xmx512m" \
			setsid "${ES_HOME}/bin/elasticsearch" -d -p "${pidfile}" \
			</dev/null >>"${ES_STATE}/stdout.log" 2>&1) || {
			show_log "${ES_STATE}/stdout.log"
			show_log "${ES_STATE}/logs/cms-ci.log"
			die "elasticsearch failed to start"
		}
	fi
	wait_for 180 "elasticsearch on ${ES_URL}" es_ready || {
		show_log "${ES_STATE}/logs/cms-ci.log"
		die "elasticsearch did not reach yellow within 180s"
	}
}

main() {
	require_root
	ensure_ci_user
	local t
	t=$(now)
	install_es
	record_timing install "${t}"
	t=$(now)
	start_es
	record_timing start "${t}"
	log "ready: ${ES_URL} (elasticsearch ${ES_VERSION}, integ-test-zip)"
}

main "$@"

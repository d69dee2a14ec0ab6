#!/usr/bin/env bash
# Builds Jaeger (the all-in-one `jaeger` binary, an OpenTelemetry collector
# with Jaeger's in-memory trace store and query service) from its Go module at
# the version pinned here (JAEGER_VERSION overrides) into $CMS_CI_CACHE/bin,
# and starts it as the CI user: OTLP on 127.0.0.1:4317 (gRPC) and
# 127.0.0.1:4318 (HTTP), the query API on 127.0.0.1:16686. TestTraceEndToEnd
# (services/cms) exports to it and reads the trace back. Idempotent.
#
# Jaeger's go.mod has replace directives, so `go install module@version`
# refuses it: go_build_module builds inside a copy of the downloaded module.
set -euo pipefail
SERVICE=jaeger
# shellcheck source=scripts/services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

JAEGER_MODULE=github.com/jaegertracing/jaeger
JAEGER_VERSION="${JAEGER_VERSION:-v1.75.0}"
JAEGER_BIN="${CMS_CI_CACHE}/bin/jaeger"
JAEGER_DIR="${CMS_CI_STATE}/jaeger"
JAEGER_OTLP_GRPC_PORT=4317
JAEGER_OTLP_HTTP_PORT=4318
JAEGER_QUERY_PORT=16686
JAEGER_HEALTH_PORT=13133

install_jaeger() {
	local stamp="${JAEGER_BIN}.version"
	# Built from source, the binary's own version string is empty: the
	# version it was built at is kept beside it.
	if [[ -x ${JAEGER_BIN} && $(cat "${stamp}" 2>/dev/null) == "${JAEGER_VERSION}" ]]; then
		log "jaeger ${JAEGER_VERSION} already built at ${JAEGER_BIN}"
		return
	fi
	log "building ${JAEGER_MODULE}@${JAEGER_VERSION} ./cmd/jaeger (a few minutes on a fresh machine)"
	go_build_module "${JAEGER_MODULE}@${JAEGER_VERSION}" ./cmd/jaeger "${JAEGER_BIN}"
	printf '%s\n' "${JAEGER_VERSION}" >"${stamp}"
}

# write_config writes the all-in-one configuration cut to what the tests use:
# OTLP in, the memory store, the query service and the health check, all on
# loopback, and no listener on the other ports the embedded default opens
# (Jaeger's and Zipkin's own protocols, sampling, expvar, zpages, the
# collector's metrics on 8888).
write_config() {
	cat >"${JAEGER_DIR}/config.yaml" <<-YAML
		service:
		  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
		  pipelines:
		    traces:
		      receivers: [otlp]
		      processors: [batch]
		      exporters: [jaeger_storage_exporter]
		  telemetry:
		    resource:
		      service.name: jaeger
		    metrics:
		      level: none
		    logs:
		      level: info
		extensions:
		  jaeger_query:
		    storage:
		      traces: memstore
		    http:
		      endpoint: 127.0.0.1:${JAEGER_QUERY_PORT}
		    grpc:
		      endpoint: 127.0.0.1:16685
		  jaeger_storage:
		    backends:
		      memstore:
		        memory:
		          max_traces: 100000
		  healthcheckv2:
		    use_v2: true
		    http:
		      endpoint: 127.0.0.1:${JAEGER_HEALTH_PORT}
		receivers:
		  otlp:
		    protocols:
		      grpc:
		        endpoint: 127.0.0.1:${JAEGER_OTLP_GRPC_PORT}
		      http:
		        endpoint: 127.0.0.1:${JAEGER_OTLP_HTTP_PORT}
		processors:
		  batch:
		    timeout: 200ms
		exporters:
		  jaeger_storage_exporter:
		    trace_storage: memstore
	YAML
}

# jaeger_ready: the query API answers (it lists the services it has traces
# of) and the OTLP/HTTP receiver accepts connections.
jaeger_ready() {
	curl -fsS --max-time 2 "http://127.0.0.1:${JAEGER_QUERY_PORT}/api/services" >/dev/null 2>&1 &&
		port_open 127.0.0.1 "${JAEGER_OTLP_HTTP_PORT}"
}

start_jaeger() {
	if jaeger_ready; then
		log "already running: query on 127.0.0.1:${JAEGER_QUERY_PORT}"
		return
	fi
	local pidfile="${JAEGER_DIR}/jaeger.pid" logfile="${JAEGER_DIR}/jaeger.log"
	if pid_alive "${pidfile}"; then
		log "jaeger pid $(<"${pidfile}") is running; waiting for it"
	else
		local port
		for port in "${JAEGER_OTLP_GRPC_PORT}" "${JAEGER_OTLP_HTTP_PORT}" "${JAEGER_QUERY_PORT}"; do
			if port_open 127.0.0.1 "${port}"; then
				die "port ${port} is taken by something that is not Jaeger's query service"
			fi
		done
		mkdir -p "${JAEGER_DIR}"
		write_config
		chown -R "${CMS_CI_USER}:" "${JAEGER_DIR}"
		rm -f "${pidfile}"
		log "starting jaeger as ${CMS_CI_USER}"
		# The binary writes no pid file: the shell that execs it does, so the
		# pid is the server's. setsid + nohup as for nats-server.
		as_ci_user setsid nohup bash -c 'echo $$ >"$1"; exec "$2" --config "$3"' \
			jaeger "${pidfile}" "${JAEGER_BIN}" "${JAEGER_DIR}/config.yaml" \
			</dev/null >>"${logfile}" 2>&1 &
	fi
	wait_for 60 "jaeger on 127.0.0.1:${JAEGER_QUERY_PORT}" jaeger_ready || {
		show_log "${logfile}"
		die "jaeger did not become ready within 60s"
	}
}

main() {
	require_root
	ensure_ci_user # run alone, not only from ci-services.sh
	local t
	t=$(now)
	install_jaeger
	record_timing install "${t}"
	t=$(now)
	start_jaeger
	record_timing start "${t}"
	log "ready: OTLP http://127.0.0.1:${JAEGER_OTLP_HTTP_PORT}, query http://127.0.0.1:${JAEGER_QUERY_PORT} (jaeger ${JAEGER_VERSION})"
}

main "$@"

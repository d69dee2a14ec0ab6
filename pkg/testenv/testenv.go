// Package testenv gives integration tests the addresses of the real components
// (PostgreSQL, NATS, Elasticsearch, Redis, and Jaeger as the OTLP receiver
// of traces) that scripts/ci-services.sh starts.
//
// Locally, a test whose component is not configured is skipped with a message
// that says how to start it. Under CI (the CI environment variable is set) the
// same test fails instead, so a CI run can never pass with the integration
// tests silently skipped.
package testenv

import (
	"os"
	"testing"
)

// Environment variables naming the real components.
const (
	PostgresURL      = "CMS_POSTGRES_URL"
	NATSURL          = "CMS_NATS_URL"
	ElasticsearchURL = "CMS_ELASTICSEARCH_URL"
	RedisURL         = "CMS_REDIS_URL"
	// OTLPURL is the base URL of an OTLP/HTTP receiver of traces (Jaeger's,
	// scripts/services/jaeger.sh): the value of OTEL_EXPORTER_OTLP_ENDPOINT.
	OTLPURL = "CMS_OTLP_URL"
	// JaegerQueryURL is the base URL of the Jaeger query service that reads
	// back what was exported to OTLPURL.
	JaegerQueryURL = "CMS_JAEGER_QUERY_URL"
)

// urlHints say more about a component than the default message does.
var urlHints = map[string]string{
	OTLPURL: "the traces go to Jaeger, which `sudo bash scripts/services/jaeger.sh` builds and starts alone: " +
		"then CMS_OTLP_URL=http://127.0.0.1:4318 CMS_JAEGER_QUERY_URL=http://127.0.0.1:16686",
	JaegerQueryURL: "Jaeger's query service, started by `sudo bash scripts/services/jaeger.sh`",
}

// URL returns the value of the environment variable name. When it is unset the
// test is skipped, or fails when the CI environment variable is set.
func URL(t testing.TB, name string) string {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	msg := name + " is not set: this integration test needs the real component. " +
		"Start it with `sudo ./scripts/ci-services.sh` and source the env file it prints"
	if hint := urlHints[name]; hint != "" {
		msg += " (" + hint + ")"
	}
	if InCI() {
		t.Fatalf("%s (CI=%q: integration tests must run in CI, not skip)", msg, os.Getenv("CI"))
	}
	t.Skip(msg)
	return ""
}

// InCI reports whether the tests run under CI.
func InCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "0" && v != "false"
}

# The two commands a newcomer needs: `make run` and `make test`.
SHELL := /bin/bash
GO    ?= go
DATA  ?= ./data

.PHONY: run test build image proto proto-check studio studio-deps studio-check bench fuzz lint ci-services clean

## run: the whole system in one process on embedded defaults (SQLite, embedded NATS, Bleve, memory cache)
run:
	$(GO) run ./services/cms run --data-dir $(DATA)

## build: the cms binary into bin/, stamped with version (the VERSION file), commit and build date (`bin/cms version`)
VERSION    ?= $(shell cat VERSION 2>/dev/null || echo devel)
COMMIT     ?= $(shell git rev-parse HEAD 2>/dev/null)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
build:
	$(GO) build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.buildDate=$(BUILD_DATE)" \
	  -o bin/cms ./services/cms

## image: the container image cms:$(VERSION) (deploy/docker/Dockerfile), stamped like `make build`; the Kubernetes
## manifests pin the same tag (deploy/image_test.go checks it). IMAGE names the repository (default cms).
IMAGE ?= cms
image:
	docker build -f deploy/docker/Dockerfile --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) \
	  --build-arg BUILD_DATE=$(BUILD_DATE) -t $(IMAGE):$(VERSION) .

## test: go vet, then every test; integration tests use CMS_*_URL and skip locally without them (they fail under
## CI=true). Progress: vet prints "vet: <package>" for each package of ours it compiles (scripts/vet-progress.awk),
## the tests print each package's ok/FAIL line as it completes. The log keeps each top-level test's result (so CI
## shows the integration tests ran, not skipped), every skip with its reason and every failure, with the messages of
## test helpers in non-test files too (a conformance suite's "cases.go:83: …").
# TIMED_TESTS assert what a person waits for (the studio's budgets: a list page in 300 ms, an object in 200 ms) or a
# throughput ratio; they run after every other test, one package at a time, so that what they measure is the
# platform and not the test packages running beside them on the same cores. TestTimedTestsExist (scripts/) checks
# that each is still defined in its package.
TIMED_TESTS    := ^(TestStudio|TestLoadSheddingKeepsThroughput)$$
TIMED_PACKAGES := ./services/cms ./services/internal/app
# TEST_LOG keeps of go test -v what the log needs (see test).
TEST_LOG := grep -E --line-buffered '^(--- |ok |FAIL|panic:|\?)|^ +--- (FAIL|SKIP)|_test\.go:[0-9]+:|^ +[A-Za-z0-9_]+\.go:[0-9]+: |\.go:[0-9]+:[0-9]+: |^\#'
test: studio-deps
	@echo "== studio: tsc (strict) and the TypeScript unit tests"
	cd studio && node test.mjs
	@echo "== go vet ./... ($$($(GO) list ./... | wc -l) packages; findings are printed, nothing else)"
	@set -o pipefail; $(GO) vet -v ./... 2>&1 | awk -f scripts/vet-progress.awk
	@echo "== go test ./... (one ok/FAIL line per package, in package order; up to 20 minutes with the integration tests)"
	set -o pipefail; $(GO) test -count=1 -timeout 20m -v -skip '$(TIMED_TESTS)' ./... 2>&1 | $(TEST_LOG)
	@echo "== go test -run '$(TIMED_TESTS)' (the tests that hold a time budget, one package at a time, after the others)"
	set -o pipefail; $(GO) test -count=1 -timeout 20m -v -p 1 -run '$(TIMED_TESTS)' $(TIMED_PACKAGES) 2>&1 | $(TEST_LOG)
	@echo "== deploy: vet and test the manifests"
	cd deploy && $(GO) vet ./... && $(GO) test -count=1 ./...

## proto: format, lint and regenerate proto/gen (committed); CI fails on drift
proto:
	cd proto && $(GO) tool buf format -w && $(GO) tool buf lint && $(GO) tool buf generate
	./scripts/gen-openapi.sh
	$(GO) build ./proto/gen/...
	$(GO) run ./scripts/studioapi

## proto-check: regenerate and fail if the committed code differs (the studio's API types included)
proto-check: proto
	@out="$$(git status --porcelain -- proto studio/src/api/generated)"; if [ -n "$$out" ]; then \
	  echo "make proto changed these files; run make proto and commit:"; echo "$$out"; git diff --stat -- proto studio/src/api/generated; exit 1; fi

## studio-deps: the studio's locked npm packages (studio/package-lock.json) into studio/node_modules, when it changed
studio-deps:
	@if ! cmp -s studio/package-lock.json studio/node_modules/.studio-lock 2>/dev/null; then \
	  echo "== npm ci (studio/package-lock.json)"; \
	  (cd studio && npm ci --no-audit --no-fund) && cp studio/package-lock.json studio/node_modules/.studio-lock; fi

## studio: the studio's API types (from the served OpenAPI documents) and its bundle services/internal/studio/dist (committed)
studio: studio-deps
	$(GO) run ./scripts/studioapi
	cd studio && node build.mjs

## studio-check: rebuild the studio and fail if the committed bundle or API types differ
studio-check: studio
	@out="$$(git status --porcelain -- services/internal/studio/dist studio/src/api/generated)"; if [ -n "$$out" ]; then \
	  echo "make studio changed these files; run make studio and commit:"; echo "$$out"; exit 1; fi

## bench: benchmarks and load harness; prints ratios against baselines measured in the same run
## (-p 1: one package at a time, so benchmarks do not compete for the cores)
bench:
	$(GO) test -p 1 -run '^$$' -bench . -benchmem ./...

## fuzz: every fuzz target for FUZZTIME (default 15s) each
fuzz:
	./scripts/fuzz.sh

## ci-services: install and start PostgreSQL, Redis, NATS, Elasticsearch and Jaeger (as root, idempotent)
ci-services:
	./scripts/ci-services.sh

clean:
	rm -rf bin $(DATA)

## lint: golangci-lint (version pinned in scripts/tools/go.mod) with .golangci.yml
lint:
	$(GO) tool golangci-lint run ./...

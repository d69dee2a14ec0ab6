#!/usr/bin/env bash
# Runs every Go fuzz target of the repository for FUZZTIME each (default 15s).
# `go test -fuzz` takes one target per run, so this finds them all.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-15s}
grep -rl --include='*_test.go' '^func Fuzz' pkg services | while read -r file; do
	dir=./$(dirname "$file")
	grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | cut -d' ' -f2 | while read -r target; do
		echo "== $dir $target ($fuzztime)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$dir"
	done
done

#!/usr/bin/env bash
# Runs every fuzz target of the module for a bounded budget each (default
# 30000 executions, a few seconds a target): extraction, canonicalization,
# robots.txt parsing, Retry-After, content types, decoding. A failure
# leaves its input in the package's testdata/fuzz, to be committed as a
# regression case. The budget is a count, not a duration: with a duration,
# Go before 1.27 can fail a target with a bare "context deadline exceeded"
# and no input as its -fuzztime ends (golang/go#75804).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-30000x}
go=${GO:-go}
for pkg in $($go list ./...); do
  dir=$($go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $target ($fuzztime)"
    $go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg"
  done
done

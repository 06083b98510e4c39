#!/usr/bin/env bash
# Reports functions that no shipped main reaches (golang.org/x/tools
# deadcode, from the crawler's and the bench's mains), less those
# scripts/deadcode.allow names with the reason they stay. Anything else
# fails: code only tests call belongs in the tests, or gone. staticcheck
# cannot see an unused exported name, which is how such paths survived.
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
version=v0.39.0
roots=(./cmd/crawler ./cmd/crawler-bench)
out=$($go run golang.org/x/tools/cmd/deadcode@$version "${roots[@]}")
allow=scripts/deadcode.allow
unexpected=$(printf '%s\n' "$out" | awk -v allow="$allow" '
  BEGIN { while ((getline line < allow) > 0) { sub(/#.*/, "", line); gsub(/[ \t]+/, "", line); if (line != "") ok[line] = 1 } }
  NF == 0 { next }
  { split($1, loc, ":"); name = $NF; if ((loc[1] ":" name) in ok) next
    for (k in ok) if (k ~ /\/$/ && index(loc[1], k) == 1) next
    print }')
if [ -n "$unexpected" ]; then
  echo "deadcode: unreachable from the shipped mains and not in $allow:" >&2
  printf '%s\n' "$unexpected" >&2
  exit 1
fi
echo "deadcode: nothing unexpected ($(printf '%s\n' "$out" | grep -c . || true) allowed)"

#!/usr/bin/env bash
# Runs a command with the servers the integration tests need:
#  - Redis at CRAWLER_TEST_REDIS (default 127.0.0.1:6379) must answer; this
#    script does not start one (.ci/run does, on a fresh machine).
#  - A MongoDB-wire server at CRAWLER_TEST_MONGO; when unset, an embedded
#    FerretDB (tools/ferretdb-runner, SQLite backend) is built, started on a
#    free loopback port for the duration of the command, and stopped after.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

redis_addr=${CRAWLER_TEST_REDIS:-127.0.0.1:6379}
redis_addr=${redis_addr#redis://}
if ! (exec 3<>"/dev/tcp/${redis_addr%:*}/${redis_addr##*:}") 2>/dev/null; then
  echo "with-test-servers: no Redis answers at $redis_addr (start redis-server, or set CRAWLER_TEST_REDIS)" >&2
  exit 1
fi

if [ -z "${CRAWLER_TEST_MONGO:-}" ]; then
  bin="$root/bin/ferretdb-runner"
  (cd "$root/tools/ferretdb-runner" && go build -o "$bin" .)
  datadir=$(mktemp -d -t crawler-ferretdb.XXXXXX)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 27117)
  "$bin" -listen "127.0.0.1:$port" -dir "$datadir" >"$datadir/uri" 2>"$datadir/log" &
  fpid=$!
  trap 'kill $fpid 2>/dev/null; wait $fpid 2>/dev/null; rm -rf "$datadir"' EXIT
  for _ in $(seq 1 300); do
    [ -s "$datadir/uri" ] && break
    if ! kill -0 $fpid 2>/dev/null; then
      echo "with-test-servers: ferretdb-runner exited:" >&2; cat "$datadir/log" >&2; exit 1
    fi
    sleep 0.1
  done
  [ -s "$datadir/uri" ] || { echo "with-test-servers: FerretDB did not start" >&2; cat "$datadir/log" >&2; exit 1; }
  export CRAWLER_TEST_MONGO=$(head -1 "$datadir/uri")
  echo "with-test-servers: FerretDB at $CRAWLER_TEST_MONGO" >&2
fi
export CRAWLER_TEST_REDIS=$redis_addr
"$@"

#!/usr/bin/env bash
# Runs a command with the servers the integration tests need:
#  - Redis at CRAWLER_TEST_REDIS (host:port) when that is set; else a
#    redis-server of its own, started on a free loopback port for the
#    duration of the command and stopped after (a Redis on 6379 is left
#    alone: on a shared machine it is someone else's). The fault tests need
#    redis-server on the PATH anyway: apt-get install redis-server.
#  - A MongoDB-wire server at CRAWLER_TEST_MONGO; when unset, an embedded
#    FerretDB (tools/ferretdb-runner, SQLite backend) is built, started on a
#    free loopback port for the duration of the command, and stopped after.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo "$1"
}
cleanup=()
# cleanup runs last-registered first: a server is stopped before its
# directory goes.
trap 'for ((i = ${#cleanup[@]} - 1; i >= 0; i--)); do eval "${cleanup[i]}"; done' EXIT

answers() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }

# start_redis starts a redis-server of the command's own on a free port and
# sets redis_addr; it fails when the server does not answer as itself (the
# port can be taken between the probe and the start: then it tries again).
start_redis() {
  if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    echo "with-test-servers: redis-server (and its redis-cli) is not installed" >&2
    echo "  install it (Debian/Ubuntu: sudo apt-get install redis-server), or set CRAWLER_TEST_REDIS" >&2
    exit 1
  fi
  local rdir rport rpid
  rdir=$(mktemp -d -t crawler-redis.XXXXXX)
  cleanup+=("rm -rf $rdir")
  for _ in 1 2 3; do
    rport=$(free_port 26379)
    redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no --dir "$rdir" \
      --logfile "$rdir/redis.log" &
    rpid=$!
    cleanup+=("kill $rpid 2>/dev/null; wait $rpid 2>/dev/null")
    for _ in $(seq 1 100); do
      kill -0 "$rpid" 2>/dev/null || break
      if answers "127.0.0.1:$rport" && [ "$(redis-cli -p "$rport" info server | tr -d '\r' | sed -n 's/^process_id://p')" = "$rpid" ]; then
        redis_addr=127.0.0.1:$rport
        echo "with-test-servers: started redis-server at $redis_addr" >&2
        return
      fi
      sleep 0.1
    done
    kill "$rpid" 2>/dev/null || true
  done
  echo "with-test-servers: redis-server did not start:" >&2; tail -5 "$rdir/redis.log" >&2; exit 1
}

if [ -n "${CRAWLER_TEST_REDIS:-}" ]; then
  redis_addr=${CRAWLER_TEST_REDIS#redis://}
  if ! answers "$redis_addr"; then
    echo "with-test-servers: no Redis answers at CRAWLER_TEST_REDIS=$CRAWLER_TEST_REDIS" >&2
    exit 1
  fi
else
  start_redis
fi

if [ -z "${CRAWLER_TEST_MONGO:-}" ]; then
  bin="$root/bin/ferretdb-runner"
  (cd "$root/tools/ferretdb-runner" && go build -o "$bin" .)
  datadir=$(mktemp -d -t crawler-ferretdb.XXXXXX)
  port=$(free_port 27117)
  "$bin" -listen "127.0.0.1:$port" -dir "$datadir" >"$datadir/uri" 2>"$datadir/log" &
  fpid=$!
  cleanup+=("kill $fpid 2>/dev/null; wait $fpid 2>/dev/null; rm -rf $datadir")
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

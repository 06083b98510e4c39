#!/usr/bin/env bash
# Runs a command with the servers the integration tests need:
#  - Redis at CRAWLER_TEST_REDIS (default 127.0.0.1:6379); when none answers
#    there, a redis-server of its own is started on a free loopback port for
#    the duration of the command (the fault tests need redis-server on the
#    PATH anyway: apt-get install redis-server).
#  - A MongoDB-wire server at CRAWLER_TEST_MONGO; when unset, an embedded
#    FerretDB (tools/ferretdb-runner, SQLite backend) is built, started on a
#    free loopback port for the duration of the command, and stopped after.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo "$1"
}
cleanup=()
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT

redis_addr=${CRAWLER_TEST_REDIS:-127.0.0.1:6379}
redis_addr=${redis_addr#redis://}
if ! (exec 3<>"/dev/tcp/${redis_addr%:*}/${redis_addr##*:}") 2>/dev/null; then
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "with-test-servers: no Redis answers at $redis_addr and redis-server is not installed" >&2
    echo "  install it (Debian/Ubuntu: sudo apt-get install redis-server), or set CRAWLER_TEST_REDIS" >&2
    exit 1
  fi
  rport=$(free_port 26379)
  rdir=$(mktemp -d -t crawler-redis.XXXXXX)
  redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no --dir "$rdir" \
    --daemonize yes --pidfile "$rdir/redis.pid" --logfile "$rdir/redis.log"
  cleanup+=("kill \$(cat $rdir/redis.pid) 2>/dev/null; rm -rf $rdir")
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$rport") 2>/dev/null && break; sleep 0.1; done
  redis_addr=127.0.0.1:$rport
  echo "with-test-servers: no Redis answered; started redis-server at $redis_addr" >&2
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

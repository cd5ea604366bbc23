#!/usr/bin/env bash
# Start a throwaway PostgreSQL server for the store's tests and print its URL on stdout.
# It runs as a non-root user (PostgreSQL refuses root) with its data in a temporary folder,
# listening on 127.0.0.1 only. Usage:  export GUARDRAIL_TEST_POSTGRES_URL="$(bash .ci/postgres.sh)"
# Prints nothing (and exits 0) when no server can start: the PostgreSQL tests then skip.
set -uo pipefail
cd / # the server runs as another user, who may not enter the caller's folder
BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  echo ".ci/postgres.sh: no PostgreSQL server binaries (apt-get install postgresql)" >&2
  exit 0
fi
# A free loopback port unless one is given.
PORT="${GUARDRAIL_TEST_POSTGRES_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
DIR="$(mktemp -d /tmp/guardrail-pg.XXXXXX)"
RUN=()
if [ "$(id -u)" = "0" ]; then
  USER_NAME=postgres
  id "$USER_NAME" >/dev/null 2>&1 || useradd --system --no-create-home "$USER_NAME" >/dev/null 2>&1
  chown "$USER_NAME" "$DIR"
  RUN=(runuser -u "$USER_NAME" --)
fi
if ! "${RUN[@]}" "$BIN/initdb" -D "$DIR/data" -A trust -U guardrail >"$DIR/initdb.log" 2>&1; then
  echo ".ci/postgres.sh: initdb failed (see $DIR/initdb.log)" >&2
  exit 0
fi
if ! "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c max_connections=200 -c fsync=on" start >&2; then
  echo ".ci/postgres.sh: the server did not start (see $DIR/server.log)" >&2
  exit 0
fi
"${RUN[@]}" "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U guardrail guardrail_test >&2 || exit 0
echo "postgresql://guardrail@127.0.0.1:$PORT/guardrail_test"

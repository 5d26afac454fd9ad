#!/usr/bin/env bash
# Sourced by the benchmark scripts. `start_local_redis [PREFIX...]` starts a
# redis-server (run under PREFIX, e.g. `taskset -c 0`) on a free 127.0.0.1
# port, without persistence, in a new scratch directory; it sets `port`,
# `work` (the directory, free for the caller's files too) and `server_pid`,
# returns once the server answers PING, and installs an EXIT trap that stops
# the server by pid and removes the directory.
#
# `split_cores` sets `cores`, and `server_pin` / `client_pin` (taskset
# prefixes: the server on core 0, clients on the rest; empty on one core).
split_cores() {
  cores=$(nproc)
  server_pin=() client_pin=()
  if [[ $cores -ge 2 ]]; then
    server_pin=(taskset -c 0)
    client_pin=(taskset -c "1-$((cores - 1))")
  fi
}

start_local_redis() {
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  work=$(mktemp -d /tmp/distlock-redis-XXXXXX)
  server_pid=""
  trap stop_local_redis EXIT
  "$@" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$work" --logfile "$work/redis.log" &
  server_pid=$!
  local _
  for _ in $(seq 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.05
  done
  redis-cli -p "$port" ping >/dev/null
}

stop_local_redis() {
  if [[ -n ${server_pid:-} ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [[ -n ${work:-} ]]; then rm -rf "$work"; fi
}

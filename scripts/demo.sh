#!/usr/bin/env bash
# The main job: the flash-sale demo. 1,000 units, several processes x threads
# buying one unit at a time, once without a lock (oversold) and once under
# distlock (exactly 1,000 sold).
#
#   scripts/demo.sh [demo options...]     e.g. --processes 8 --threads 16 --stock 5000
#
# Uses REDIS_URL when set; otherwise starts a throwaway redis-server on a free
# 127.0.0.1 port (never 6379), with no persistence, and stops it on exit.
# Installs missing Debian packages first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bash scripts/setup.sh
build="$root/build-demo"
log=$(mktemp /tmp/distlock-demo-build-XXXXXX.log)
if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDISTLOCK_BUILD_TESTS=OFF \
         -DDISTLOCK_BUILD_BENCH=OFF -DDISTLOCK_BUILD_TOOLS=OFF &&
       cmake --build "$build" --target distlock-demo -j "$(nproc)"; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "distlock: the demo did not build (full log: $log)" >&2
  exit 1
fi
rm -f "$log"

url="${REDIS_URL:-}"
if [[ -z "$url" ]]; then
  dir=$(mktemp -d /tmp/distlock-demo-XXXXXX)
  server=""
  trap '[[ -n "$server" ]] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
  # A free port: nothing answers on it. Retried if another process takes it
  # before redis-server binds.
  for _ in $(seq 1 20); do
    port=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
    redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$dir" \
      --logfile "$dir/redis.log" --daemonize no &
    server=$!
    for _ in $(seq 1 100); do
      redis-cli -p "$port" ping >/dev/null 2>&1 && break 2
      kill -0 "$server" 2>/dev/null || break
      sleep 0.05
    done
    kill "$server" 2>/dev/null || true
    server=""
  done
  if [[ -z "$server" ]]; then
    echo "distlock: could not start redis-server; log: $dir/redis.log" >&2
    exit 1
  fi
  url="redis://127.0.0.1:$port"
  echo "Started a throwaway redis-server on 127.0.0.1:$port (set REDIS_URL to use your own)."
fi
"$build/examples/distlock-demo" --uri "$url" "$@"

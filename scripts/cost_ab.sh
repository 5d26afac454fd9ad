#!/usr/bin/env bash
# Issue 26's figures in one sitting: two builds of distlock-bench (A = before,
# B = after) and the node peers, alternating on one redis-server (server on
# CPU 0, clients on the rest), so drift of the machine hits every side alike.
#
#   scripts/cost_ab.sh DIR_A DIR_B [ROUNDS] [SECONDS]
#
# DIR_A / DIR_B are build directories holding bench/distlock-bench (Release:
# `cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release && ninja -C build-bench
# distlock-bench`). Per round, in this order: PING; semaphore at 64 threads
# with 8 and 64 permits (A, B, node redis-semaphore); rate limiter at 64
# threads (A, B, rate-limiter-flexible); uncontended Lock at 1 and 64 threads
# (A, B, node redlock); the fair lock contended 2x8 (A, B); redis-benchmark's
# EVALSHA acquire at 64 clients (the one-call-per-operation ceiling). Writes
# bench/results/NAME.jsonl (NAME defaults to cost-ab-<UTC date>) and prints a
# median table (bench/cost_ab_summary.py). Never gates CI.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { echo "usage: scripts/cost_ab.sh DIR_A DIR_B [ROUNDS] [SECONDS]" >&2; exit 2; }
a=$1 b=$2 rounds=${3:-3} secs=${4:-4}
name=${NAME:-cost-ab-$(date -u +%Y-%m-%d)}
for d in "$a" "$b"; do
  [[ -x $d/bench/distlock-bench ]] || { echo "cost_ab: no $d/bench/distlock-bench" >&2; exit 2; }
done
[[ -d bench/peers/node_modules ]] ||
  (cd bench/peers && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
source scripts/lib/local_redis.sh
split_cores
start_local_redis "${server_pin[@]}"
mkdir -p bench/results
out=bench/results/$name.jsonl
: >"$out"
cli() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }
# Runs one client; tags its JSON lines with side and round.
run() {
  local side=$1
  shift
  "${client_pin[@]}" "$@" 2>/dev/null |
    sed -E "/^\{/ s/\}[[:space:]]*\$/, \"side\": \"$side\", \"round\": $round}/" | grep '^{' |
    tee -a "$out" >/dev/null
  cli flushall >/dev/null
}
acq_sha=$(cli script load "$(cat src/script/lua/acquire.lua)")
echo "cost_ab: $rounds rounds of $secs s, server pid $server_pid port $port, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((round = 1; round <= rounds; round++)); do
  echo "cost_ab: round $round" >&2
  for side in A B; do
    dir=$a
    [[ $side == B ]] && dir=$b
    dlb=$dir/bench/distlock-bench
    run $side "$dlb" ping --port "$port" --seconds 2
    for permits in 8 64; do
      run $side "$dlb" semaphore --port "$port" --server-pid "$server_pid" --seconds "$secs" \
        --threads 64 --permits "$permits"
    done
    run $side "$dlb" rate_limiter --port "$port" --server-pid "$server_pid" --seconds "$secs" \
      --threads 64 --rate 1000 --interval-ms 1000
    run $side "$dlb" uncontended --port "$port" --server-pid "$server_pid" --seconds "$secs" \
      --threads 1,64
    run $side "$dlb" contended --port "$port" --seconds "$secs" --procs 2 --threads 8 --fair
  done
  for permits in 8 64; do
    run node node bench/peers/node_sync_bench.js semaphore --port "$port" --seconds "$secs" \
      --concurrency 64 --permits "$permits"
  done
  run node node bench/peers/node_sync_bench.js rate_limiter --port "$port" --seconds "$secs" \
    --concurrency 64 --rate 1000 --interval-ms 1000
  run node node bench/peers/node_bench.js uncontended --lib redlock --port "$port" \
    --seconds "$secs"
  n=400000
  rps=$("${client_pin[@]}" redis-benchmark -h 127.0.0.1 -p "$port" -c 64 -P 1 -n "$n" --csv \
    -r 1000000000 EVALSHA "$acq_sha" 1 'rb:acq:{__rand_int__}' 30000 owner | tail -n 1 |
    awk -F'","' '{print $2}')
  echo "{\"scenario\":\"ceiling\",\"op\":\"evalsha_acquire\",\"clients\":64,\"rps\":$rps,\"side\":\"rb\",\"round\":$round}" |
    tee -a "$out" >/dev/null
  cli flushall >/dev/null
done
python3 bench/cost_ab_summary.py "$out"

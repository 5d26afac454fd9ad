#!/usr/bin/env bash
# Redlock over five masters: distlock's RedlockGroup against node redlock v4,
# uncontended (1 and 16 workers) and contended (2 processes x 8 threads on one
# name), with one build or an A/B of two builds alternating over the SAME
# five masters in one sitting, so drift of the machine hits both sides alike.
#
#   scripts/redlock_ab.sh [--rounds 3] [--name NAME] [--quick] [--no-pin] DIR_A [DIR_B]
#   e.g. scripts/redlock_ab.sh --name i25-after ../before/build-bench build-bench
#
# DIR_A / DIR_B are build directories holding bench/redlock_bench (e.g.
# `cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release &&
# ninja -C build-bench redlock_bench`). Each round runs A then B (B then A in
# even rounds); each run measures node redlock right after distlock, and
# the ratios are taken within the run. Contended node runs: retry 150 +- 50 ms
# (the same interval distribution as distlock's defaults of today, 100 ms +
# up to 100 ms) and redlock v4's own default 200 +- 100 ms; distlock runs with
# its build's RedlockOptions defaults (printed in each line). Contended runs
# twice: --think-ms 0 (a thread asks again right after its release, and
# mostly wins again: barging) and --think-ms 20 (it waits 20 ms outside the
# lock first, so the lock passes to another thread; bench/redlock_contended.cpp
# defines every figure).
#
# Writes bench/results/NAME.jsonl (every run, tagged with round, side and
# build) and NAME.txt (the summary: medians, spreads, ratios), and prints the
# summary. The masters run on free 127.0.0.1 ports on CPU 0, the clients on
# the other CPUs (as scripts/bench.sh; --no-pin: no taskset, as redlock_bench
# alone); they are stopped by pid on exit. Never gates CI.
set -euo pipefail
cd "$(dirname "$0")/.."

command_line="$*"
rounds=3 name="redlock-$(date -u +%Y-%m-%d)" unc_s=3 cont_s=10 pin=1
dirs=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds=${2:?}; shift ;;
    --name) name=${2:?}; shift ;;
    --quick) rounds=1 unc_s=1 cont_s=3 ;;
    --no-pin) pin=0 ;;
    -*) echo "usage: scripts/redlock_ab.sh [--rounds N] [--name NAME] [--quick] [--no-pin] DIR_A [DIR_B]" >&2; exit 2 ;;
    *) dirs+=("$1") ;;
  esac
  shift
done
[[ ${#dirs[@]} -ge 1 && ${#dirs[@]} -le 2 ]] || { echo "redlock_ab: one or two build dirs" >&2; exit 2; }
for d in "${dirs[@]}"; do
  [[ -x $d/bench/redlock_bench ]] || { echo "redlock_ab: no $d/bench/redlock_bench" >&2; exit 2; }
done
[[ -d bench/peers/node_modules ]] ||
  (cd bench/peers && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

source scripts/lib/local_redis.sh
split_cores
[[ $pin -eq 1 ]] || server_pin=() client_pin=()
work=$(mktemp -d /tmp/distlock-redlock-ab-XXXXXX)
pids=()
stop_masters() {
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap stop_masters EXIT
ports=()
for i in 1 2 3 4 5; do
  p=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$work/$p"
  "${server_pin[@]}" redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$work/$p" --logfile "$work/$p/redis.log" </dev/null >/dev/null 2>&1 &
  pids+=($!)
  ports+=("$p")
done
for i in 0 1 2 3 4; do
  # The server on the port must be ours (a stale one would also answer PING).
  for _ in $(seq 200); do
    [[ $(redis-cli -p "${ports[$i]}" info server 2>/dev/null | tr -d '\r' |
      awk -F: '/^process_id:/{print $2}') == "${pids[$i]}" ]] && break
    sleep 0.02
  done
  redis-cli -p "${ports[$i]}" ping >/dev/null
done
port_list=$(IFS=,; echo "${ports[*]}")

mkdir -p bench/results
out="bench/results/$name.jsonl"
: >"$out"
header="redlock_ab: scripts/redlock_ab.sh $command_line; $(date -u +%FT%TZ); masters on $port_list; pinned: $pin"
header+="; load at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$header" >&2
for round in $(seq "$rounds"); do
  sides=(A B)
  [[ ${#dirs[@]} -eq 1 ]] && sides=(A)
  [[ ${#dirs[@]} -eq 2 && $((round % 2)) -eq 0 ]] && sides=(B A)
  for side in "${sides[@]}"; do
    dir=${dirs[0]}
    [[ $side == B ]] && dir=${dirs[1]}
    echo "redlock_ab: round $round side $side ($dir)" >&2
    "${client_pin[@]}" "$dir/bench/redlock_bench" --ports "$port_list" --scenario both \
      --seconds "$unc_s" --concurrency 1,16 --contended-seconds "$cont_s" \
      --processes 2 --threads 8 --think-ms 0,20 --node-retry 150:50,default |
      python3 -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        d = json.loads(line)
        d.update(round=int(sys.argv[1]), side=sys.argv[2], build=sys.argv[3], pinned=sys.argv[4] == "1")
        print(json.dumps(d), flush=True)
' "$round" "$side" "$dir" "$pin" | tee -a "$out"
  done
done
header+="; load at end $(cut -d' ' -f1-3 /proc/loadavg)"
{
  echo "$header"
  python3 bench/redlock_summary.py "$out"
} | tee "bench/results/$name.txt"

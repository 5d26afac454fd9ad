#!/usr/bin/env bash
# A/B of one distlock-bench scenario between two builds, alternating on one
# redis-server, so drift of the machine hits both sides alike.
#
#   scripts/bench_ab.sh DIR_A DIR_B [ROUNDS] -- SCENARIO ARGS...
#   e.g. scripts/bench_ab.sh ../before/build-bench build-bench 4 -- \
#          semaphore --seconds 5 --threads 64 --permits 8
#
# DIR_A / DIR_B are build directories holding bench/distlock-bench (build
# them with scripts/bench.sh, or `ninja -C DIR distlock-bench`). Prints one
# line per run: round, side, pairs/s (or ops/s). Never gates CI. The server
# runs on a free 127.0.0.1 port and is stopped by pid on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 3 ]] || { echo "usage: scripts/bench_ab.sh DIR_A DIR_B [ROUNDS] -- SCENARIO ARGS..." >&2; exit 2; }
a=$1 b=$2
shift 2
rounds=4
if [[ $1 != -- ]]; then rounds=$1; shift; fi
[[ ${1:-} == -- ]] || { echo "bench_ab: missing -- before the scenario" >&2; exit 2; }
shift
for d in "$a" "$b"; do
  [[ -x $d/bench/distlock-bench ]] || { echo "bench_ab: no $d/bench/distlock-bench" >&2; exit 2; }
done
source scripts/lib/local_redis.sh
split_cores
start_local_redis "${server_pin[@]}"
for round in $(seq "$rounds"); do
  for side in A B; do
    dir=$a
    [[ $side == B ]] && dir=$b
    "${client_pin[@]}" "$dir/bench/distlock-bench" "$@" --port "$port" --server-pid "$server_pid" \
      | grep '^{' | python3 -c '
import json, sys
d = json.loads(sys.stdin.readline())
rate = next((d[k] for k in ("pairs_per_s", "ops_per_s", "acquisitions_per_s") if k in d), None)
print(f"round={sys.argv[1]} side={sys.argv[2]} rate={round(rate) if rate is not None else None}")
' "$round" "$side"
  done
done

#!/usr/bin/env bash
# The hot-path cost of metrics (issue 14): uncontended lock/unlock pairs
# through one Client at 64 threads, with metrics recorded (build/) and with
# them compiled out (build-nometrics/, -DDISTLOCK_METRICS=OFF), in one run
# against one redis-server it starts on a free 127.0.0.1 port. The two builds
# alternate (on, off, off, on, ...) for ROUNDS rounds so drift hits both; it
# prints each run and the medians, as ratios off/on.
#
#   scripts/metrics_cost.sh          (ROUNDS=6 SECONDS_PER_RUN=5 THREADS=64)
#
# pairs/s at 64 threads is bounded by the server's core; the client's CPU per
# pair is where a hot-path cost shows. Never part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-6} seconds=${SECONDS_PER_RUN:-5} threads=${THREADS:-64}
bash scripts/setup.sh

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target distlock-bench
cmake -S . -B build-nometrics -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISTLOCK_METRICS=OFF \
  -DDISTLOCK_BUILD_TESTS=OFF -DDISTLOCK_BUILD_EXAMPLES=OFF -DDISTLOCK_BUILD_TOOLS=OFF >/dev/null
cmake --build build-nometrics --target distlock-bench

source scripts/lib/local_redis.sh
split_cores
start_local_redis "${server_pin[@]}"

run() {  # build-dir label
  "${client_pin[@]}" "$1/bench/distlock-bench" uncontended --port "$port" --seconds "$seconds" \
    --threads "$threads" --server-pid "$server_pid" 2>/dev/null |
    sed "s/^{/{\"build\":\"$2\",/" >>"$work/runs.jsonl"
}
for ((r = 0; r < rounds; r++)); do
  if ((r % 2 == 0)); then run build on; run build-nometrics off; else run build-nometrics off; run build on; fi
done
python3 - "$work/runs.jsonl" "$threads" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
by = {b: [r for r in runs if r["build"] == b] for b in ("on", "off")}
print(f"uncontended pairs, {sys.argv[2]} threads, one Client, {len(by['on'])} runs per build")
print("build  pairs/s     client us/pair  server us/pair")
for r in runs:
    print(f"{r['build']:<6} {r['pairs_per_s']:>10.0f}  {r['client_cpu_us_per_pair']:>14.2f}  {r['server_cpu_us_per_pair']:>14.2f}")
med = {b: {k: statistics.median(r[k] for r in by[b]) for k in ("pairs_per_s", "client_cpu_us_per_pair")} for b in by}
print(f"median pairs/s: on {med['on']['pairs_per_s']:.0f}, off {med['off']['pairs_per_s']:.0f}, "
      f"on/off = {med['on']['pairs_per_s'] / med['off']['pairs_per_s']:.3f}")
print(f"median client CPU per pair: on {med['on']['client_cpu_us_per_pair']:.2f} us, "
      f"off {med['off']['client_cpu_us_per_pair']:.2f} us, on/off = "
      f"{med['on']['client_cpu_us_per_pair'] / med['off']['client_cpu_us_per_pair']:.3f}")
PY

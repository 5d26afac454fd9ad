#!/usr/bin/env bash
# Measures distlock against the server's own limit and against peer lock
# libraries, side by side, in one run against one redis-server it starts.
#
#   scripts/bench.sh            full run (about 10 minutes)
#   scripts/bench.sh --quick    short run (under 3 minutes once built)
#   ... --name NAME             write bench/results/NAME.* instead
#
# Writes bench/results/<UTC-date>[-quick].json (every figure and the machine
# facts), a markdown table (.md) and two PNG charts, and prints the table.
# Absolute numbers drift between runs on a shared machine; every figure is
# also given as a ratio to a reference measured in the same run.
#
# Traffic goes only to the redis-server started here on a free 127.0.0.1
# port; it is stopped by pid on exit. Benchmarks never gate CI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

quick=0 name=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --name) name=${2:?--name needs a value}; shift ;;
    *) echo "usage: scripts/bench.sh [--quick] [--name NAME]" >&2; exit 2 ;;
  esac
  shift
done
command_text="scripts/bench.sh$([[ $quick -eq 1 ]] && echo " --quick" || true)$([[ -n $name ]] && echo " --name $name" || true)"

if [[ $quick -eq 1 ]]; then
  rounds=1 rb_s=1 unc_s=1 cont_s=3 wd_s=4 ct_s=1 ct_threads=1,64 sync_s=3
else
  rounds=3 rb_s=2 unc_s=3 cont_s=10 wd_s=15 ct_s=3 ct_threads=1,16,64 sync_s=10
fi
py=/usr/bin/python3  # Debian's python, where python3-redis is installed

# --- Install -----------------------------------------------------------------
have_all() {
  local c
  for c in redis-server redis-benchmark redis-cli gnuplot node npm taskset cmake ninja; do
    command -v "$c" >/dev/null || return 1
  done
  $py -c 'import redis' 2>/dev/null
}
if ! have_all; then
  if ! bash scripts/setup.sh --bench; then
    # A nodejs package that bundles npm (NodeSource's) conflicts with Debian's
    # npm package, so the list fails there although node and npm both work.
    if command -v node >/dev/null && command -v npm >/dev/null && [[ $(id -u) -eq 0 ]]; then
      bash scripts/setup.sh
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        gnuplot-nox python3-redis util-linux
    else
      exit 1
    fi
  fi
fi
(cd bench/peers && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

# --- Build -------------------------------------------------------------------
build="$root/build-bench"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" -j "$(nproc)" distlock-bench client_throughput >/dev/null
dlb="$build/bench/distlock-bench"
ct="$build/bench/client_throughput"

# --- Server ------------------------------------------------------------------
source scripts/lib/local_redis.sh
split_cores
start_local_redis "${server_pin[@]}"
cli() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
date_utc=$(date -u +%Y-%m-%d)
[[ -n $name ]] || name=$date_utc$([[ $quick -eq 1 ]] && echo -quick || true)
mkdir -p bench/results
raw="bench/results/$name.jsonl.tmp"
: >"$raw"
log() { echo "bench: $*" >&2; }
round=0
# Runs a client on the client CPUs; its JSON lines are tagged with the round.
run() {
  "${client_pin[@]}" "$@" | sed -E "/^\{/ s/\}[[:space:]]*\$/, \"round\": $round}/" | tee -a "$raw"
}

# --- 1. The server's limit -----------------------------------------------------
# The server's CPU seconds so far and where they come from: its main thread
# (which runs every command) when INFO cpu reports it, else the whole process.
server_cpu() {
  cli info cpu | tr -d '\r' | awk -F: '
    /^used_cpu_(sys|user)_main_thread:/ { m += $2; n++ }
    /^used_cpu_(sys|user):/ { t += $2 }
    END { if (n == 2) printf "%.6f main_thread\n", m; else printf "%.6f process\n", t }'
}
# Nanoseconds the server's main thread has waited, runnable, for a CPU.
server_wait() { cut -d' ' -f2 "/proc/$server_pid/schedstat"; }
# redis-benchmark, sized to run about rb_s seconds after a short calibration.
# Prints one JSON line, with the server's CPU over the run: µs per request,
# the ceiling 1e6 / (µs per request), the server core's utilization, and the
# share of the run its main thread waited for its core (other work on it);
# those two over the wall time of the redis-benchmark process, start included.
rb() {
  local label=$1 clients=$2 pipeline=$3 n=$4
  shift 4
  local out rps cpu0 cpu1 src w0 w1 t0 t1
  read -r cpu0 src < <(server_cpu)
  w0=$(server_wait)
  t0=$(date +%s%N)
  out=$("${client_pin[@]}" redis-benchmark -h 127.0.0.1 -p "$port" -c "$clients" -P "$pipeline" \
    -n "$n" --csv "$@" | tail -n 1)
  t1=$(date +%s%N)
  read -r cpu1 src < <(server_cpu)
  w1=$(server_wait)
  rps=$(echo "$out" | awk -F'","' '{print $2}')
  echo "$out" | awk -F'","' -v l="$label" -v c="$clients" -v p="$pipeline" -v n="$n" -v r="$round" \
    -v cpu0="$cpu0" -v cpu1="$cpu1" -v src="$src" -v w0="$w0" -v w1="$w1" -v t0="$t0" -v t1="$t1" \
    '{cpu = cpu1 - cpu0; us = 1e6 * cpu / n; ceiling = 0; if (us > 0) ceiling = 1e6 / us
      wall = (t1 - t0) / 1e9; busy = 0; wait = 0
      if (wall > 0) { busy = cpu / wall; wait = (w1 - w0) / 1e9 / wall }
      printf "{\"scenario\":\"server_limit\",\"op\":\"%s\",\"clients\":%d,\"pipeline\":%d,\"requests\":%d,\"rps\":%s,\"p50_ms\":%s,\"p99_ms\":%s,\"server_cpu_source\":\"%s\",\"server_main_cpu_s\":%.6f,\"server_cpu_us_per_request\":%.4f,\"server_ceiling_rps\":%.1f,\"server_core_utilization\":%.4f,\"server_runqueue_wait_share\":%.4f,\"round\":%d}\n", l, c, p, n, $2, $5, $7, src, cpu, us, ceiling, busy, wait, r}'
  RB_RPS=${rps%.*}
}
rb_sized() {  # label clients pipeline args...: calibrate, then the real run
  local label=$1 clients=$2 pipeline=$3
  shift 3
  local cal=$((200 * clients * pipeline))
  cal=$((cal < 1000 ? 1000 : cal > 50000 ? 50000 : cal))
  rb "$label" "$clients" "$pipeline" "$cal" "$@" >/dev/null
  rb "$label" "$clients" "$pipeline" $((RB_RPS * ${rb_s%.*} + 1000)) "$@" | tee -a "$raw"
}
owner="bench-owner:1"
server_limits() {
  log "round $round: server limits (redis-benchmark)"
  local acq_sha rel_sha p n keys lo hi before after
  acq_sha=$(cli script load "$(cat src/script/lua/acquire.lua)")
  rel_sha=$(cli script load "$(cat src/script/lua/release.lua)")
  # PING_MBULK only (-t ping would also run PING_INLINE first, inside the
  # server CPU window); the figure reported was always PING_MBULK's.
  rb_sized ping 1 1 -t ping_mbulk
  rb_sized ping 64 1 -t ping_mbulk
  rb_sized ping 64 16 -t ping_mbulk
  for p in 1 16; do
    # Acquire on fresh random names: the EXISTS, HINCRBY, PEXPIRE path.
    rb_sized acquire 64 $p -r 1000000000 EVALSHA "$acq_sha" 1 'rb:acq:{__rand_int__}' 30000 "$owner"
    # Release on held names: prepopulate 4x as many holds as requests, so most
    # releases take the real HGET, DEL, PUBLISH path (the rest find no hold).
    n=$((RB_RPS * ${rb_s%.*} + 1000))
    keys=$((n * 4))
    for ((lo = 0; lo < keys; lo += 200000)); do
      hi=$((lo + 200000 < keys ? lo + 200000 : keys))
      cli eval "for i=tonumber(ARGV[1]),tonumber(ARGV[2])-1 do redis.call('hset', string.format('rb:rel:{%012d}', i), ARGV[3], 1) end return 1" \
        0 "$lo" "$hi" "$owner" >/dev/null
    done
    before=$(cli info commandstats | awk -F'[:=,]' '/^cmdstat_del:/{print $3}')
    rb release 64 $p "$n" -r "$keys" EVALSHA "$rel_sha" 1 'rb:rel:{__rand_int__}' 30000 "$owner" 1 \
      'redisson_lock__channel:{rb:rel:__rand_int__}' 0 >"$work/rel.json"
    after=$(cli info commandstats | awk -F'[:=,]' '/^cmdstat_del:/{print $3}')
    $py -c 'import json,sys; d=json.load(open(sys.argv[1])); d["full_path_share"]=(int(sys.argv[3])-int(sys.argv[2] or 0))/d["requests"]; print(json.dumps(d))' \
      "$work/rel.json" "${before:-0}" "${after:-0}" | tee -a "$raw"
    cli flushall >/dev/null
  done
}

# --- 2. Uncontended, every library, in rounds ----------------------------------
# Other work on the machine comes and goes; running the libraries one after
# the other in each round and taking medians over rounds keeps the ratios fair.
uncontended_round() {
  log "round $round: distlock"
  run "$dlb" uncontended --port "$port" --server-pid "$server_pid" --seconds "$unc_s" \
    --threads 1,16,64
  run "$dlb" uncontended --port "$port" --server-pid "$server_pid" --seconds "$unc_s" \
    --threads 1,16,64 --fenced
  # 256 coroutines on one application thread, then on the Client's own I/O
  # thread.
  for ex in app-thread client-io-thread; do
    log "round $round: distlock async ($ex)"
    run "$dlb" async --port "$port" --server-pid "$server_pid" --seconds "$unc_s" \
      --coroutines 256 --executor "$ex" ||
      log "async scenario failed ($ex)"
  done
  for lib in redlock semaphore; do
    log "round $round: node $lib"
    run node bench/peers/node_bench.js uncontended --lib "$lib" --port "$port" --seconds "$unc_s"
  done
  log "round $round: python redis Lock"
  run $py bench/peers/python_bench.py uncontended --port "$port" --seconds "$unc_s"
  cli flushall >/dev/null
}
for ((round = 1; round <= rounds; round++)); do
  server_limits
  uncontended_round
done
round=0

# --- 3. PING, contended, watchdog, one Client -----------------------------------
# The same Client's PING round trip, just before the contended runs: their
# handoff latency is a few round trips and is read against it.
log "PING round trip of one Client"
run "$dlb" ping --port "$port" --seconds "$unc_s"
log "contended: distlock"
run "$dlb" contended --port "$port" --seconds "$cont_s" --procs 2 --threads 8
log "contended: distlock fair lock"
run "$dlb" contended --port "$port" --seconds "$cont_s" --procs 2 --threads 8 --fair
for lib in redlock semaphore; do
  log "contended: node $lib"
  meta=$("${client_pin[@]}" node bench/peers/node_bench.js contended --lib "$lib" --port "$port" \
    --seconds "$cont_s" --procs 2 --workers 8 --records "$work/$lib.rec")
  $py bench/peers/contended_stats.py --records "$work/$lib.rec" --threads 16 --meta "$meta" |
    tee -a "$raw"
done
log "contended: python redis Lock"
run $py bench/peers/python_bench.py contended --port "$port" --seconds "$cont_s" --procs 2 \
  --workers 8 --records "$work/python.rec"
log "watchdog: distlock, node redis-semaphore"
run "$dlb" watchdog --port "$port" --seconds "$wd_s" --leases 10000 --watchdog-ms 3000
run node bench/peers/node_bench.js watchdog --lib semaphore --port "$port" --seconds "$wd_s" \
  --leases 10000 --lease-ms 3000
cli flushall >/dev/null

# --- 4. Synchronizers (issue 12), one Client / one node connection each ------
# References for this section: redis-benchmark on the synchronizers' own
# scripts. The semaphore's full paths (take 1, give back 1) for one holder
# with plenty of permits on both sides; the rate limiter on one limiter of
# the benchmarked rate (mostly refusals, as in the scenario).
synchronizer_limits() {
  local sa sr rl p
  local sem=rb:sem holders='distlock_sem_holders:{rb:sem}' counts='distlock_sem_counts:{rb:sem}'
  local v1='distlock_semaphore_leases:{rb:sem} distlock_semaphore_holders:{rb:sem}'
  local chan='redisson_sc:{rb:sem}'
  sa=$(cli script load "$(cat src/script/lua/semaphore_acquire.lua)")
  sr=$(cli script load "$(cat src/script/lua/semaphore_release.lua)")
  rl=$(cli script load "$(cat src/script/lua/rate_limiter_acquire.lua)")
  log "synchronizer limits (redis-benchmark)"
  for p in 1 16; do
    cli set "$sem" 1000000000000 >/dev/null
    cli hset "$counts" h 1000000000000 >/dev/null
    cli zadd "$holders" 99999999999999 h >/dev/null
    # shellcheck disable=SC2086 # $v1: the earlier layout's two keys
    rb_sized semaphore_acquire 64 $p EVALSHA "$sa" 5 "$sem" "$holders" "$counts" $v1 h 1 30000 \
      "$chan"
    rb_sized semaphore_release 64 $p EVALSHA "$sr" 3 "$sem" "$holders" "$counts" h 1 0 "$chan"
    cli hset rb:rl rate 1000 interval 1000 debt 0 ts 0 >/dev/null
    rb_sized rate_limiter 64 $p EVALSHA "$rl" 1 rb:rl 1
    cli flushall >/dev/null
  done
}
synchronizer_limits
for permits in 8 64; do
  log "semaphore, $permits permits: distlock, distlock Permit handles, node redis-semaphore"
  run "$dlb" semaphore --port "$port" --server-pid "$server_pid" --seconds "$sync_s" \
    --threads 64 --permits "$permits"
  run "$dlb" semaphore --port "$port" --server-pid "$server_pid" --seconds "$sync_s" \
    --threads 64 --permits "$permits" --permit-handles
  run node bench/peers/node_sync_bench.js semaphore --port "$port" --seconds "$sync_s" \
    --concurrency 64 --permits "$permits"
done
log "rate limiter: distlock, node rate-limiter-flexible"
run "$dlb" rate_limiter --port "$port" --server-pid "$server_pid" --seconds "$sync_s" \
  --threads 64 --rate 1000 --interval-ms 1000
run node bench/peers/node_sync_bench.js rate_limiter --port "$port" --seconds "$sync_s" \
  --concurrency 64 --rate 1000 --interval-ms 1000
log "watchdog, 10,000 held permits: distlock Permits, node redis-semaphore Semaphore"
run "$dlb" watchdog_permits --port "$port" --seconds "$wd_s" --holdings 10000 --watchdog-ms 3000
run node bench/peers/node_sync_bench.js watchdog_permits --port "$port" --seconds "$wd_s" \
  --holdings 10000 --lease-ms 3000
cli flushall >/dev/null

# Each case in $rounds rounds, distlock and its redis-benchmark references back
# to back in a rotating order; the report takes the medians.
log "client_throughput ($rounds rounds)"
"${client_pin[@]}" "$ct" --port "$port" --seconds "$ct_s" --threads "$ct_threads" \
  --rounds "$rounds" 2>/dev/null | tee -a "$raw"

# --- Report ------------------------------------------------------------------
facts=$(
  $py - "$port" "$cores" "$quick" "$load_start" <<'EOF'
import json, platform, subprocess, sys
def git(*args):
    r = subprocess.run(["git", *args], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "?"
commit = git("rev-parse", "--short", "HEAD")
if git("status", "--porcelain", "--untracked-files=no"):
    commit += " (with uncommitted changes)"
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
redis_v = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.strip()
node_v = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
import redis
print(json.dumps({"cpu_model": cpu, "cores": int(sys.argv[2]), "kernel": platform.release(),
                  "redis_server": redis_v, "node": node_v, "python_redis": redis.__version__,
                  "quick": sys.argv[3] == "1", "commit": commit,
                  "load_average_at_start": sys.argv[4],
                  "load_average_at_end": " ".join(open("/proc/loadavg").read().split()[:3]),
                  "pinning": "server on CPU 0, clients on CPUs 1-%d" % (int(sys.argv[2]) - 1)
                             if int(sys.argv[2]) >= 2 else "none (1 core)"}))
EOF
)
$py bench/report.py --raw "$raw" --facts "$facts" --out "bench/results/$name" \
  --command "$command_text"
rm -f "$raw"
log "wrote bench/results/$name.json, .md, -throughput.png, -handoff.png"

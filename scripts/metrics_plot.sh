#!/usr/bin/env bash
# Draws the wait and hold histograms of docs/monitoring.md from a real run:
# starts a redis-server on a free 127.0.0.1 port, runs bench/metrics_workload
# (a contended lock workload) against it, keeps its Prometheus scrape and
# plots the per-bucket counts of distlock_acquire_wait_seconds and
# distlock_hold_seconds (primitive="lock") with gnuplot, Grafana-style.
#
#   scripts/metrics_plot.sh [BUILD_DIR] [SECONDS]
#
# Writes bench/results/<UTC-date>-metrics.prom and docs/monitoring-histograms.png.
# The server is stopped by pid on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
seconds=${2:-10}
workload=$build/bench/metrics_workload
[[ -x $workload ]] || { echo "build $workload first (cmake --build $build --target metrics_workload)" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "gnuplot is missing: scripts/setup.sh --bench" >&2; exit 1; }

source scripts/lib/local_redis.sh
start_local_redis

prom=bench/results/$(date -u +%F)-metrics.prom
"$workload" --port "$port" --seconds "$seconds" --threads 16 --names 4 --hold-max-ms 20 >"$prom"
echo "scrape: $prom"

# Cumulative buckets -> one row per bucket: index, upper bound, count in it.
buckets() {
  awk -v family="$1" '
    index($0, family "_bucket{primitive=\"lock\"") == 1 {
      match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5)
      n = $NF; printf "%d \"%s\" %d\n", i++, le, n - prev; prev = n
    }' "$prom"
}
buckets distlock_acquire_wait_seconds >"$work/wait.dat"
buckets distlock_hold_seconds >"$work/hold.dat"

out=docs/monitoring-histograms.png
gnuplot <<GNUPLOT
set terminal pngcairo size 1200,520 background rgb '#181b1f' font 'Sans,10'
set output '$out'
set multiplot layout 1,2 title "distlock: $seconds s contended lock workload (16 threads, 4 locks, holds 0-20 ms)" textcolor rgb '#d8d9da'
set style fill solid 0.85 border -1
set boxwidth 0.8
set border lc rgb '#6e7079'
set grid ytics lc rgb '#2f3238'
set xtics rotate by -45 textcolor rgb '#d8d9da' font ',8'
set ytics textcolor rgb '#d8d9da'
set xlabel 'bucket upper bound (le, seconds)' textcolor rgb '#d8d9da'
set ylabel 'acquires' textcolor rgb '#d8d9da'
set key off
set title 'distlock_acquire_wait_seconds{primitive="lock"}' noenhanced textcolor rgb '#d8d9da'
plot '$work/wait.dat' using 1:3:xtic(2) with boxes lc rgb '#73bf69'
set ylabel 'holds' textcolor rgb '#d8d9da'
set title 'distlock_hold_seconds{primitive="lock"}' noenhanced textcolor rgb '#d8d9da'
plot '$work/hold.dat' using 1:3:xtic(2) with boxes lc rgb '#5794f2'
unset multiplot
GNUPLOT
echo "plot: $out"

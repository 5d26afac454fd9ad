#!/usr/bin/env python3
"""Turns the JSON lines of one scripts/bench.sh run into <out>.json, a
markdown table <out>.md and two gnuplot charts (<out>-throughput.png,
<out>-handoff.png). Every figure is given with its ratio to the server's
limit and to the best peer measured in the same run.

    report.py --raw LINES --facts JSON --out PREFIX --command TEXT
"""
import argparse
import json
import os
import subprocess
import sys

PEERS = ["redlock", "semaphore", "python"]
LIBS = ["distlock", "distlock-fenced"] + PEERS
NAMES = {
    "distlock": "distlock",
    "distlock-fenced": "distlock fenced",
    "redlock": "node redlock 4",
    "semaphore": "node redis-semaphore Mutex",
    "python": "python redis Lock",
}
THREADS = [1, 16, 64]


def fmt(v, digits=0):
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if abs(v) >= 1000 and digits == 0:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def ratio(a, b):
    if a is None or b in (None, 0):
        return "—"
    return f"{a / b:.2f}×"


class Run:
    def __init__(self, lines):
        self.lines = lines

    def find(self, **kw):
        for line in self.lines:
            if all(line.get(k) == v for k, v in kw.items()):
                return line
        return None

    def get(self, field, **kw):
        line = self.find(**kw)
        return None if line is None else line.get(field)

    def limit(self, op, clients, pipeline):
        return self.get("rps", scenario="server_limit", op=op, clients=clients, pipeline=pipeline)

    def pair_limit(self, pipeline):
        a, r = self.limit("acquire", 64, pipeline), self.limit("release", 64, pipeline)
        return 1 / (1 / a + 1 / r) if a and r else None

    def uncontended(self, lib, threads, field="pairs_per_s"):
        return self.get(field, scenario="uncontended", lib=lib, threads=threads)

    def best_peer(self, pick, higher_is_better=True):
        vals = [(pick(p), p) for p in PEERS if pick(p) is not None]
        if not vals:
            return None, None
        return (max if higher_is_better else min)(vals)


def goals_table(run):
    rows = ["| goal | measured | target | met |", "|---|---|---|---|"]
    u64 = run.uncontended("distlock", 64)
    best, who = run.best_peer(lambda p: run.uncontended(p, 64))
    limit = run.pair_limit(16)
    p50 = run.uncontended("distlock", 1, "acquire_p50_us")
    ping = run.uncontended("distlock", 1, "ping_p50_us")
    rt = run.uncontended("distlock", 64, "round_trips_per_pair")
    c = run.find(scenario="contended", lib="distlock") or {}
    w = run.find(scenario="watchdog", lib="distlock") or {}

    def row(goal, measured, target, met):
        rows.append(f"| {goal} | {measured} | {target} | {'yes' if met else '**no**'} |")

    if u64 and best:
        row("uncontended 64-thread pairs/s vs fastest peer", f"{u64 / best:.2f}× ({NAMES[who]})",
            "≥ 2×", u64 >= 2 * best)
    if u64 and limit:
        row("uncontended 64-thread pairs/s vs server limit (our 2 scripts, -P 16)",
            f"{u64 / limit:.2f}×", "≥ 0.8×", u64 >= 0.8 * limit)
    if p50 and ping:
        row("acquire p50 at 1 thread vs same Client's PING p50", f"{p50 / ping:.2f}×", "≤ 1.2×",
            p50 <= 1.2 * ping)
    if rt is not None:
        row("round trips per uncontended pair", f"{rt:.3f}", "2.00", abs(rt - 2) < 0.005)
    if c:
        row("contended handoff p99", f"{c['handoff_p99_us'] / 1000:.2f} ms", "≤ 2 ms",
            c["handoff_p99_us"] <= 2000)
        row("contended worst wait", f"{c['wait_max_us'] / 1000:.1f} ms", "≤ 100 ms",
            c["wait_max_us"] <= 100000)
        row("contended counter exact", f"{c['counter_final']} / {c['counter_expected']}",
            "equal", c.get("counter_exact"))
    if w:
        row("watchdog leases renewed per script call", f"{w['leases_per_call']:.0f}", "≥ 100",
            w["leases_per_call"] >= 100)
    return rows


def uncontended_table(run):
    rows = ["| library | threads | pairs/s | × server limit -P 16 | × server limit no pipeline "
            "| × best peer | acquire p50 µs | p99 µs | p99.9 µs | round trips/pair |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for lib in LIBS:
        for t in THREADS:
            line = run.find(scenario="uncontended", lib=lib, threads=t)
            if not line:
                continue
            best, who = run.best_peer(lambda p: run.uncontended(p, t))
            v = line["pairs_per_s"]
            rows.append(
                f"| {NAMES[lib]} | {t} | {fmt(v)} | {ratio(v, run.pair_limit(16))} | "
                f"{ratio(v, run.pair_limit(1))} | {ratio(v, best)} | {fmt(line['acquire_p50_us'])} | "
                f"{fmt(line['acquire_p99_us'])} | {fmt(line['acquire_p999_us'])} | "
                f"{fmt(line['round_trips_per_pair'], 3)} |")
    return rows


def contended_table(run):
    rows = ["| library | acquisitions/s | × best peer | handoff p50 µs | p99 µs | max µs "
            "| worst wait ms | barging share | Jain fairness | counter exact |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    best, _ = run.best_peer(lambda p: run.get("acquisitions_per_s", scenario="contended", lib=p))
    for lib in ["distlock"] + PEERS:
        c = run.find(scenario="contended", lib=lib)
        if not c:
            continue
        rows.append(
            f"| {NAMES[lib]} | {fmt(c['acquisitions_per_s'])} | {ratio(c['acquisitions_per_s'], best)} | "
            f"{fmt(c['handoff_p50_us'])} | {fmt(c['handoff_p99_us'])} | {fmt(c['handoff_max_us'])} | "
            f"{fmt(c['wait_max_us'] / 1000, 1)} | {fmt(c['barging_share'], 2)} | "
            f"{fmt(c['jain_fairness'], 3)} | {fmt(c.get('counter_exact'))} |")
    return rows


def watchdog_table(run):
    rows = ["| library | leases | script calls/s | leases renewed per call | client CPU % "
            "| leases valid at end |", "|---|---|---|---|---|---|"]
    for lib in ["distlock", "semaphore"]:
        w = run.find(scenario="watchdog", lib=lib)
        if w:
            rows.append(f"| {NAMES[lib]} | {w['leases']} | {fmt(w['script_calls_per_s'], 1)} | "
                        f"{fmt(w['leases_per_call'], 1)} | {fmt(w['client_cpu_pct'], 2)} | "
                        f"{w['leases_valid_at_end']} |")
    return rows


def limits_table(run):
    rows = ["| redis-benchmark | clients | pipeline | requests/s | p50 ms |", "|---|---|---|---|---|"]
    for line in run.lines:
        if line.get("scenario") == "server_limit":
            extra = (f" (real release path: {line['full_path_share']:.0%})"
                     if "full_path_share" in line else "")
            rows.append(f"| {line['op']}{extra} | {line['clients']} | {line['pipeline']} | "
                        f"{fmt(line['rps'])} | {line['p50_ms']} |")
    for p in (1, 16):
        rows.append(f"| acquire+release pair (derived) | 64 | {p} | {fmt(run.pair_limit(p))} | |")
    return rows


def client_table(run):
    rows = ["| op | threads | one distlock Client ops/s | redis-benchmark same -c | ratio "
            "| redis-benchmark -P 16 | ratio |", "|---|---|---|---|---|---|---|"]
    for line in run.lines:
        if line.get("bench") == "client_throughput":
            rows.append(f"| {line['op']} | {line['threads']} | {fmt(line['distlock_ops_per_s'])} | "
                        f"{fmt(line['redis_benchmark_ops_per_s'])} | "
                        f"{line['ratio_to_redis_benchmark']:.2f}× | "
                        f"{fmt(line['redis_benchmark_p16_ops_per_s'])} | "
                        f"{line['ratio_to_redis_benchmark_p16']:.2f}× |")
    return rows


def charts(run, out):
    dat = out + ".dat.tmp"
    with open(dat, "w") as f:
        f.write("# threads " + " ".join(LIBS) + "\n")
        for t in THREADS:
            f.write(f"{t} " + " ".join(str(run.uncontended(l, t) or "NaN") for l in LIBS) + "\n")
        f.write("\n\n# library p50 p99 p99.9 max (ms)\n")
        for lib in ["distlock"] + PEERS:
            c = run.find(scenario="contended", lib=lib)
            if c:
                f.write(f"\"{NAMES[lib]}\" " + " ".join(
                    str(c[f"handoff_{k}_us"] / 1000) for k in ("p50", "p99", "p999", "max")) + "\n")
    limit16, limit1 = run.pair_limit(16) or 0, run.pair_limit(1) or 0
    plot_lines = ", ".join(
        f"'{dat}' index 0 using 1:{i + 2} with linespoints lw 2 pt 7 title '{NAMES[l]}'"
        for i, l in enumerate(LIBS))
    script = f"""
set terminal pngcairo size 960,600 font 'sans,11'
set output '{out}-throughput.png'
set title 'Uncontended lock+unlock pairs/s vs threads (one client, one Redis)'
set xlabel 'threads (node: concurrent async loops)'
set ylabel 'pairs per second'
set logscale x 2
set xtics (1, 16, 64)
set xrange [0.8:80]
set yrange [0:*]
set grid
set key outside right top
plot {plot_lines}, \\
  {limit16} with lines dt 2 lc rgb 'black' title 'server limit, -P 16', \\
  {limit1} with lines dt 3 lc rgb 'gray40' title 'server limit, no pipeline'
reset
set terminal pngcairo size 960,600 font 'sans,11'
set output '{out}-handoff.png'
set title 'Contended handoff latency, unlock -> next lock() returns (2 processes x 8 threads)'
set ylabel 'milliseconds (log scale)'
set logscale y
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key outside right top
set xtics nomirror
plot '{dat}' index 1 using 2:xtic(1) title 'p50', '' index 1 using 3 title 'p99', \\
  '' index 1 using 4 title 'p99.9', '' index 1 using 5 title 'max'
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.remove(dat)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--raw", required=True)
    p.add_argument("--facts", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--command", required=True)
    a = p.parse_args()
    lines = []
    with open(a.raw) as f:
        for text in f:
            text = text.strip()
            if text.startswith("{"):
                lines.append(json.loads(text))
    run = Run(lines)
    facts = json.loads(a.facts)
    with open(a.out + ".json", "w") as f:
        json.dump({"command": a.command, "machine": facts, "results": lines}, f, indent=1)
    base = os.path.basename(a.out)
    md = [f"# distlock benchmark: {base}", "",
          f"Command: `{a.command}`. Machine: {facts['cpu_model']}, {facts['cores']} cores, "
          f"{facts['redis_server']}; {facts['pinning']}.", "",
          "## Goals (issue 4)", ""] + goals_table(run) + [
          "", "## Uncontended (distinct name per thread, one client)", ""] + uncontended_table(run) + [
          "", "## Contended (2 processes x 8 threads, one name)", ""] + contended_table(run) + [
          "", "## Watchdog (10,000 leases, 3 s lease)", ""] + watchdog_table(run) + [
          "", "## Server limit (same server, same run)", ""] + limits_table(run) + [
          "", "## One Client vs redis-benchmark (issue 2)", ""] + client_table(run) + [
          "", f"![throughput]({base}-throughput.png)", "", f"![handoff]({base}-handoff.png)", ""]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(md))
    charts(run, a.out)
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Turns the JSON lines of one scripts/bench.sh run into <out>.json, a
markdown table <out>.md and two gnuplot charts (<out>-throughput.png,
<out>-handoff.png). Every figure is given with its ratio to references
measured in the same run: redis-benchmark with -P 16 (called "server limit",
though distlock can pass it), redis-benchmark without pipelining (what its
one thread on the client core drives, not a server limit), the best peer, and
the server's CPU ceiling: 1e6 / (server main-thread CPU µs per pair), with the
server core's utilization (CPU seconds / wall seconds) during each run.

    report.py --raw LINES --facts JSON --out PREFIX --command TEXT
"""
import argparse
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in bench/ from the import below
import report_sync  # noqa: E402
from report_format import fmt, goal_met, pair_rate, pct, ratio, times  # noqa: E402

PEERS = ["redlock", "semaphore", "python"]
LIBS = ["distlock", "distlock-fenced"] + PEERS
SHORT = {
    "distlock": "distlock",
    "distlock-fenced": "distlock fenced",
    "redlock": "redlock",
    "semaphore": "redis-semaphore",
    "python": "redis-py Lock",
}
NAMES = {
    "distlock": "distlock",
    "distlock-fenced": "distlock fenced",
    "distlock-fair": "distlock fair lock",
    "redlock": "node redlock 4",
    "semaphore": "node redis-semaphore Mutex",
    "python": "python redis Lock",
}
THREADS = [1, 16, 64]


KEY_FIELDS = ("bench", "scenario", "lib", "threads", "op", "clients", "pipeline", "executor",
              "permits")


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def merge_rounds(lines):
    """One line per case: numeric fields are the median over rounds."""
    groups = {}
    for line in lines:
        groups.setdefault(tuple(line.get(k) for k in KEY_FIELDS), []).append(line)
    merged = []
    for group in groups.values():
        out = dict(group[0])
        for k, v in group[0].items():
            if k in KEY_FIELDS or isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            vals = [g[k] for g in group if isinstance(g.get(k), (int, float))]
            m = median(vals)
            out[k] = round(m) if all(isinstance(x, int) for x in vals) else m
        out["rounds"] = len(group)
        if "pairs_per_s" in out:
            out["pairs_per_s_rounds"] = [g["pairs_per_s"] for g in group]
        if "rps" in out:
            out["rps_rounds"] = [g["rps"] for g in group]
        out.pop("round", None)
        merged.append(out)
    return merged


class Run:
    def __init__(self, lines):
        # Lines without a round tag: the k-th run of a case belongs to round k.
        seen = {}
        for line in lines:
            if line.get("scenario") == "uncontended" and not line.get("round"):
                key = (line.get("lib"), line.get("threads"))
                seen[key] = seen.get(key, 0) + 1
                line["round"] = seen[key]
        self.raw = lines
        self.lines = merge_rounds(lines)

    def round_ref(self, r, against):
        """The reference pair rate of round r: "limit16" (server pair limit from
        redis-benchmark -P 16 requests/s), "limit1" (the same without pipelining:
        its client core's limit), "cpu16" (the server's CPU ceiling at -P 16:
        1e6 / (acquire + release server CPU µs per request)) or "peer" (best
        peer's uncontended pairs/s at the threads given to round_ratio)."""
        def limit(op, pipeline, field):
            for l in self.raw:
                if (l.get("scenario"), l.get("op"), l.get("clients"), l.get("pipeline"),
                        l.get("round")) == ("server_limit", op, 64, pipeline, r):
                    return l.get(field)
            return None

        if against == "cpu16":
            a = limit("acquire", 16, "server_cpu_us_per_request")
            b = limit("release", 16, "server_cpu_us_per_request")
            return 1e6 / (a + b) if a and b else None
        p = 16 if against == "limit16" else 1
        return pair_rate(limit("acquire", p, "rps"), limit("release", p, "rps"))

    def round_ratio(self, lib, threads, against, scenario="uncontended", executor=None):
        """Median over rounds of pairs/s divided by the same round's reference
        (see round_ref)."""
        ratios = []
        rounds = sorted({l.get("round") for l in self.raw if l.get("scenario") == scenario
                         and l.get("round")})
        for r in rounds:
            def pairs(name, sc="uncontended", ex=None):
                for l in self.raw:
                    if (l.get("scenario"), l.get("lib"), l.get("round")) == (sc, name, r) and (
                            l.get("threads") == threads if sc == "uncontended"
                            else l.get("executor") == ex):
                        return l["pairs_per_s"]
                return None

            mine = pairs(lib, scenario, executor)
            if against == "peer":
                peers = [v for v in (pairs(p) for p in PEERS) if v]
                ref = max(peers) if peers else None
            else:
                ref = self.round_ref(r, against)
            if mine and ref:
                ratios.append(mine / ref)
        return median(ratios) if ratios else None

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
        return pair_rate(self.limit("acquire", 64, pipeline), self.limit("release", 64, pipeline))

    def pair_cpu_ceiling(self, pipeline):
        """1e6 / (acquire + release server CPU µs per request) at this pipeline
        depth (medians over rounds)."""
        a = self.get("server_cpu_us_per_request", scenario="server_limit", op="acquire",
                     clients=64, pipeline=pipeline)
        r = self.get("server_cpu_us_per_request", scenario="server_limit", op="release",
                     clients=64, pipeline=pipeline)
        return 1e6 / (a + r) if a and r else None

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
        rows.append(f"| {goal} | {measured} | {target} | {goal_met(met)} |")

    vs_peer = run.round_ratio("distlock", 64, "peer")
    vs_limit = run.round_ratio("distlock", 64, "limit16")
    if vs_peer is None and u64 and best:
        vs_peer = u64 / best
    if vs_limit is None and u64 and limit:
        vs_limit = u64 / limit
    if vs_peer is not None:
        row("uncontended 64-thread pairs/s vs fastest peer", f"{vs_peer:.2f}× (median "
            f"fastest: {NAMES[who]})", "≥ 2×", vs_peer >= 2)
    if vs_limit is not None:
        row("uncontended 64-thread pairs/s vs server limit (our 2 scripts, -P 16)",
            f"{vs_limit:.2f}×", "≥ 0.8×", vs_limit >= 0.8)
    over_ping = run.uncontended("distlock", 1, "acquire_p50_over_ping_p50")
    if over_ping is None and p50 and ping:
        over_ping = p50 / ping
    if over_ping is not None:
        row("acquire p50 at 1 thread vs same Client's PING p50", f"{over_ping:.2f}×", "≤ 1.2×",
            over_ping <= 1.2)
    if rt is not None:
        row("round trips per uncontended pair", f"{rt:.3f}", "2.00", abs(rt - 2) < 0.005)
    ping_line = run.find(scenario="ping", lib="distlock")
    if c:
        ref = (f" (PING p99 of one Client in this run: {ping_line['rtt_p99_us'] / 1000:.2f} ms)"
               if ping_line else "")
        row("contended handoff p99", f"{c['handoff_p99_us'] / 1000:.2f} ms{ref}", "≤ 2 ms",
            c["handoff_p99_us"] <= 2000)
        row("contended worst wait", f"{c['wait_max_us'] / 1000:.1f} ms", "≤ 100 ms",
            c["wait_max_us"] <= 100000)
        row("contended counter exact", f"{c['counter_final']} / {c['counter_expected']}",
            "equal", c.get("counter_exact"))
    a = run.find(scenario="async", lib="distlock", executor="app-thread")
    if a and a.get("ratio_to_server_ceiling") is not None:
        cpu16 = run.round_ratio("distlock", None, "cpu16", scenario="async", executor="app-thread")
        row("async, 256 coroutines on one application thread, vs the server's ceiling in the "
            "same run (= server core utilization)",
            f"{a['ratio_to_server_ceiling']:.2f}× ({fmt(a['pairs_per_s'])} pairs/s; "
            f"{a.get('voluntary_context_switches_per_pair', 0):.2f} voluntary context switches "
            "per pair" + (f"; {cpu16:.2f}× the -P 16 CPU ceiling" if cpu16 else "") + ")",
            "≥ 0.9×", a["ratio_to_server_ceiling"] >= 0.9)
    if w:
        row("watchdog leases renewed per script call", f"{w['leases_per_call']:.0f}", "≥ 100",
            w["leases_per_call"] >= 100)
    return rows


def uncontended_table(run):
    rows = ["| library | threads | pairs/s | × server limit -P 16 "
            "| × redis-benchmark -P 1 (client-core limit) "
            "| × best peer | acquire p50 µs | p99 µs | p99.9 µs | round trips/pair "
            "| CPU µs/pair client, server | CPU % of a core client, server "
            "| client context switches/pair |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for lib in LIBS:
        for t in THREADS:
            line = run.find(scenario="uncontended", lib=lib, threads=t)
            if not line:
                continue
            v = line["pairs_per_s"]

            def rr(against):
                return times(run.round_ratio(lib, t, against))

            rows.append(
                f"| {NAMES[lib]} | {t} | {fmt(v)} | {rr('limit16')} | "
                f"{rr('limit1')} | {rr('peer')} | {fmt(line['acquire_p50_us'])} | "
                f"{fmt(line['acquire_p99_us'])} | {fmt(line['acquire_p999_us'])} | "
                f"{fmt(line['round_trips_per_pair'], 3)} | "
                f"{fmt(line.get('client_cpu_us_per_pair'))}, {fmt(line.get('server_cpu_us_per_pair'))} | "
                f"{fmt(line.get('client_cpu_pct'))}, {fmt(line.get('server_cpu_pct'))} | "
                f"{fmt(line.get('context_switches_per_pair'), 1)} |")
    return rows


def ceiling_table(run):
    rows = ["The server's ceiling of a run is 1e6 / (server main-thread CPU µs per pair) in that "
            "run: the pairs/s the server would reach if its core were busy all the time with the "
            "same traffic. A run's pairs/s over its own ceiling is by construction the server "
            "core's utilization. The server's cost per pair falls as commands arrive in bigger "
            "batches, so a run with more concurrency has a higher ceiling; the -P 16 CPU "
            "ceiling (redis-benchmark, 64 clients x 16 pipelined, same round) is a fixed "
            "reference for all rows. Voluntary context switches count every thread of the "
            "client process (the callers and the Client's I/O thread). \"Server waiting for its core\" "
            "is the share of the run the server's main thread was runnable but another process "
            "had its CPU (/proc/PID/schedstat): on a shared machine, busy + waiting is the core "
            "the server could have had; a low \"busy\" with a high \"waiting\" is a starved "
            "server, not an idle one.", "",
            "| run | pairs/s | server CPU µs/pair (main thread) | server ceiling pairs/s "
            "| server core busy | server waiting for its core | × own ceiling "
            "| × -P 16 CPU ceiling | × server limit -P 16 "
            "| client CPU µs/pair | voluntary context switches/pair |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]

    def add(label, line, cpu16, lim16):
        if not line or line.get("server_ceiling_pairs_per_s") is None:
            return
        rows.append(
            f"| {label} | {fmt(line['pairs_per_s'])} | {fmt(line['server_main_cpu_us_per_pair'], 1)} | "
            f"{fmt(line['server_ceiling_pairs_per_s'])} | "
            f"{line['server_core_utilization']:.0%} | {pct(line.get('server_runqueue_wait_share'))} | "
            f"{line['ratio_to_server_ceiling']:.2f}× | "
            f"{times(cpu16)} | "
            f"{times(lim16)} | "
            f"{fmt(line.get('client_cpu_us_per_pair'), 1)} | "
            f"{fmt(line.get('voluntary_context_switches_per_pair'), 2)} |")

    for lib in ["distlock", "distlock-fenced"]:
        for t in THREADS:
            add(f"{NAMES[lib]}, {t} threads", run.find(scenario="uncontended", lib=lib, threads=t),
                run.round_ratio(lib, t, "cpu16"), run.round_ratio(lib, t, "limit16"))
    for ex, label in (("app-thread", "one application thread"),
                      ("client-io-thread", "the Client's I/O thread")):
        line = run.find(scenario="async", lib="distlock", executor=ex)
        if line:
            add(f"distlock async, {line['coroutines']} coroutines on {label}", line,
                run.round_ratio("distlock", None, "cpu16", scenario="async", executor=ex),
                run.round_ratio("distlock", None, "limit16", scenario="async", executor=ex))
    return rows


def async_table(run):
    rows = ["Each coroutine loops `co_await lock.async_acquire(asio::use_awaitable)` + "
            "`co_await lease.async_release(asio::use_awaitable)` on its own name. "
            "\"one application thread\": an io_context run by the program's one thread; every "
            "completion hops to it from the Client's I/O thread. \"the Client's I/O thread\": "
            "the coroutines are spawned on the Client's own executor "
            "(`distlock::get_executor(client)`).", "",
            "| coroutines on | coroutines | pairs/s | acquire p50 µs | p99 µs | release p50 µs "
            "| p99 µs | round trips/pair | client CPU % of a core | context switches/pair "
            "(voluntary) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for ex, label in (("app-thread", "one application thread"),
                      ("client-io-thread", "the Client's I/O thread")):
        a = run.find(scenario="async", lib="distlock", executor=ex)
        if not a:
            continue
        rows.append(
            f"| {label} | {a['coroutines']} | {fmt(a['pairs_per_s'])} | "
            f"{fmt(a['acquire_p50_us'])} | {fmt(a['acquire_p99_us'])} | "
            f"{fmt(a['release_p50_us'])} | {fmt(a['release_p99_us'])} | "
            f"{fmt(a['round_trips_per_pair'], 3)} | {fmt(a['client_cpu_pct'])} | "
            f"{fmt(a['context_switches_per_pair'], 2)} "
            f"({fmt(a['voluntary_context_switches_per_pair'], 2)}) |")
    return rows


def contended_table(run):
    rows = ["| library | acquisitions/s | × best peer | handoff p50 µs | p99 µs | max µs "
            "| worst wait ms | barging share | Jain fairness | counter exact |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    best, _ = run.best_peer(lambda p: run.get("acquisitions_per_s", scenario="contended", lib=p))
    for lib in ["distlock", "distlock-fair"] + PEERS:
        c = run.find(scenario="contended", lib=lib)
        if not c:
            continue
        rows.append(
            f"| {NAMES[lib]} | {fmt(c['acquisitions_per_s'])} | {ratio(c['acquisitions_per_s'], best)} | "
            f"{fmt(c['handoff_p50_us'])} | {fmt(c['handoff_p99_us'])} | {fmt(c['handoff_max_us'])} | "
            f"{fmt(c['wait_max_us'] / 1000, 1)} | {fmt(c['barging_share'], 2)} | "
            f"{fmt(c['jain_fairness'], 3)} | {fmt(c.get('counter_exact'))} |")
    ping = run.find(scenario="ping", lib="distlock")
    if ping:
        rows.append(f"| *reference: one distlock Client's PING round trip, 1 thread* | | | "
                    f"{fmt(ping['rtt_p50_us'])} | {fmt(ping['rtt_p99_us'])} | {fmt(ping['rtt_max_us'])} "
                    "| | | | |")
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
    rows = ["redis-benchmark runs on the client core. With -P 16 it keeps the server busy: "
            "those rows are the server's limit. Without pipelining (-P 1) its one thread on the "
            "client core is the limit, not the server.", "",
            "| redis-benchmark | clients | pipeline | requests/s | p50 ms "
            "| server CPU µs/request | server ceiling requests/s | server core busy "
            "| server waiting for its core |",
            "|---|---|---|---|---|---|---|---|---|"]
    for line in run.lines:
        if line.get("scenario") == "server_limit":
            extra = (f" (real release path: {line['full_path_share']:.0%})"
                     if "full_path_share" in line else "")
            us = line.get("server_cpu_us_per_request")
            rows.append(f"| {line['op']}{extra} | {line['clients']} | {line['pipeline']} | "
                        f"{fmt(line['rps'])} | {line['p50_ms']} | "
                        f"{'—' if us is None else fmt(us, 2)} | "
                        f"{fmt(line.get('server_ceiling_rps'))} | "
                        f"{'—' if us is None else format(line['server_core_utilization'], '.0%')} | "
                        f"{pct(line.get('server_runqueue_wait_share'))} |")
    for p in (1, 16):
        rows.append(f"| acquire+release pair (derived) | 64 | {p} | {fmt(run.pair_limit(p))} | "
                    f"| | {fmt(run.pair_cpu_ceiling(p))} | | |")
    return rows


def client_goals(run):
    rows = ["| goal | measured | target | met |", "|---|---|---|---|"]
    for op in ("ping", "evalsha"):
        line = run.find(bench="client_throughput", op=op, threads=64)
        if not line:
            continue
        r1, r16 = line["ratio_to_redis_benchmark"], line["ratio_to_redis_benchmark_p16"]
        rows.append(f"| {op}, 64 threads on one Client vs redis-benchmark -c 64 | {r1:.2f}× | ≥ 1× "
                    f"| {goal_met(r1 >= 1)} |")
        rows.append(f"| {op}, 64 threads on one Client vs redis-benchmark -c 64 -P 16 | {r16:.2f}× "
                    f"| ≥ 0.5× | {goal_met(r16 >= 0.5)} |")
    return rows


def client_table(run):
    n = max([l.get("rounds", 1) for l in run.lines if l.get("bench") == "client_throughput"] + [1])
    rows = [f"Medians over {n} round(s); each ratio is taken within a round (redis-benchmark run "
            "back to back with distlock, in an order that rotates from round to round) and the "
            "median of those ratios is shown. redis-benchmark runs on the client core.", "",
            "| op | threads | one distlock Client ops/s | redis-benchmark same -c | ratio "
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
        f.write("\n\n# library p50 p99 p99.9 max (ms), worst wait (ms)\n")
        for lib in ["distlock"] + PEERS:
            c = run.find(scenario="contended", lib=lib)
            if c:
                f.write(f"\"{SHORT[lib]}\" " + " ".join(
                    str(c[f"handoff_{k}_us"] / 1000) for k in ("p50", "p99", "p999", "max"))
                        + f" {c['wait_max_us'] / 1000}\n")
    limit16, limit1 = run.pair_limit(16) or 0, run.pair_limit(1) or 0
    cpu16 = run.pair_cpu_ceiling(16) or 0
    async_app = run.get("pairs_per_s", scenario="async", lib="distlock", executor="app-thread")
    async_line = (f", \\\n  {async_app} with lines dt 5 lw 2 lc rgb 'dark-violet' "
                  "title 'distlock async, 256 coroutines, 1 thread'" if async_app else "")
    top = max([limit16, limit1, cpu16, async_app or 0]
              + [run.uncontended(l, t) or 0 for l in LIBS for t in THREADS]) * 1.12
    plot_lines = ", ".join(
        f"'{dat}' index 0 using 1:{i + 2} with linespoints lw 2 pt 7 title '{SHORT[l]}'"
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
set yrange [0:{top}]
set grid
set key outside right top vertical Left reverse samplen 2 width -3
plot {plot_lines}, \\
  {limit16} with lines dt 2 lc rgb 'black' title 'server limit, -P 16', \\
  {limit1} with lines dt 3 lc rgb 'gray40' title 'redis-benchmark -P 1 (client-core limit)', \\
  {cpu16} with lines dt 4 lc rgb 'red' title 'server CPU ceiling at -P 16'{async_line}
reset
set terminal pngcairo size 960,600 font 'sans,11'
set output '{out}-handoff.png'
set title 'Contended: handoff latency (unlock -> next lock() returns) and worst wait, 2 processes x 8 threads'
set ylabel 'milliseconds (log scale)'
set logscale y
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key outside bottom center horizontal
set xtics nomirror
plot '{dat}' index 1 using 2:xtic(1) title 'p50', '' index 1 using 3 title 'p99', \\
  '' index 1 using 4 title 'p99.9', '' index 1 using 5 title 'max', \\
  '' index 1 using 6 title 'worst wait (lock() call to return)' lc rgb 'gray60'
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
        json.dump({"command": a.command, "machine": facts,
                   "note": "results: medians over rounds; raw: every line as measured",
                   "references": {
                       "pair_limit_p1": run.pair_limit(1),
                       "pair_limit_p16": run.pair_limit(16),
                       "pair_cpu_ceiling_p1": run.pair_cpu_ceiling(1),
                       "pair_cpu_ceiling_p16": run.pair_cpu_ceiling(16)},
                   "results": run.lines, "raw": lines}, f, indent=1)
    base = os.path.basename(a.out)
    md = [f"# distlock benchmark: {base}", "",
          f"Command: `{a.command}` at commit {facts.get('commit', '?')}. "
          f"Machine: {facts['cpu_model']}, {facts['cores']} cores, "
          f"{facts['redis_server']}; {facts['pinning']}. Load average (1, 5, 15 min) at start "
          f"{facts.get('load_average_at_start', '?')}, at end {facts.get('load_average_at_end', '?')}"
          " (anything above 0 is other work sharing the machine).", "",
          "Uncontended figures and server limits are medians over "
          f"{max([l.get('rounds', 1) for l in run.lines] + [1])} rounds; in each round every "
          "library runs once, one after the other, right after the server limit is measured. "
          "Each ratio is taken within a round and the median of those ratios is shown."]
    sections = [
        ("Goals (issue 4)", goals_table(run)),
        ("Uncontended (distinct name per thread, one client)", uncontended_table(run)),
        ("Against the server's ceiling (server CPU per pair)", ceiling_table(run)),
        ("Async (coroutines, one Client)", async_table(run)),
        ("Contended (2 processes x 8 threads, one name)", contended_table(run)),
        ("Watchdog (10,000 leases, 3 s lease)", watchdog_table(run)),
        ("Server limit and redis-benchmark references (same server, same run)",
         limits_table(run)),
        ("One Client vs redis-benchmark (issue 2)", client_goals(run) + [""] + client_table(run)),
    ] + report_sync.sections(run)
    for title, rows in sections:
        md += ["", f"## {title}", ""] + rows
    md += ["", f"![throughput]({base}-throughput.png)", "", f"![handoff]({base}-handoff.png)", ""]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(md))
    charts(run, a.out)
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())

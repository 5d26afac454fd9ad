#!/usr/bin/env python3
"""Median table of scripts/cost_ab.sh's JSON lines: per figure, side A
(before), side B (after), the peer, and the ratios B/A and B/peer."""
import json
import statistics
import sys
from collections import defaultdict


def key(d):
    s = d["scenario"]
    if s == "semaphore":
        return f"semaphore {d['permits']} permits, 64 threads: pairs/s"
    if s == "rate_limiter":
        return "rate limiter, 64 threads: decisions/s"
    if s == "uncontended":
        return f"uncontended Lock, {d['threads']} threads: pairs/s"
    if s == "contended":
        return "fair lock 2x8: acquisitions/s"
    if s == "ping":
        return "PING p50 us"
    if s == "ceiling":
        return "redis-benchmark EVALSHA acquire, 64 clients: calls/s"
    return None


def value(d):
    for k in ("pairs_per_s", "decisions_per_s", "acquisitions_per_s", "rps"):
        if k in d:
            return float(d[k])
    if "rtt_p50_us" in d:
        return float(d["rtt_p50_us"])
    return None


def main():
    rows = defaultdict(lambda: defaultdict(list))
    extra = defaultdict(lambda: defaultdict(list))
    for line in open(sys.argv[1]):
        d = json.loads(line)
        k = key(d)
        if k is None:
            continue
        side = d.get("side", "?")
        rows[k][side].append(value(d))
        for f in ("server_main_cpu_us_per_pair", "client_cpu_us_per_pair",
                  "client_cpu_us_per_decision", "handoff_p50_us", "rtt_p50_us"):
            if f in d:
                extra[(k, f)][side].append(float(d[f]))
        if d["scenario"] == "rate_limiter":
            extra[(k, "over_admitted")][side].append(float(d.get("over_admitted", 0)))
    med = lambda v: statistics.median(v) if v else None
    print("| figure | A (before) | B (after) | peer | B/A | B/peer |")
    print("|---|---|---|---|---|---|")
    for k in sorted(rows):
        a, b = med(rows[k].get("A", [])), med(rows[k].get("B", []))
        p = med(rows[k].get("node", []) or rows[k].get("rb", []))
        fmt = lambda x: "-" if x is None else f"{x:,.1f}"
        ratio = lambda x, y: "-" if x is None or y in (None, 0) else f"{x / y:.2f}x"
        print(f"| {k} | {fmt(a)} | {fmt(b)} | {fmt(p)} | {ratio(b, a)} | {ratio(b, p)} |")
    print()
    print("| figure | detail | A | B | peer |")
    print("|---|---|---|---|---|")
    for (k, f) in sorted(extra):
        v = extra[(k, f)]
        fmt = lambda x: "-" if not x else f"{statistics.median(x):,.2f}"
        print(f"| {k} | {f} | {fmt(v.get('A'))} | {fmt(v.get('B'))} | {fmt(v.get('node'))} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Figures of a contended-lock history, the same as distlock-bench computes.

A history is one line per acquisition: `proc thread call_ns acquire_ns
release_ns`, stamped with CLOCK_MONOTONIC (one clock for every process of a
machine): when lock() was called, when it returned, and when unlock() was
called.

    contended_stats.py --records FILE --threads N [--meta JSON]

Prints one JSON line: `meta` (for instance the runner's counter_final) plus
the figures. counter_expected is the number of acquisitions, and the run's
counter (incremented under the lock) must equal it.
"""
import argparse
import json
import math
import sys


def summarize(samples_ns, prefix, into):
    s = sorted(samples_ns)

    def at(q):
        if not s:
            return 0.0
        i = min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))
        return s[i] / 1000.0

    into[prefix + "_p50_us"] = at(0.5)
    into[prefix + "_p99_us"] = at(0.99)
    into[prefix + "_p999_us"] = at(0.999)
    into[prefix + "_max_us"] = s[-1] / 1000.0 if s else 0.0
    into[prefix + "_mean_us"] = sum(s) / len(s) / 1000.0 if s else 0.0


def figures(history, threads_total):
    """history: list of (proc, thread, call_ns, acquire_ns, release_ns)."""
    h = sorted(history, key=lambda r: r[3])
    out = {}
    handoff, wait = [], []
    same_thread = same_proc = overlaps = 0
    per_thread = {}
    # earliest[i]: the earliest lock() call among acquisitions i, i+1, ...
    earliest = [0] * (len(h) + 1)
    earliest[len(h)] = float("inf")
    for i in range(len(h) - 1, -1, -1):
        earliest[i] = min(h[i][2], earliest[i + 1])
    for i, r in enumerate(h):
        wait.append(r[3] - r[2])
        per_thread[(r[0], r[1])] = per_thread.get((r[0], r[1]), 0) + 1
        if i + 1 == len(h):
            break
        nxt = h[i + 1]
        if nxt[3] < r[4]:
            overlaps += 1  # two holders at once
        # Contended: another thread was already waiting when this unlock began.
        # Then the handoff is how long the lock stood free, and the previous
        # holder winning it again is barging.
        if earliest[i + 1] < r[4]:
            handoff.append(nxt[3] - r[4])
            if (nxt[0], nxt[1]) == (r[0], r[1]):
                same_thread += 1
            if nxt[0] == r[0]:
                same_proc += 1
    total = sum(per_thread.values())
    squares = sum(n * n for n in per_thread.values())
    span = (h[-1][4] - h[0][2]) / 1e9 if h else 0.0
    out["acquisitions"] = len(h)
    out["acquisitions_per_s"] = len(h) / span if span > 0 else 0.0
    out["handoffs"] = len(handoff)
    out["barging_share"] = same_thread / len(handoff) if handoff else 0.0
    out["same_process_share"] = same_proc / len(handoff) if handoff else 0.0
    out["jain_fairness"] = total * total / (threads_total * squares) if squares else 0.0
    out["threads_that_acquired"] = len(per_thread)
    out["overlaps"] = overlaps
    summarize(handoff, "handoff", out)
    summarize(wait, "wait", out)
    out["counter_expected"] = len(h)
    return out


def read_history(path):
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 5:
                rows.append(tuple(int(p) for p in parts))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", required=True)
    p.add_argument("--threads", type=int, required=True, help="threads (workers) in all processes")
    p.add_argument("--meta", default="{}", help="a JSON object to merge into the output")
    a = p.parse_args()
    line = json.loads(a.meta)
    line.update(figures(read_history(a.records), a.threads))
    if "counter_final" in line:
        line["counter_exact"] = line["counter_final"] == line["counter_expected"]
    line.pop("records", None)
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())

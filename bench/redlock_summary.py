#!/usr/bin/env python3
"""Summary of redlock_bench JSON lines tagged with round and side.

    redlock_summary.py FILE.jsonl

Each line is one run of one library (scripts/redlock_ab.sh adds "round",
"side" and "build"). Prints, per side, the median over rounds and the spread
[min-max] of every figure, then the ratios against node redlock taken within
each round and side (the reference measured next to it), and with two sides
the ratio B / A of distlock's figures within each round.
"""
import json
import statistics
import sys
from collections import defaultdict


def spread(values, fmt="{:.0f}"):
    if not values:
        return "-"
    vs = sorted(values)
    med = statistics.median(vs)
    return f"{fmt.format(med)} [{fmt.format(vs[0])}-{fmt.format(vs[-1])}]"


def key_of(d):
    if d["scenario"] == "uncontended":
        return ("uncontended", d["lib"], f"{d['concurrency']} workers")
    retry = d.get("node_retry", "")
    lib = d["lib"] + (f" (retry {retry})" if retry else "")
    return ("contended", lib, f"{d['procs']}x{d['threads_per_proc']} think {d.get('think_ms', 0)}ms")


UNC = [("pairs_per_s", "pairs/s", "{:.0f}"), ("acquire_p50_us", "acq p50 us", "{:.0f}"),
       ("acquire_p99_us", "acq p99 us", "{:.0f}")]
CON = [("acquisitions_per_s", "acq/s", "{:.0f}"), ("handoff_p50_us", "handoff p50 us", "{:.0f}"),
       ("handoff_p99_us", "handoff p99 us", "{:.0f}"),
       ("handoff_to_other_p50_us", "to-other p50 us", "{:.0f}"),
       ("barging_share", "barging", "{:.2f}"), ("wait_p99_us", "wait p99 us", "{:.0f}"),
       ("handoffs_to_other", "to-other n", "{:.0f}")]


def figures_table(rows):
    by = defaultdict(lambda: defaultdict(list))
    checks = defaultdict(list)
    for d in rows:
        k = (d.get("side", "A"),) + key_of(d)
        for field, _, _ in UNC + CON:
            if field in d:
                by[k][field].append(d[field])
        if d["scenario"] == "contended":
            checks[k].append(d["counter_exact"] and d["overlaps"] == 0 and d["children_ok"])
    for k in sorted(by):
        fields = UNC if k[1] == "uncontended" else CON
        cells = "; ".join(f"{label} {spread(by[k][f], fmt)}" for f, label, fmt in fields)
        ok = "" if k[1] == "uncontended" else f"; exact, no overlap: {all(checks[k])}"
        print(f"  side {k[0]} {k[1]:11} {k[2]:28} {k[3]:15} {cells}{ok}")


def ratios(rows):
    """distlock / node within each (side, round) for the same shape."""
    at = {}
    for d in rows:
        at[(d.get("side", "A"), d.get("round", 1)) + key_of(d)] = d
    out = defaultdict(list)
    for (side, rnd, scen, lib, shape), d in at.items():
        if lib != "distlock":
            continue
        for (s2, r2, sc2, lib2, sh2), n in at.items():
            if (s2, r2, sc2, sh2) != (side, rnd, scen, shape) or lib2 == "distlock":
                continue
            if scen == "uncontended":
                out[(side, scen, shape, lib2, "pairs/s x")].append(d["pairs_per_s"] / n["pairs_per_s"])
                out[(side, scen, shape, lib2, "acq p50: node/ours")].append(
                    n["acquire_p50_us"] / d["acquire_p50_us"])
            else:
                out[(side, scen, shape, lib2, "acq/s x")].append(
                    d["acquisitions_per_s"] / n["acquisitions_per_s"])
                if d["handoff_to_other_p50_us"] > 0:
                    out[(side, scen, shape, lib2, "to-other handoff p50: node/ours")].append(
                        n["handoff_to_other_p50_us"] / d["handoff_to_other_p50_us"])
                out[(side, scen, shape, lib2, "handoff p50: node/ours")].append(
                    n["handoff_p50_us"] / d["handoff_p50_us"])
    for k in sorted(out):
        print(f"  side {k[0]} {k[1]:11} {k[2]:15} vs {k[3]:28} {k[4]:34} {spread(out[k], '{:.2f}')}")


def b_over_a(rows):
    at = {}
    for d in rows:
        if d["lib"] == "distlock":
            at[(d.get("side", "A"), d.get("round", 1)) + key_of(d)[::2]] = d
    out = defaultdict(list)
    for (side, rnd, scen, shape), b in at.items():
        a = at.get(("A", rnd, scen, shape))
        if side != "B" or a is None:
            continue
        for field, label, _ in UNC + CON:
            if field in a and field in b and a[field]:
                out[(scen, shape, label)].append(b[field] / a[field])
    for k in sorted(out):
        print(f"  {k[0]:11} {k[1]:15} {k[2]:18} B/A {spread(out[k], '{:.2f}')}")


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
    builds = sorted({(d.get("side", "A"), d.get("build", "?")) for d in rows})
    rounds = sorted({d.get("round", 1) for d in rows})
    print(f"redlock_bench: {len(rounds)} round(s); " +
          ", ".join(f"side {s} = {b}" for s, b in builds))
    print("Figures: median [min-max] over rounds")
    figures_table(rows)
    print("Ratios to node redlock, within each round and side: median [min-max]")
    ratios(rows)
    if any(s == "B" for s, _ in builds):
        print("distlock B / A, within each round: median [min-max]")
        b_over_a(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

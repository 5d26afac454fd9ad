"""The synchronizer sections of the bench report: Semaphore and
RateLimiter at 64 threads against their node peers and against
redis-benchmark on their own scripts, and the watchdog renewing 10,000
Permits. Used by report.py; `run` is its Run."""

from report_format import fmt, goal_met, pair_rate, pct, ratio, times

NAMES = {
    "distlock": "distlock Semaphore (the Client's permits)",
    "distlock-permit": "distlock Semaphore, Permit handles",
    "semaphore": "node redis-semaphore 5.8.0 Semaphore",
}
RL_NAMES = {
    "distlock": "distlock RateLimiter (GCRA)",
    "rate-limiter-flexible": "node rate-limiter-flexible 11.4.0 RateLimiterRedis (fixed window)",
}
# Exact admission: never more than the rate allows, and at most this share
# below it (the allowed count is an upper bound; see rate_limiter_table).
EXACT_SHORTFALL = 0.01


def _pct(line):
    """The share of the run the server's main thread waited, runnable, for its
    core (distlock's lines only: the node peers do not read schedstat)."""
    return pct(line.get("server_runqueue_wait_share"))


def _limit(run, op, pipeline):
    return run.get("rps", scenario="server_limit", op=op, clients=64, pipeline=pipeline)


def semaphore_pair_limit(run, pipeline):
    """acquire+release pairs/s redis-benchmark drives on the semaphore's two
    scripts (64 clients), from their requests/s."""
    return pair_rate(_limit(run, "semaphore_acquire", pipeline),
                     _limit(run, "semaphore_release", pipeline))


def exact(line):
    return (line is not None and line["over_admitted"] == 0
            and line["admitted"] >= (1 - EXACT_SHORTFALL) * line["allowed"])


def goals_rows(run):
    rows = ["| goal (issue 12) | measured | target | met |", "|---|---|---|---|"]
    for permits in sorted({l["permits"] for l in run.lines if l.get("scenario") == "semaphore"}):
        peer = run.get("pairs_per_s", scenario="semaphore", lib="semaphore", permits=permits)
        for lib in ("distlock", "distlock-permit"):
            mine = run.get("pairs_per_s", scenario="semaphore", lib=lib, permits=permits)
            if mine is None or not peer:
                continue
            r = mine / peer
            rows.append(f"| {NAMES[lib]}, acquire+release pairs/s, 64 threads, {permits} permits, "
                        f"vs redis-semaphore Semaphore | {r:.2f}× | ≥ 2× "
                        f"| {goal_met(r >= 2)} |")
    mine = run.find(scenario="rate_limiter", lib="distlock")
    peer = run.find(scenario="rate_limiter", lib="rate-limiter-flexible")
    if mine and peer:
        r = mine["decisions_per_s"] / peer["decisions_per_s"]
        rows.append(f"| RateLimiter decisions/s, 64 threads, vs rate-limiter-flexible | {r:.2f}× "
                    f"| ≥ 2× | {goal_met(r >= 2)} |")
    if mine:
        rows.append(f"| RateLimiter admission: admitted / allowed | {mine['admitted']:,} / "
                    f"{mine['allowed']:,} ({mine['over_admitted']} over) | exact: none over, "
                    f"≤ {EXACT_SHORTFALL:.0%} under | {goal_met(exact(mine))} |")
    w = run.find(scenario="watchdog_permits", lib="distlock")
    if w:
        rows.append(f"| watchdog: holdings renewed per script call, {w['holdings']:,} Permits "
                    f"| {w['holdings_per_call']:.0f} ({w['script_calls_per_period']:.1f} calls "
                    f"per {w['period_ms']} ms period) | batched (≥ 100, as issue 4's lock goal) "
                    f"| {goal_met(w['holdings_per_call'] >= 100)} |")
    return rows


def semaphore_table(run):
    lim16, lim1 = semaphore_pair_limit(run, 16), semaphore_pair_limit(run, 1)
    rows = ["64 threads on one Client (node: 64 async loops on one ioredis connection, each "
            "with its own Semaphore object) loop acquire(1) + release(1) on ONE semaphore. "
            "\"The Client's permits\": `sem.acquire(1)` / `sem.release(1)`; \"Permit handles\": "
            "`sem.acquire_permit(1)` / `permit.release()`, each Permit its own holder. "
            "redis-semaphore polls for a free permit every 10 ms (its default); distlock waits "
            "for a release on pub/sub. The server pair limit is redis-benchmark -c 64 on "
            "semaphore_acquire.lua and semaphore_release.lua (full paths: take 1, give back 1, "
            f"one holder), in the same run: -P 16 {fmt(lim16)} pairs/s, -P 1 {fmt(lim1)}. "
            "\"Own ceiling\": 1e6 / the server's CPU µs per pair in that run (= the server "
            "core's utilization). \"Server waiting for its core\": the share of the run the "
            "server's main thread was runnable while another process had its CPU.", "",
            "| library | permits | pairs/s | × peer | × server pair limit -P 16 | × own ceiling "
            "| acquire p50 µs | p99 µs | release p50 µs | p99 µs | script calls/pair "
            "| round trips/pair | client CPU µs/pair | server waiting for its core "
            "| permits available at end |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for line in run.lines:
        if line.get("scenario") != "semaphore":
            continue
        peer = run.get("pairs_per_s", scenario="semaphore", lib="semaphore",
                       permits=line["permits"])
        own = line.get("ratio_to_server_ceiling")
        rows.append(
            f"| {NAMES.get(line['lib'], line['lib'])} | {line['permits']} "
            f"| {fmt(line['pairs_per_s'])} "
            f"| {'—' if line['lib'] == 'semaphore' else ratio(line['pairs_per_s'], peer)} "
            f"| {ratio(line['pairs_per_s'], lim16)} | {times(own)} "
            f"| {fmt(line['acquire_p50_us'])} | {fmt(line['acquire_p99_us'])} "
            f"| {fmt(line['release_p50_us'])} | {fmt(line['release_p99_us'])} "
            f"| {fmt(line['evalsha_per_pair'], 2)} | {fmt(line['round_trips_per_pair'], 2)} "
            f"| {fmt(line['client_cpu_us_per_pair'], 1)} | {_pct(line)} "
            f"| {fmt(line.get('permits_available_at_end'))} |")
    return rows


def rate_limiter_table(run):
    lim16, lim1 = _limit(run, "rate_limiter", 16), _limit(run, "rate_limiter", 1)
    rows = ["64 threads on one Client (node: 64 async loops on one ioredis connection) call "
            "try_acquire(1) (node: `consume(key, 1)`) on ONE fresh limiter of 1,000 permits per "
            "1 s for the whole run. Allowed = burst (1,000) + 1,000 × the span in seconds of "
            "the server's clock (TIME read just before the first and just after the last "
            "decision): an upper bound of what the rate permits. rate-limiter-flexible is a "
            "fixed window (1,000 per window of 1 s that starts at a window's first request), "
            "so it admits 1,000 per window started. The server limit is redis-benchmark "
            "-c 64 on rate_limiter_acquire.lua against one limiter of the same rate (mostly "
            f"refusals, as here), same run: -P 16 {fmt(lim16)} decisions/s, -P 1 "
            f"{fmt(lim1)}.", "",
            "| library | decisions/s | × peer | × server limit -P 16 | × redis-benchmark -P 1 "
            "| × own ceiling | decision p50 µs | p99 µs | round trips/decision "
            "| server waiting for its core | server span s | admitted | allowed "
            "| admitted / allowed | over allowed |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    peer = run.get("decisions_per_s", scenario="rate_limiter", lib="rate-limiter-flexible")
    for line in run.lines:
        if line.get("scenario") != "rate_limiter":
            continue
        own = line.get("ratio_to_server_ceiling")
        d = line["decisions_per_s"]
        rows.append(
            f"| {RL_NAMES.get(line['lib'], line['lib'])} | {fmt(d)} "
            f"| {'—' if line['lib'] != 'distlock' else ratio(d, peer)} "
            f"| {ratio(d, lim16)} | {ratio(d, lim1)} "
            f"| {times(own)} "
            f"| {fmt(line['decision_p50_us'])} | {fmt(line['decision_p99_us'])} "
            f"| {fmt(line['round_trips_per_decision'], 3)} | {_pct(line)} "
            f"| {fmt(line['server_span_s'], 3)} "
            f"| {fmt(line['admitted'])} | {fmt(line['allowed'])} "
            f"| {line['admitted_over_allowed']:.4f} | {line['over_admitted']} |")
    return rows


def watchdog_permits_table(run):
    rows = ["10,000 holdings of one semaphore held for the whole window. distlock: 10,000 "
            "`Permit`s from `acquire_permit(1)` without a fixed lease (each its own holder, "
            "renewed by the Client's one watchdog every watchdog_timeout / 3); node: 10,000 "
            "redis-semaphore Semaphore objects on one key, each refreshing itself every "
            "0.8 × lockTimeout. Script calls and renewals (ZADD, one per holding renewed) "
            "from INFO commandstats over the window, after a first renewal round.", "",
            "| library | holdings | lease ms | renewal period ms | window s | script calls "
            "| script calls per period | holdings renewed per call | renewals / expected "
            "| client CPU % of a core | holdings valid at end |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for lib in ("distlock", "semaphore"):
        w = run.find(scenario="watchdog_permits", lib=lib)
        if not w:
            continue
        expected = w.get("renewals_expected") or w["holdings"] * w["periods"]
        rows.append(
            f"| {'distlock Permits' if lib == 'distlock' else NAMES[lib]} | {w['holdings']:,} "
            f"| {w['watchdog_timeout_ms']} | {w['period_ms']} | {w['seconds']:.1f} "
            f"| {fmt(w['script_calls'])} | {w['script_calls_per_period']:.1f} "
            f"| {w['holdings_per_call']:.1f} | {fmt(w['renewals'])} / {fmt(expected)} "
            f"| {w['client_cpu_pct']:.2f} | {w['holdings_valid_at_end']:,} |")
    return rows


def sections(run):
    """(title, rows) of every synchronizer section that has lines."""
    if not any(l.get("scenario") in ("semaphore", "rate_limiter", "watchdog_permits")
               for l in run.lines):
        return []
    return [
        ("Goals (issue 12)", goals_rows(run)),
        ("Semaphore, 64 threads on one semaphore (issue 12)", semaphore_table(run)),
        ("Rate limiter, 64 threads on one limiter (issue 12)", rate_limiter_table(run)),
        ("Watchdog, 10,000 held Permits (issue 12)", watchdog_permits_table(run)),
    ]

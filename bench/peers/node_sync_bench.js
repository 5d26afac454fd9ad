#!/usr/bin/env node
// Peer benchmark for the synchronizers (issue 12): node `redis-semaphore`'s
// Semaphore and `rate-limiter-flexible`'s RateLimiterRedis, both on ioredis,
// in the shapes of distlock-bench's semaphore, rate_limiter and
// watchdog_permits scenarios, against the same server. One JSON object per
// line on stdout.
//
//   node node_sync_bench.js semaphore --port P [--seconds S] [--concurrency 64]
//        [--permits 8]
//   node node_sync_bench.js rate_limiter --port P [--seconds S] [--concurrency 64]
//        [--rate 1000] [--interval-ms 1000]
//   node node_sync_bench.js watchdog_permits --port P [--seconds S]
//        [--holdings 10000] [--lease-ms 3000]
//
// As in node_bench.js, C async loops share ONE ioredis connection (the node
// counterpart of 64 threads on one Client). redis-semaphore waits for a
// permit by polling every retryInterval (its default, 10 ms, is kept);
// rate-limiter-flexible runs with its defaults (no in-memory block, no
// insurance limiter), so every decision goes to Redis.
'use strict';

const fs = require('fs');
const path = require('path');
const Redis = require('ioredis');
const { Semaphore } = require('redis-semaphore');
const { RateLimiterRedis } = require('rate-limiter-flexible');
const { parseArgs, nowNs, summarize, serverCpu, commandCalls, clientCommands } =
  require('./node_bench.js');

const LEASE_MS = 30000; // distlock's default watchdog_timeout, the lease its permits get

// Commands a library runs inside its Lua scripts (counted by the server, not
// round trips), from the given files and directories of node_modules.
function luaCommands(parts) {
  const root = path.join(__dirname, 'node_modules');
  const files = [];
  for (const p of parts) {
    const full = path.join(root, p);
    if (fs.statSync(full).isDirectory()) {
      for (const e of fs.readdirSync(full, { recursive: true })) {
        if (String(e).endsWith('.js')) files.push(path.join(full, String(e)));
      }
    } else {
      files.push(full);
    }
  }
  const names = new Set();
  for (const f of files) {
    for (const m of fs.readFileSync(f, 'utf8').matchAll(/redis\.p?call\(\s*['"]([A-Za-z]+)['"]/g)) {
      names.add(m[1].toLowerCase());
    }
  }
  return names;
}

function connect(a) {
  return new Redis({ host: a.host || '127.0.0.1', port: Number(a.port) });
}

// Runs `c` async loops calling body(w) until `seconds` have passed; returns
// the wall seconds and whether any loop failed.
async function loops(c, seconds, body) {
  const start = nowNs();
  const deadline = start + BigInt(Math.round(seconds * 1e9));
  let failed = false;
  await Promise.all(Array.from({ length: c }, async (_, w) => {
    try {
      for (let i = 0; i < 20000000 && nowNs() < deadline; i++) await body(w);
    } catch (e) {
      failed = true;
      process.stderr.write(`node_sync_bench: ${e && e.stack ? e.stack : e}\n`);
    }
  }));
  return { elapsed: Number(nowNs() - start) / 1e9, failed };
}

async function measured(stats, run) {
  const before = await commandCalls(stats);
  const serverCpu0 = await serverCpu(stats);
  const cpu0 = process.cpuUsage();
  const out = await run();
  const used = process.cpuUsage(cpu0);
  out.cpu = (used.user + used.system) / 1e6;
  out.serverCpu = (await serverCpu(stats)) - serverCpu0;
  out.before = before;
  out.after = await commandCalls(stats);
  return out;
}

async function semaphore(a) {
  const c = Number(a.concurrency || 64);
  const permits = Number(a.permits || 8);
  const redis = connect(a);
  const stats = connect(a);
  const key = `bench:s:${process.pid}:${permits}`;
  // One Semaphore object per loop: each is one holder (its own identifier).
  const sems = Array.from({ length: c }, () => new Semaphore(redis, key, permits, {
    lockTimeout: LEASE_MS, acquireTimeout: 60000, retryInterval: 10,
  }));
  process.stderr.write(`node_sync_bench: semaphore ${c} loops, ${permits} permits\n`);
  const acquire = [];
  const release = [];
  const m = await measured(stats, () => loops(c, Number(a.seconds || 5), async (w) => {
    const t0 = nowNs();
    await sems[w].acquire();
    const t1 = nowNs();
    await sems[w].release();
    const t2 = nowNs();
    acquire.push(Number(t1 - t0));
    release.push(Number(t2 - t1));
  }));
  const cmds = clientCommands(m.before, m.after, luaCommands(['redis-semaphore/lib/semaphore']));
  const n = acquire.length;
  const total = Object.values(cmds).reduce((x, y) => x + y, 0);
  const line = {
    scenario: 'semaphore', lib: 'semaphore', threads: c, permits, pairs: n, seconds: m.elapsed,
    pairs_per_s: n / m.elapsed, round_trips_per_pair: total / n,
    evalsha_per_pair: ((cmds.evalsha || 0) + (cmds.eval || 0)) / n, client_commands: cmds,
    client_cpu_us_per_pair: (1e6 * m.cpu) / n, client_cpu_pct: (100 * m.cpu) / m.elapsed,
    server_cpu_us_per_pair: (1e6 * m.serverCpu) / n,
    retry_interval_ms: 10, failed: m.failed,
  };
  summarize(acquire, 'acquire', line);
  summarize(release, 'release', line);
  console.log(JSON.stringify(line));
  await redis.del(`semaphore:${key}`);
  redis.disconnect();
  stats.disconnect();
}

async function serverTimeUs(redis) {
  const [s, us] = await redis.time();
  return Number(s) * 1e6 + Number(us);
}

async function rateLimiter(a) {
  const c = Number(a.concurrency || 64);
  const rate = Number(a.rate || 1000);
  const intervalMs = Number(a['interval-ms'] || 1000);
  const redis = connect(a);
  const stats = connect(a);
  const keyPrefix = `bench:rl:${process.pid}`;
  // A fixed window of `duration` seconds (granularity: whole seconds).
  const limiter = new RateLimiterRedis({
    storeClient: redis, points: rate, duration: intervalMs / 1000, keyPrefix,
  });
  process.stderr.write(`node_sync_bench: rate limiter ${c} loops, ${rate} per ${intervalMs} ms\n`);
  const latency = [];
  let admitted = 0;
  let t0 = 0;
  const m = await measured(stats, async () => {
    t0 = await serverTimeUs(stats);
    return loops(c, Number(a.seconds || 5), async () => {
      const s = nowNs();
      try {
        await limiter.consume('k', 1);
        admitted++;
      } catch (e) {
        if (e instanceof Error) throw e; // a refusal rejects with a RateLimiterRes
      }
      latency.push(Number(nowNs() - s));
    });
  });
  const t1 = await serverTimeUs(stats);
  const cmds = clientCommands(m.before, m.after,
    luaCommands(['rate-limiter-flexible/lib/RateLimiterRedis.js']));
  delete cmds.time;
  const n = latency.length;
  const total = Object.values(cmds).reduce((x, y) => x + y, 0);
  const spanUs = t1 - t0;
  const allowed = rate + Math.floor((rate * spanUs) / (1000 * intervalMs));
  const line = {
    scenario: 'rate_limiter', lib: 'rate-limiter-flexible', threads: c, rate,
    interval_ms: intervalMs, burst: rate, decisions: n, seconds: m.elapsed,
    decisions_per_s: n / m.elapsed, server_span_s: spanUs / 1e6, admitted, allowed,
    admitted_over_allowed: admitted / allowed, over_admitted: Math.max(0, admitted - allowed),
    round_trips_per_decision: total / n, client_commands: cmds,
    client_cpu_us_per_decision: (1e6 * m.cpu) / n, client_cpu_pct: (100 * m.cpu) / m.elapsed,
    server_cpu_us_per_decision: (1e6 * m.serverCpu) / n, failed: m.failed,
  };
  summarize(latency, 'decision', line);
  console.log(JSON.stringify(line));
  await redis.del(`${keyPrefix}:k`);
  redis.disconnect();
  stats.disconnect();
}

async function watchdogPermits(a) {
  const holdings = Number(a.holdings || 10000);
  const leaseMs = Number(a['lease-ms'] || 3000);
  const seconds = Number(a.seconds || 15);
  const redis = connect(a);
  const stats = connect(a);
  const key = `bench:wp:${process.pid}`;
  const held = [];
  let lost = 0;
  for (let i = 0; i < holdings; i += 64) {
    const batch = [];
    for (let j = i; j < Math.min(holdings, i + 64); j++) {
      // Each Semaphore object refreshes its own holding on its own timer
      // (every 0.8 x lockTimeout), one script call each.
      const s = new Semaphore(redis, key, holdings, {
        lockTimeout: leaseMs, onLockLost: () => { lost++; },
      });
      held.push(s);
      batch.push(s.acquire());
    }
    await Promise.all(batch);
  }
  const before = await commandCalls(stats);
  const cpu0 = process.cpuUsage();
  const t0 = nowNs();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const wall = Number(nowNs() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const after = await commandCalls(stats);
  const d = (k) => (after[k] || 0) - (before[k] || 0);
  const calls = d('evalsha') + d('eval');
  const valid = held.filter((s) => s.isAcquired).length;
  await Promise.all(held.map((s) => s.release()));
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const periodMs = Math.round(leaseMs * 0.8);
  const periods = (wall * 1000) / periodMs;
  console.log(JSON.stringify({
    scenario: 'watchdog_permits', lib: 'semaphore', holdings, watchdog_timeout_ms: leaseMs,
    period_ms: periodMs, seconds: wall, periods, script_calls: calls,
    script_calls_per_period: calls / periods, renewals: d('zadd'),
    holdings_per_call: calls ? d('zadd') / calls : 0, client_cpu_s: cpuS,
    client_cpu_pct: (100 * cpuS) / wall, holdings_valid_at_end: valid, holdings_lost: lost,
  }));
  await redis.del(`semaphore:${key}`);
  redis.disconnect();
  stats.disconnect();
}

const args = parseArgs(process.argv.slice(2));
const scenarios = { semaphore, rate_limiter: rateLimiter, watchdog_permits: watchdogPermits };
if (!scenarios[args._] || !args.port) {
  process.stderr.write('usage: node node_sync_bench.js semaphore|rate_limiter|watchdog_permits --port P\n');
  process.exit(2);
}
scenarios[args._](args).catch((e) => {
  process.stderr.write(`node_sync_bench: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});

#!/usr/bin/env node
// Peer benchmark: node `redlock` v4 and `redis-semaphore` Mutex, both on
// ioredis, run through the same scenarios as distlock-bench against the same
// server. One JSON object per line on stdout.
//
//   node node_bench.js uncontended --lib redlock|semaphore --port P
//        [--seconds S] [--concurrency 1,16,64]
//   node node_bench.js contended --lib redlock|semaphore --port P
//        [--seconds S] [--procs 2] [--workers 8] --records FILE
//   node node_bench.js watchdog --lib semaphore --port P [--seconds S]
//        [--leases 10000] [--lease-ms 3000]
//
// Uncontended: C async loops share ONE ioredis connection, each on its own
// lock name. Contended: one connection per worker, `procs` processes x
// `workers` workers on one name; the merged history is written to --records
// and analysed by contended_stats.py (the same figures as distlock-bench).
// Waiting for a held lock is polling in both libraries; both poll every 10 ms
// here (redis-semaphore's default; redlock's default is 200 ms +-100 ms).
'use strict';

const fs = require('fs');
const path = require('path');
const { fork } = require('child_process');
const Redis = require('ioredis');
const Redlock = require('redlock');
const { Mutex } = require('redis-semaphore');

const POLL_MS = 10;
const LEASE_MS = 30000;

function parseArgs(argv) {
  const out = { _: argv[0] };
  for (let i = 1; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '');
    if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) out[k] = argv[++i];
    else out[k] = '1';
  }
  return out;
}

const nowNs = () => process.hrtime.bigint(); // CLOCK_MONOTONIC, as steady_clock

function summarize(samplesNs, prefix, into) {
  const s = Float64Array.from(samplesNs).sort();
  const at = (q) => (s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] / 1000 : 0);
  let sum = 0;
  for (const v of s) sum += v;
  into[`${prefix}_p50_us`] = at(0.5);
  into[`${prefix}_p99_us`] = at(0.99);
  into[`${prefix}_p999_us`] = at(0.999);
  into[`${prefix}_max_us`] = s.length ? s[s.length - 1] / 1000 : 0;
  into[`${prefix}_mean_us`] = s.length ? sum / s.length / 1000 : 0;
}

async function serverCpu(redis) {
  const text = await redis.info('cpu');
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^used_cpu_(sys|user):([\d.]+)/.exec(line);
    if (m) total += Number(m[2]);
  }
  return total;
}

async function commandCalls(redis) {
  const text = await redis.info('commandstats');
  const out = {};
  for (const line of text.split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

// Commands a library runs inside its Lua scripts: Redis counts them in
// commandstats too, but they are not round trips.
function luaCommands(lib) {
  const root = path.join(__dirname, 'node_modules');
  const files = lib === 'redlock'
    ? [path.join(root, 'redlock', 'redlock.js')]
    : fs.readdirSync(path.join(root, 'redis-semaphore', 'lib', 'mutex'))
      .filter((f) => f.endsWith('.js'))
      .map((f) => path.join(root, 'redis-semaphore', 'lib', 'mutex', f));
  const names = new Set();
  for (const f of files) {
    for (const m of fs.readFileSync(f, 'utf8').matchAll(/redis\.p?call\(\s*['"]([A-Za-z]+)['"]/g)) {
      names.add(m[1].toLowerCase());
    }
  }
  return names;
}

function clientCommands(before, after, inside) {
  const out = {};
  for (const [name, calls] of Object.entries(after)) {
    const d = calls - (before[name] || 0);
    if (d > 0 && name !== 'info' && !inside.has(name)) out[name] = d;
  }
  return out;
}

// A lock of either library behind one shape: acquire(name) -> handle,
// release(handle).
function makeLocker(lib, redis) {
  if (lib === 'redlock') {
    const rl = new Redlock([redis], { retryCount: -1, retryDelay: POLL_MS, retryJitter: POLL_MS / 2 });
    rl.on('clientError', () => {});
    return { acquire: (name) => rl.lock(name, LEASE_MS), release: (h) => h.unlock() };
  }
  const mutexes = new Map();
  return {
    acquire: async (name) => {
      let m = mutexes.get(name);
      if (!m) {
        m = new Mutex(redis, name, { lockTimeout: LEASE_MS, acquireTimeout: 60000, retryInterval: POLL_MS });
        mutexes.set(name, m);
      }
      await m.acquire();
      return m;
    },
    release: (m) => m.release(),
  };
}

async function uncontended(a) {
  const lib = a.lib;
  const seconds = Number(a.seconds || 5);
  const redis = new Redis({ host: a.host || '127.0.0.1', port: Number(a.port) });
  const stats = new Redis({ host: a.host || '127.0.0.1', port: Number(a.port) });
  const inside = luaCommands(lib);
  const locker = makeLocker(lib, redis);
  for (const c of (a.concurrency || '1,16,64').split(',').map(Number)) {
    process.stderr.write(`node_bench: uncontended ${lib} ${c}\n`);
    const acquire = [];
    const release = [];
    const before = await commandCalls(stats);
    const serverCpu0 = await serverCpu(stats);
    const cpu0 = process.cpuUsage();
    const ru0 = process.resourceUsage();
    const start = nowNs();
    const deadline = start + BigInt(Math.round(seconds * 1e9));
    let failed = false;
    const worker = async (w) => {
      const name = `bench:u:${process.pid}:${lib}:${c}:${w}`;
      for (let i = 0; i < 20000000 && nowNs() < deadline; i++) {
        const t0 = nowNs();
        const h = await locker.acquire(name);
        const t1 = nowNs();
        await locker.release(h);
        const t2 = nowNs();
        acquire.push(Number(t1 - t0));
        release.push(Number(t2 - t1));
      }
    };
    await Promise.all(Array.from({ length: c }, (_, w) => worker(w).catch((e) => {
      failed = true;
      process.stderr.write(`node_bench: ${e}\n`);
    })));
    const elapsed = Number(nowNs() - start) / 1e9;
    const cpuUsed = process.cpuUsage(cpu0);
    const ru1 = process.resourceUsage();
    const switches = ru1.voluntaryContextSwitches + ru1.involuntaryContextSwitches
      - ru0.voluntaryContextSwitches - ru0.involuntaryContextSwitches;
    const cpu = (cpuUsed.user + cpuUsed.system) / 1e6;
    const serverCpuUsed = (await serverCpu(stats)) - serverCpu0;
    const cmds = clientCommands(before, await commandCalls(stats), inside);
    const n = acquire.length;
    const total = Object.values(cmds).reduce((x, y) => x + y, 0);
    const line = {
      scenario: 'uncontended', lib, threads: c, pairs: n, seconds: elapsed, pairs_per_s: n / elapsed,
      round_trips_per_pair: total / n, evalsha_per_pair: (cmds.evalsha || 0) / n,
      eval_per_pair: (cmds.eval || 0) / n, client_commands: cmds,
      client_cpu_pct: (100 * cpu) / elapsed, server_cpu_pct: (100 * serverCpuUsed) / elapsed,
      client_cpu_us_per_pair: (1e6 * cpu) / n, server_cpu_us_per_pair: (1e6 * serverCpuUsed) / n,
      context_switches_per_pair: switches / n,
      failed,
    };
    summarize(acquire, 'acquire', line);
    summarize(release, 'release', line);
    console.log(JSON.stringify(line));
  }
  redis.disconnect();
  stats.disconnect();
}

async function contendedChild(a) {
  const proc = Number(a.proc);
  const startAt = BigInt(a['start-at']);
  const endAt = startAt + BigInt(Math.round(Number(a.seconds) * 1e9));
  const records = [];
  let failures = 0;
  const worker = async (w) => {
    const redis = new Redis({ host: a.host || '127.0.0.1', port: Number(a.port) });
    await redis.ping();
    const locker = makeLocker(a.lib, redis);
    while (nowNs() < startAt) await new Promise((r) => setTimeout(r, 1));
    for (let i = 0; i < 10000000 && nowNs() < endAt; i++) {
      const call = nowNs();
      let h;
      try {
        h = await locker.acquire(a.name);
      } catch (e) {
        failures++;
        continue;
      }
      const acq = nowNs();
      const v = await redis.get(a.counter);
      await redis.set(a.counter, Number(v || 0) + 1);
      const rel = nowNs();
      await locker.release(h);
      records.push(`${proc} ${w} ${call} ${acq} ${rel}`);
    }
    redis.disconnect();
  };
  await Promise.all(Array.from({ length: Number(a.workers) }, (_, w) => worker(w)));
  fs.writeFileSync(a.out, records.join('\n') + (records.length ? '\n' : ''));
  process.exit(failures === 0 ? 0 : 3);
}

async function contended(a) {
  const procs = Number(a.procs || 2);
  const workers = Number(a.workers || 8);
  const seconds = Number(a.seconds || 10);
  const redis = new Redis({ host: a.host || '127.0.0.1', port: Number(a.port) });
  const name = `bench:c:${process.pid}:${a.lib}`;
  const counter = `${name}:counter`;
  await redis.del(name, `mutex:${name}`);
  await redis.set(counter, 0);
  const startAt = nowNs() + 2000000000n; // children connect first
  const files = [];
  const children = [];
  for (let p = 0; p < procs; p++) {
    files.push(`${a.records}.${p}`);
    const args = ['contended-child', '--lib', a.lib, '--port', a.port, '--host', a.host || '127.0.0.1',
      '--name', name, '--counter', counter, '--workers', String(workers), '--proc', String(p),
      '--start-at', String(startAt), '--seconds', String(seconds), '--out', files[p]];
    children.push(new Promise((resolve) => {
      const child = fork(__filename, args);
      const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 60) * 1000);
      child.on('exit', (code) => { clearTimeout(timer); resolve(code === 0); });
    }));
  }
  const ok = (await Promise.all(children)).every(Boolean);
  let merged = '';
  for (const f of files) {
    if (fs.existsSync(f)) merged += fs.readFileSync(f, 'utf8');
    fs.rmSync(f, { force: true });
  }
  fs.writeFileSync(a.records, merged);
  const final = Number((await redis.get(counter)) || 0);
  await redis.del(counter);
  redis.disconnect();
  // contended_stats.py adds the history's figures to this line.
  console.log(JSON.stringify({
    scenario: 'contended', lib: a.lib, procs, threads_per_proc: workers, seconds,
    counter_final: final, children_ok: ok, records: a.records,
  }));
}

async function watchdog(a) {
  const leases = Number(a.leases || 10000);
  const leaseMs = Number(a['lease-ms'] || 3000);
  const seconds = Number(a.seconds || 15);
  const redis = new Redis({ host: a.host || '127.0.0.1', port: Number(a.port) });
  const stats = new Redis({ host: a.host || '127.0.0.1', port: Number(a.port) });
  const held = [];
  let lost = 0;
  const prefix = `bench:w:${process.pid}:`;
  for (let i = 0; i < leases; i += 64) {
    const batch = [];
    for (let j = i; j < Math.min(leases, i + 64); j++) {
      // redis-semaphore renews each mutex on its own timer (0.8 x lockTimeout).
      const m = new Mutex(redis, prefix + j, { lockTimeout: leaseMs, onLockLost: () => { lost++; } });
      held.push(m);
      batch.push(m.acquire());
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
  const valid = held.filter((m) => m.isAcquired).length;
  await Promise.all(held.map((m) => m.release()));
  const cpuS = (cpu.user + cpu.system) / 1e6;
  console.log(JSON.stringify({
    scenario: 'watchdog', lib: 'semaphore', leases, watchdog_timeout_ms: leaseMs, seconds: wall,
    script_calls: calls, script_calls_per_s: calls / wall, renewals: d('pexpire'),
    leases_per_call: calls ? d('pexpire') / calls : 0, client_cpu_s: cpuS,
    client_cpu_pct: (100 * cpuS) / wall, leases_valid_at_end: valid, leases_lost: lost,
  }));
  redis.disconnect();
  stats.disconnect();
}

// node_sync_bench.js (the synchronizer peers) shares these helpers.
module.exports = { parseArgs, nowNs, summarize, serverCpu, commandCalls, clientCommands };

if (require.main === module) {
  const args = parseArgs(process.argv.slice(2));
  const scenarios = { uncontended, contended, 'contended-child': contendedChild, watchdog };
  if (!scenarios[args._] || !args.port) {
    process.stderr.write('usage: node node_bench.js uncontended|contended|watchdog --lib redlock|semaphore --port P\n');
    process.exit(2);
  }
  scenarios[args._](args).catch((e) => {
    process.stderr.write(`node_bench: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  });
}

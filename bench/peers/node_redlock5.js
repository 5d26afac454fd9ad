#!/usr/bin/env node
// Peer for bench/redlock_bench: node `redlock` v4 over N independent masters
// (one ioredis connection each).
//
//   node node_redlock5.js [uncontended] --ports 1,2,3,4,5 [--seconds 3] [--concurrency 1]
//     C async loops each locking and unlocking its own name for S seconds
//     (retryCount 0). Prints one JSON line: pairs/s and acquire p50/p99.
//   node node_redlock5.js contended --ports ... --procs 2 --workers 8 --seconds S
//        --name N --counter K --retry-delay D --retry-jitter J [--think-ms T]
//        --records FILE
//     Forks `procs` processes, each with ONE Redlock over the masters shared
//     by `workers` async workers, all on the one name N, for S seconds from a
//     common start. Waiting is redlock's retry: retryCount -1 (until got),
//     retryDelay D +- retryJitter J ms. Each acquisition does GET + SET of the
//     counter K on the first master, and after its release a worker waits T
//     ms (default 0) before it asks again. Writes the merged history to FILE, one
//     line per acquisition: `proc worker call acquired release_call
//     release_return`, in CLOCK_MONOTONIC ns (process.hrtime, the clock of
//     redlock_bench's own records), and redlock_bench computes the figures
//     with the same code as its own. Exit 0 when every worker finished
//     without error.
'use strict';
const fs = require('fs');
const { fork } = require('child_process');
const Redis = require('ioredis');
const Redlock = require('redlock');

const LEASE_MS = 30000;

function parseArgs(argv) {
  const out = { _: 'uncontended' };
  let i = 0;
  if (argv.length && !argv[0].startsWith('--')) out._ = argv[i++];
  for (; i + 1 < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  return out;
}

const nowNs = () => process.hrtime.bigint();

async function uncontended(args) {
  const ports = args.ports.split(',').map(Number);
  const seconds = Number(args.seconds || 3);
  const concurrency = Number(args.concurrency || 1);
  const clients = ports.map((port) => new Redis({ host: '127.0.0.1', port }));
  const rl = new Redlock(clients, { retryCount: 0, driftFactor: 0.01 });
  rl.on('clientError', () => {});
  const acquire = [];
  let errors = 0;
  const deadline = nowNs() + BigInt(Math.round(seconds * 1e9));
  const start = nowNs();
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
    const name = `bench:rl:node:${process.pid}:${w}`;
    while (nowNs() < deadline) {
      const t0 = nowNs();
      try {
        const lock = await rl.lock(name, LEASE_MS);
        acquire.push(Number(nowNs() - t0));
        await lock.unlock();
      } catch (e) {
        errors++;
      }
    }
  }));
  const elapsed = Number(nowNs() - start) / 1e9;
  const s = Float64Array.from(acquire).sort();
  const at = (q) => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] / 1000 : 0);
  console.log(JSON.stringify({ scenario: 'uncontended', lib: 'node-redlock', concurrency,
    pairs: s.length, errors, pairs_per_s: s.length / elapsed, acquire_p50_us: at(0.5),
    acquire_p99_us: at(0.99) }));
  for (const c of clients) c.disconnect();
}

async function contendedChild(a) {
  const ports = a.ports.split(',').map(Number);
  const proc = Number(a.proc);
  const startAt = BigInt(a['start-at']);
  const endAt = startAt + BigInt(Math.round(Number(a.seconds) * 1e9));
  const clients = ports.map((port) => new Redis({ host: '127.0.0.1', port }));
  const counter = new Redis({ host: '127.0.0.1', port: ports[0] });
  await Promise.all([...clients, counter].map((c) => c.ping()));
  const rl = new Redlock(clients, {
    driftFactor: 0.01, retryCount: -1,
    retryDelay: Number(a['retry-delay']), retryJitter: Number(a['retry-jitter']),
  });
  rl.on('clientError', () => {});
  const think = Number(a['think-ms'] || 0);
  const records = [];
  let failures = 0;
  const worker = async (w) => {
    while (nowNs() < startAt) await new Promise((r) => setTimeout(r, 1));
    while (nowNs() < endAt) {
      const call = nowNs();
      let lock;
      try {
        lock = await rl.lock(a.name, LEASE_MS);
      } catch (e) {
        failures++;
        continue;
      }
      const acq = nowNs();
      const v = await counter.get(a.counter);
      await counter.set(a.counter, Number(v || 0) + 1);
      const relCall = nowNs();
      try {
        await lock.unlock();
      } catch (e) {
        failures++;
      }
      records.push(`${proc} ${w} ${call} ${acq} ${relCall} ${nowNs()}`);
      if (think > 0) await new Promise((r) => setTimeout(r, think));
    }
  };
  await Promise.all(Array.from({ length: Number(a.workers) }, (_, w) => worker(w)));
  fs.writeFileSync(a.out, records.join('\n') + (records.length ? '\n' : ''));
  for (const c of [...clients, counter]) c.disconnect();
  process.exit(failures === 0 ? 0 : 3);
}

async function contended(a) {
  const procs = Number(a.procs || 2);
  const seconds = Number(a.seconds || 10);
  const startAt = nowNs() + 1500000000n; // children connect first
  const files = [];
  const children = [];
  for (let p = 0; p < procs; p++) {
    files.push(`${a.records}.${p}`);
    const args = ['contended-child', '--ports', a.ports, '--name', a.name, '--counter', a.counter,
      '--workers', String(a.workers || 8), '--proc', String(p), '--start-at', String(startAt),
      '--seconds', String(seconds), '--retry-delay', String(a['retry-delay']),
      '--retry-jitter', String(a['retry-jitter']), '--think-ms', String(a['think-ms'] || 0),
      '--out', files[p]];
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
  process.exit(ok ? 0 : 1);
}

const args = parseArgs(process.argv.slice(2));
const modes = { uncontended, contended, 'contended-child': contendedChild };
if (!modes[args._] || !args.ports) {
  process.stderr.write('usage: node node_redlock5.js [uncontended|contended] --ports P1,...\n');
  process.exit(2);
}
modes[args._](args).catch((e) => {
  process.stderr.write(`node_redlock5: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});

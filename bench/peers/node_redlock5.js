#!/usr/bin/env node
// Peer for bench/redlock_bench: node `redlock` v4 over N independent masters
// (one ioredis connection each), C async loops each locking and unlocking its
// own name for S seconds. Prints one JSON line: pairs/s and acquire p50/p99.
//   node node_redlock5.js --ports 1,2,3,4,5 [--seconds 3] [--concurrency 1]
'use strict';
const Redis = require('ioredis');
const Redlock = require('redlock');

const args = {};
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const ports = args.ports.split(',').map(Number);
const seconds = Number(args.seconds || 3);
const concurrency = Number(args.concurrency || 1);

(async () => {
  const clients = ports.map((port) => new Redis({ host: '127.0.0.1', port }));
  const rl = new Redlock(clients, { retryCount: 0, driftFactor: 0.01 });
  rl.on('clientError', () => {});
  const acquire = [];
  let errors = 0;
  const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
    const name = `bench:rl:node:${process.pid}:${w}`;
    while (process.hrtime.bigint() < deadline) {
      const t0 = process.hrtime.bigint();
      try {
        const lock = await rl.lock(name, 30000);
        acquire.push(Number(process.hrtime.bigint() - t0));
        await lock.unlock();
      } catch (e) {
        errors++;
      }
    }
  }));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  const s = Float64Array.from(acquire).sort();
  const at = (q) => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] / 1000 : 0);
  console.log(JSON.stringify({ lib: 'node-redlock', concurrency, pairs: s.length, errors,
    pairs_per_s: s.length / elapsed, acquire_p50_us: at(0.5), acquire_p99_us: at(0.99) }));
  for (const c of clients) c.disconnect();
})();

-- Configures a rate limiter, only when none is configured.
-- KEYS[1] the limiter's hash; ARGV[1] permits (> 0), ARGV[2] interval in
-- milliseconds (> 0). Returns 1 when set, 0 when a rate was already set.
-- Layout (docs/rate_limiter.md): rate, interval (ms), debt, ts. GCRA with
-- integer arithmetic: `debt` is (theoretical arrival time - ts) * rate in
-- microseconds, `ts` the server's TIME in microseconds when debt was written.
if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
redis.call('hset', KEYS[1], 'rate', ARGV[1], 'interval', ARGV[2], 'debt', '0', 'ts', '0')
return 1

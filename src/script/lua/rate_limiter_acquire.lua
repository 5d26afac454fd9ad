-- One attempt to take ARGV[1] permits (n > 0) of the limiter KEYS[1], on the
-- server's clock (GCRA, burst = the rate). Everything is an integer below
-- 2^53, so Lua's doubles are exact (try_set_rate bounds rate * interval).
-- Returns {1, 0} taken; {0, wait_ms} refused, a permit of n is due in
-- wait_ms (rounded up); {-1, 0} no rate set; {-2, rate} n > rate.
-- A refusal writes nothing.
local cfg = redis.call('hmget', KEYS[1], 'rate', 'interval', 'debt', 'ts')
if not cfg[1] then
  return {-1, 0}
end
local rate = tonumber(cfg[1])
local n = tonumber(ARGV[1])
if n > rate then
  return {-2, rate}
end
local interval = tonumber(cfg[2]) * 1000
local t = redis.call('time')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local elapsed = now - tonumber(cfg[4])
if elapsed < 0 then
  elapsed = 0
end
local debt = 0
if elapsed < interval then
  debt = math.max(0, tonumber(cfg[3]) - elapsed * rate)
end
local need = debt + n * interval
local cap = interval * rate
if need <= cap then
  redis.call('hset', KEYS[1], 'debt', string.format('%.0f', need), 'ts', string.format('%.0f', now))
  return {1, 0}
end
local wait_us = math.ceil((need - cap) / rate)
return {0, math.ceil(wait_us / 1000)}

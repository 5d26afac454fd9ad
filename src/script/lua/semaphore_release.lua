-- Give back permits a holder holds. KEYS as semaphore_acquire.lua.
-- ARGV[1]  the holder
-- ARGV[2]  n, or '0' for all it holds
-- ARGV[3]  '1' retires the holder: it also gives back any rest (permits of
--          an acquire whose reply was lost) and its lease entry goes
-- ARGV[4]  the channel: the number given back is published there
-- Expired holders are given back first (as in semaphore_acquire.lua).
-- Returns the number given back (>= 1); -1 the holder holds nothing (its
-- lease ended, or it never held); -2 it holds fewer than n. Both change
-- nothing of the holder's.
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local back = 0
for _, h in ipairs(redis.call('zrangebyscore', KEYS[2], '-inf', now)) do
  back = back + (tonumber(redis.call('hget', KEYS[3], h)) or 0)
  redis.call('hdel', KEYS[3], h)
  redis.call('zrem', KEYS[2], h)
end
if back > 0 then
  redis.call('incrby', KEYS[1], back)
  redis.call('publish', ARGV[4], back)
end
local held = tonumber(redis.call('hget', KEYS[3], ARGV[1]))
if not held then
  if ARGV[3] == '1' then redis.call('zrem', KEYS[2], ARGV[1]) end
  return -1
end
local n = tonumber(ARGV[2])
if n == 0 then n = held end
if n > held then return -2 end
local give = n
if ARGV[3] == '1' then give = held end
if held - give == 0 then
  redis.call('hdel', KEYS[3], ARGV[1])
  if ARGV[3] == '1' then redis.call('zrem', KEYS[2], ARGV[1]) end
else
  redis.call('hset', KEYS[3], ARGV[1], held - give)
end
redis.call('incrby', KEYS[1], give)
redis.call('publish', ARGV[4], give)
return give

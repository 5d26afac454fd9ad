-- Give back permits a holder holds. KEYS[1..3] as semaphore_acquire.lua.
-- ARGV[1]  the holder
-- ARGV[2]  n, or '0' for all it holds
-- ARGV[3]  '1' retires the holder: it also gives back any rest (permits of
--          an acquire whose reply was lost) and its lease entry goes
-- ARGV[4]  the channel: the number given back is published there
-- Returns the number given back (>= 1); -1 the holder holds nothing (its
-- lease ended and its permits were reclaimed, or it never held); -2 it holds
-- fewer than n. Both change nothing of the holder's (but -1 with '1' clears
-- what is left of it). A holder whose lease ended but whose permits no one
-- has reclaimed yet (semaphore_acquire.lua reclaims only when short) still
-- holds them: no one else got them, and this gives them back.
local h, n, retire = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1'
local field = redis.call('hget', KEYS[3], h)
local held
local removed = false
if field then
  held = tonumber(field)
elseif retire and n <= 1 then
  -- Without a field a holder holds 1: removing it is the whole release.
  held = redis.call('zrem', KEYS[2], h)
  removed = true
elseif redis.call('zscore', KEYS[2], h) then
  held = 1
else
  held = 0
end
if held == 0 then
  if retire then
    if field then redis.call('hdel', KEYS[3], h) end
    if not removed then redis.call('zrem', KEYS[2], h) end
  end
  return -1
end
if n == 0 then n = held end
if n > held then return -2 end
local give = n
if retire then
  give = held
  if field then redis.call('hdel', KEYS[3], h) end
  if not removed then redis.call('zrem', KEYS[2], h) end
else
  redis.call('hset', KEYS[3], h, held - give)
end
redis.call('incrby', KEYS[1], give)
redis.call('publish', ARGV[4], give)
return give

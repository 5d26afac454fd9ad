-- The semaphore's counter operations. KEYS as semaphore_acquire.lua.
-- ARGV[1]  'set': sets the available permits to ARGV[2] unless the name
--                 exists; returns 1 when it set them, else 0
--          'add': adds ARGV[2] (may be negative); returns the new value
--          'drain': takes every available permit; returns how many (0 when
--                 none or negative)
--          'get': returns the available permits
-- ARGV[2]  the value ('set', 'add'), ARGV[3] the channel: a positive
--          'set' or 'add' publishes the permits it made available
-- Every op but 'set' first gives back the permits of holders whose lease
-- has ended (as semaphore_acquire.lua does when short, here at most 1000 of
-- each layout per call).
local op = ARGV[1]
if op == 'set' then
  if redis.call('exists', KEYS[1]) == 1 then return 0 end
  redis.call('set', KEYS[1], ARGV[2])
  if tonumber(ARGV[2]) > 0 then redis.call('publish', ARGV[3], ARGV[2]) end
  return 1
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local back = 0
for k = 2, 4, 2 do
  local gone = redis.call('zrangebyscore', KEYS[k], '-inf', now, 'limit', 0, 1000)
  if #gone > 0 then
    local counts = redis.call('hmget', KEYS[k + 1], unpack(gone))
    local implicit = 0
    if k == 2 then implicit = 1 end
    for i = 1, #gone do
      back = back + (tonumber(counts[i]) or implicit)
    end
    redis.call('hdel', KEYS[k + 1], unpack(gone))
    redis.call('zrem', KEYS[k], unpack(gone))
  end
end
if back > 0 then
  redis.call('incrby', KEYS[1], back)
  redis.call('publish', ARGV[3], back)
end
if op == 'add' then
  local v = redis.call('incrby', KEYS[1], ARGV[2])
  if tonumber(ARGV[2]) > 0 then redis.call('publish', ARGV[3], ARGV[2]) end
  return v
end
local available = tonumber(redis.call('get', KEYS[1]) or '0')
if op == 'drain' then
  if available <= 0 then return 0 end
  redis.call('decrby', KEYS[1], available)
  return available
end
return available

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
-- has ended (as in semaphore_acquire.lua).
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
for _, h in ipairs(redis.call('zrangebyscore', KEYS[2], '-inf', now)) do
  back = back + (tonumber(redis.call('hget', KEYS[3], h)) or 0)
  redis.call('hdel', KEYS[3], h)
  redis.call('zrem', KEYS[2], h)
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

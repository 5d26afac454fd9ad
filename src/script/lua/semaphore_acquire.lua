-- Take n permits of a semaphore for a holder, all or nothing.
-- KEYS[1]  the semaphore's name: its available permits (a string integer, as
--          Redisson's RSemaphore; may be negative)
-- KEYS[2]  holders' leases: zset holder -> lease deadline in server ms
-- KEYS[3]  holders' counts: hash holder -> permits held
-- ARGV[1]  the holder, ARGV[2] n (> 0), ARGV[3] lease in ms, ARGV[4] channel
-- First gives back the permits of every holder whose lease has ended on the
-- server's clock (a crashed holder's), publishing their number. Returns nil
-- when it took n; otherwise the ms until the earliest holder lease ends (-1
-- when there is none), and takes nothing.
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
local n = tonumber(ARGV[2])
if tonumber(redis.call('get', KEYS[1]) or '0') >= n then
  redis.call('decrby', KEYS[1], n)
  redis.call('hincrby', KEYS[3], ARGV[1], n)
  redis.call('zadd', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
  return false
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
if first[2] then
  return math.max(0, tonumber(first[2]) - now)
end
return -1

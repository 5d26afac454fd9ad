-- Take n permits of a semaphore for a holder, all or nothing.
-- KEYS[1]  the semaphore's name: its available permits (a string integer, as
--          Redisson's RSemaphore; may be negative)
-- KEYS[2]  holders: zset holder -> lease deadline in server ms
-- KEYS[3]  counts: hash holder -> permits held, only for a holder that holds
--          other than 1 (a holder of KEYS[2] without a field holds 1)
-- KEYS[4]  the earlier layout's zset holder -> lease deadline, and
-- KEYS[5]  its hash holder -> permits held (every holder has a field): its
--          holders are only reclaimed here, never added
-- ARGV[1]  the holder, ARGV[2] n (> 0), ARGV[3] lease in ms, ARGV[4] channel
-- Takes n when that many are available. Only otherwise does it give back the
-- permits of holders whose lease has ended on the server's clock (a crashed
-- holder's; at most 100 of each layout per call), publishing the number the
-- others may still take, and then takes n if it can. A holder that holds
-- already keeps one lease for all its permits: its deadline moves to now +
-- the lease. Returns nil when it took n; otherwise the ms until the earliest
-- holder lease ends (-1 when there is none), and takes nothing.
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = tonumber(ARGV[2])
local available = tonumber(redis.call('get', KEYS[1]) or '0')
if available < n then
  local back = 0
  for k = 2, 4, 2 do
    local gone = redis.call('zrangebyscore', KEYS[k], '-inf', now, 'limit', 0, 100)
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
  if back > 0 then redis.call('incrby', KEYS[1], back) end
  available = available + back
  if available < n then
    if back > 0 then redis.call('publish', ARGV[4], back) end
    local wait = -1
    for k = 2, 4, 2 do
      local first = redis.call('zrange', KEYS[k], 0, 0, 'withscores')
      if first[2] then
        local w = math.max(0, tonumber(first[2]) - now)
        if wait < 0 or w < wait then wait = w end
      end
    end
    return wait
  end
  if back > 0 and available > n then
    redis.call('publish', ARGV[4], math.min(back, available - n))
  end
end
redis.call('decrby', KEYS[1], n)
if redis.call('zadd', KEYS[2], now + tonumber(ARGV[3]), ARGV[1]) == 0 then
  local held = tonumber(redis.call('hget', KEYS[3], ARGV[1])) or 1
  redis.call('hset', KEYS[3], ARGV[1], held + n)
elseif n ~= 1 then
  redis.call('hset', KEYS[3], ARGV[1], n)
end
return false

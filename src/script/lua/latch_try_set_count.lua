-- Sets a countdown latch's count, only when none is set (Redisson's
-- RCountDownLatch.trySetCount layout: the string key holds the count).
-- KEYS[1] latch key, KEYS[2] its channel; ARGV[1] the count (>= 0).
-- Returns 1 when set (and publishes "1", Redisson's new-count message), 0
-- when a count was already set.
if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
redis.call('set', KEYS[1], ARGV[1])
redis.call('publish', KEYS[2], '1')
return 1

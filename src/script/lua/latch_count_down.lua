-- Counts a latch down by one (Redisson's RCountDownLatch.countDown). At or
-- below zero the key is deleted (an absent key is an open latch), so a
-- count-down of an open latch changes nothing; reaching exactly zero
-- publishes "0" (Redisson's zero-count message), which wakes every waiter.
-- KEYS[1] latch key, KEYS[2] its channel. Returns the count after it.
local v = redis.call('decr', KEYS[1])
if v <= 0 then
  redis.call('del', KEYS[1])
end
if v == 0 then
  redis.call('publish', KEYS[2], '0')
end
return v

-- One attempt of a latch wait: the count (0 when the key is absent, i.e. the
-- latch was never set or has reached zero). KEYS[1] latch key.
local v = redis.call('get', KEYS[1])
if not v then
  return 0
end
return tonumber(v)

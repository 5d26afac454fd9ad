-- How many permits the limiter KEYS[1] would give now (server's clock);
-- -1 when no rate is set. Reads only.
local cfg = redis.call('hmget', KEYS[1], 'rate', 'interval', 'debt', 'ts')
if not cfg[1] then
  return -1
end
local rate = tonumber(cfg[1])
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
return math.floor((interval * rate - debt) / interval)

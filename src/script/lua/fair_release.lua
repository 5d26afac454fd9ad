#!lua flags=allow-oom
-- allow-oom (Redis 7): a release only frees memory (see release.lua).
-- Release one hold of a fair lock, leave its queue, or force it free; a
-- freed lock is GRANTED to the first live waiter at once: the hash is set to
-- that waiter (with a TTL of what remains of its liveness lease, so a grant
-- to a dead waiter lapses), and the grant is published on that waiter's own
-- channel, with its fencing token. See docs/fair_lock.md.
-- KEYS[1..3] the lock hash, the queue, the liveness zset (see fair_acquire.lua)
-- KEYS[4]    with ARGV[6]: the holder's lock-delay marker: a partial unlock
--            keeps it the delay longer than the lease; a release, a late
--            grant given back and a forced release delete it (none of them
--            arms a delay). Without: as KEYS[5]
-- KEYS[5]    (fenced locks only) the fencing counter
-- ARGV[1]  lease in milliseconds: a partial unlock re-arms it
-- ARGV[2]  owner id
-- ARGV[3]  the owner's hold count before this release (idempotent per call)
-- ARGV[4]  the waiters' channel prefix: a waiter's channel is <prefix>:<owner>
-- ARGV[5]  'r' release, 'l' leave the queue (and give back a grant that came
--          too late when ARGV[3] is '1'), 'f' force: free it whoever holds it
-- ARGV[6]  (optional) 'd': KEYS[4] is the marker
-- Returns as release.lua: -1 not held by this owner, 0 decremented, 1
-- released (or a late grant given back, or forced), 2 already applied.
local marker, fence = nil, KEYS[4]
if ARGV[6] then marker, fence = KEYS[4], KEYS[5] end

local function grant_next()
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local head = redis.call('lindex', KEYS[2], 0)
  while head do
    local alive = redis.call('zscore', KEYS[3], head)
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], head)
    if alive and tonumber(alive) > now then
      redis.call('hset', KEYS[1], head, 1)
      redis.call('pexpire', KEYS[1], tonumber(alive) - now)
      local payload = 'g'
      if fence ~= nil then payload = 'g:' .. redis.call('incr', fence) end
      redis.call('publish', ARGV[4] .. ':' .. head, payload)
      return
    end
    head = redis.call('lindex', KEYS[2], 0)
  end
end

local owner = ARGV[2]
if ARGV[5] == 'f' then
  if marker then redis.call('del', marker) end
  local held = redis.call('del', KEYS[1]) == 1
  grant_next()
  return held and 1 or -1
end
if ARGV[5] == 'l' then
  redis.call('lrem', KEYS[2], 0, owner)
  redis.call('zrem', KEYS[3], owner)
  if ARGV[3] == '1' and redis.call('hget', KEYS[1], owner) == '1' then
    redis.call('del', KEYS[1])
    if marker then redis.call('del', marker) end
    grant_next()
    return 1
  end
  return -1
end
local count = redis.call('hget', KEYS[1], owner)
if not count then
  return -1
end
if tonumber(count) ~= tonumber(ARGV[3]) then
  return 2
end
if tonumber(count) > 1 then
  redis.call('hincrby', KEYS[1], owner, -1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  local delay = marker and redis.call('get', marker)
  if delay then redis.call('pexpire', marker, tonumber(ARGV[1]) + tonumber(delay)) end
  return 0
end
redis.call('del', KEYS[1])
if marker then redis.call('del', marker) end
grant_next()
return 1

-- Renew many holdings in one call (the watchdog's batch), or only check them.
-- Holdings of any primitive and any lease length share a batch. A kind is a
-- layout (runtime::Renewal::Kind), not a primitive: a new primitive picks the
-- kind its layout matches; only a new layout adds a branch here.
-- KEYS[2i-1]   the holding's key (one slot per call in Cluster)
-- KEYS[2i]     a second key its kind uses (the first again when none)
-- ARGV[3i-2]   its kind: 'h' the hash KEYS[2i-1] has the field ARGV[3i-1] (a
--              lock's owner), 's' the string KEYS[2i-1] equals ARGV[3i-1] (a
--              SET NX lock's token), 'q' the zset KEYS[2i-1] has the member
--              ARGV[3i-1] (a fair lock's waiting place): its score becomes the
--              server's TIME + the lease, and the zset and the queue KEYS[2i]
--              live at least that long, 'r' a read-write lock's hold: the hash
--              KEYS[2i-1] has the field ARGV[3i-1]; for a read hold KEYS[2i]
--              is its timeout-key prefix and at least one of its timeout
--              keys KEYS[2i]:1..count must be left (all are extended), for a
--              write hold KEYS[2i] is the hash again; the hash's PEXPIRE is
--              only ever lengthened (it is the longest hold's), 'p' a
--              semaphore holder: the zset KEYS[2i-1] gives ARGV[3i-1] a lease
--              deadline (server ms) not yet passed; it becomes TIME + the
--              lease (the keys have no expiry of their own); 'H', 'S' and
--              'W' as 'h', 's' and an 'r' write hold for a holder with a
--              lock-delay: KEYS[2i] is its marker (acquire.lua), which a
--              renewal keeps its delay (the marker's value) longer than the
--              lease
-- ARGV[3i-1]   that field or value
-- ARGV[3i]     lease in milliseconds; "0" checks without extending (fixed
--              leases, after a reconnect)
-- Returns an array: 1 renewed (or still held), 0 no longer held. A key of the
-- wrong type counts as not held, and does not fail the rest of the batch.
local result = {}
for i = 1, #ARGV / 3 do
  local key = KEYS[2 * i - 1]
  local kind, member, ttl = ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i]
  local held = false
  local marker = nil
  if kind == 'H' or kind == 'S' or kind == 'W' then
    marker = KEYS[2 * i]
    kind = kind == 'W' and 'r' or string.lower(kind)
  end
  if kind == 'h' then
    held = redis.pcall('hexists', key, member) == 1
  elseif kind == 's' then
    held = redis.pcall('get', key) == member
  elseif kind == 'q' then
    held = type(redis.pcall('zscore', key, member)) == 'string'
    if held and ttl ~= '0' then
      local t = redis.call('time')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      redis.call('zadd', key, now + tonumber(ttl), member)
      for _, k in ipairs({key, KEYS[2 * i]}) do
        if redis.call('pttl', k) < tonumber(ttl) then redis.call('pexpire', k, ttl) end
      end
    end
    ttl = '0'  -- extended above: the PEXPIRE below is for the other kinds
  elseif kind == 'r' then
    local count = tonumber(redis.pcall('hget', key, member))
    local key2 = marker and key or KEYS[2 * i]  -- 'W': a write hold
    if key2 == key then
      held = count ~= nil
    else
      for n = 1, (count or 0) do
        if redis.call('exists', key2 .. ':' .. n) == 1 then
          held = true
          if ttl ~= '0' then
            redis.call('pexpire', key2 .. ':' .. n, ttl)
          end
        end
      end
    end
    if held and ttl ~= '0' and redis.call('pttl', key) < tonumber(ttl) then
      redis.call('pexpire', key, ttl)
    end
  elseif kind == 'p' then
    local score = redis.pcall('zscore', key, member)
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    held = type(score) == 'string' and tonumber(score) > now
    if held and ttl ~= '0' then redis.call('zadd', key, now + tonumber(ttl), member) end
    ttl = '0'  -- the zset has no expiry: a past deadline is what ends a holder
  end
  -- ('r' extended its keys itself, never shortening the hash.)
  if held and ttl ~= '0' and kind ~= 'r' then
    redis.call('pexpire', key, ttl)
  end
  if held and ttl ~= '0' and marker then
    local delay = redis.call('get', marker)
    if delay then redis.call('pexpire', marker, tonumber(ttl) + tonumber(delay)) end
  end
  result[i] = held and 1 or 0
end
return result

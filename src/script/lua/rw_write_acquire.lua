-- Take (or re-enter) the write hold of a read-write lock (layout: see
-- rw_read_acquire.lua). Before judging a read-locked hash, reader fields none
-- of whose timeout keys is left are removed: a crashed reader's field stays
-- in the hash for as long as a live reader keeps renewing it, but its own
-- lease is over, so it must block writers no longer (Redisson's scripts keep
-- it until every reader is gone).
-- KEYS[1]  the lock hash
-- KEYS[2]  the timeout-key prefix of the name: a reader field f's hold n has
--          the timeout key "<KEYS[2]>:<f>:rwlock_timeout:<n>"
-- KEYS[3]  with a delay (ARGV[3]): the lock-delay marker (as acquire.lua's):
--          while it exists and the hash does not, no write (or, for readers
--          with the delay, read) hold is taken. Without: as KEYS[4]
-- KEYS[4]  (fenced only) the fencing counter, INCR'd once per new write holding
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  the writer's field "<owner>:write"
-- ARGV[3]  (optional) this writer's lock-delay in ms
-- Returns nil (plain) or {token} (fenced) when acquired, otherwise the
-- hash's PTTL (-1: no expiry); during a delay {'delay', the marker's PTTL}.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'read' then
  local fields = redis.call('hgetall', KEYS[1])
  local live = 0
  for i = 1, #fields, 2 do
    local field, count = fields[i], tonumber(fields[i + 1])
    if field ~= 'mode' then
      local alive = false
      for n = 1, (count or 0) do
        if redis.call('exists', KEYS[2] .. ':' .. field .. ':rwlock_timeout:' .. n) == 1 then
          alive = true
          break
        end
      end
      if alive then
        live = live + 1
      else
        redis.call('hdel', KEYS[1], field)
      end
    end
  end
  if live > 0 then
    return redis.call('pttl', KEYS[1])
  end
  redis.call('del', KEYS[1])
  mode = false
end
local marker, fence = nil, KEYS[3]
if ARGV[3] then marker, fence = KEYS[3], KEYS[4] end
local function mark()
  if marker then
    redis.call('set', marker, ARGV[3], 'PX', tonumber(ARGV[1]) + tonumber(ARGV[3]))
  end
end
if mode == false then
  local delayed = marker and redis.call('pttl', marker) or -2
  if delayed ~= -2 then return {'delay', delayed} end
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  mark()
  if fence == nil then
    return nil
  end
  return {redis.call('incr', fence)}
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
  mark()
  if fence == nil then
    return nil
  end
  -- Re-entry: while it is write-held nobody else can INCR.
  return {tonumber(redis.call('get', fence) or '0')}
end
return redis.call('pttl', KEYS[1])

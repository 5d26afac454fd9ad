-- Acquire (or re-enter) a fair lock: FIFO by a queue kept with the SERVER's
-- clock. See docs/fair_lock.md for the layout and the protocol.
-- KEYS[1]  the lock: a hash of owner id -> hold count, PEXPIRE = lease (as
--          the reentrant lock, so its queries work unchanged)
-- KEYS[2]  the queue: a list of waiting owner ids, oldest first
-- KEYS[3]  the waiters' liveness: a zset of owner id -> deadline in server ms
-- KEYS[4]  with a delay (ARGV[5]): the lock-delay marker (as acquire.lua's):
--          while it exists and the lock does not, nobody takes the lock;
--          waiters keep their places. Without: as KEYS[5]
-- KEYS[5]  (fenced locks only) the fencing counter
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner id
-- ARGV[3]  the waiter's liveness lease in milliseconds
-- ARGV[4]  the owner's hold count if this succeeds ('1': a first hold)
-- ARGV[5]  (optional) this holder's lock-delay in ms
-- Returns nil (plain) or {token} (fenced) when acquired; otherwise, having
-- queued the owner (or refreshed its place), how long to wait before
-- retrying in milliseconds: the holder's PTTL (the marker's during a delay),
-- bounded by what remains of the queue head's liveness when the head is
-- another waiter (-1: no bound).
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local owner = ARGV[2]

-- Waiters whose Client stopped renewing their place are dropped from the head.
local head = redis.call('lindex', KEYS[2], 0)
while head do
  local alive = redis.call('zscore', KEYS[3], head)
  if alive and tonumber(alive) > now then break end
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], head)
  head = redis.call('lindex', KEYS[2], 0)
end

local marker, fence = nil, KEYS[4]
if ARGV[5] then marker, fence = KEYS[4], KEYS[5] end

local function token(fresh)
  if marker then
    redis.call('set', marker, ARGV[5], 'PX', tonumber(ARGV[1]) + tonumber(ARGV[5]))
  end
  if fence == nil then return nil end
  if fresh then return {redis.call('incr', fence)} end
  -- While the lock is held nobody else can INCR: the counter is the holder's.
  return {tonumber(redis.call('get', fence) or '0')}
end

if redis.call('hexists', KEYS[1], owner) == 1 then
  if ARGV[4] == '1' then
    -- A release granted it to this waiter (its token was taken then): confirm
    -- it with this acquire's own lease, and leave the queue.
    redis.call('lrem', KEYS[2], 0, owner)
    redis.call('zrem', KEYS[3], owner)
  else
    redis.call('hincrby', KEYS[1], owner, 1)
  end
  redis.call('pexpire', KEYS[1], ARGV[1])
  return token(false)
end

local free = redis.call('exists', KEYS[1]) == 0
local delayed = free and marker and redis.call('pttl', marker) or -2
if free and delayed == -2 and (not head or head == owner) then
  redis.call('hset', KEYS[1], owner, 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  if head then redis.call('lpop', KEYS[2]) end
  redis.call('zrem', KEYS[3], owner)
  return token(true)
end

-- Wait in line: queue once, and keep the place alive for one liveness lease.
local live = tonumber(ARGV[3])
if not redis.call('zscore', KEYS[3], owner) then
  redis.call('rpush', KEYS[2], owner)
end
redis.call('zadd', KEYS[3], now + live, owner)
for i = 2, 3 do
  local ttl = redis.call('pttl', KEYS[i])
  if ttl < live then redis.call('pexpire', KEYS[i], live) end
end

-- Retry when the holder's lease ends, or sooner when the head's place lapses
-- (a dead head's grant lapses with it; nobody publishes then).
local wait = redis.call('pttl', KEYS[1])
if wait == -2 and delayed ~= -2 then wait = delayed end
head = redis.call('lindex', KEYS[2], 0)
if head ~= owner then
  local alive = tonumber(redis.call('zscore', KEYS[3], head))
  if alive then
    local left = math.max(alive - now, 0)
    if wait == -2 then
      -- Free after a lease ran out unreleased: the head takes it on its own
      -- retry any moment now, or its place lapses. Look again shortly.
      wait = math.min(left, 100)
    elseif wait == -1 or left < wait then
      wait = left
    end
  end
end
if wait < -1 then wait = 0 end
return wait

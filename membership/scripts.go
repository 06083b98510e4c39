package membership

import "github.com/redis/go-redis/v9"

// luaPrelude is shared by the scripts: the Redis server's clock in
// milliseconds, and the cluster's recorded max_slaves, set on first use.
// It returns an error reply "MAXSLAVES <recorded>" when ARGV[1] differs.
const luaPrelude = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function other_max_slaves(key, want)
  local got = redis.call('HGET', key, 'max_slaves')
  if not got then
    redis.call('HSET', key, 'max_slaves', want)
    return nil
  end
  if got ~= want then return got end
  return nil
end
local function token_of(info)
  if not info then return nil end
  local ok, obj = pcall(cjson.decode, info)
  if ok and type(obj) == 'table' then return obj.token end
  return nil
end
`

// registerScript: KEYS leases, info, epoch, config; ARGV max_slaves, id,
// token, info JSON, lease ms. Refuses an ID held live by another token;
// bumps the epoch unless the same run re-registers unchanged.
var registerScript = redis.NewScript(luaPrelude + `
local other = other_max_slaves(KEYS[4], ARGV[1])
if other then return redis.error_reply('MAXSLAVES ' .. other) end
local now = now_ms()
local deadline = redis.call('ZSCORE', KEYS[1], ARGV[2])
local live = deadline and tonumber(deadline) > now
local cur = redis.call('HGET', KEYS[2], ARGV[2])
local holder = token_of(cur)
if live and holder and holder ~= ARGV[3] then
  return redis.error_reply('IDTAKEN ' .. cur)
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[5]), ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
if live and cur == ARGV[4] then
  return tonumber(redis.call('GET', KEYS[3]) or '0')
end
return redis.call('INCR', KEYS[3])
`)

// heartbeatScript: KEYS leases, info, config; ARGV max_slaves, id, token,
// lease ms. Renews a live lease held by token.
var heartbeatScript = redis.NewScript(luaPrelude + `
local other = other_max_slaves(KEYS[3], ARGV[1])
if other then return redis.error_reply('MAXSLAVES ' .. other) end
local now = now_ms()
local deadline = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not deadline or tonumber(deadline) <= now then
  return redis.error_reply('LEASELOST the lease lapsed')
end
local cur = redis.call('HGET', KEYS[2], ARGV[2])
if token_of(cur) ~= ARGV[3] then
  return redis.error_reply('LEASELOST held by ' .. tostring(cur))
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[2])
return 1
`)

// deregisterScript: KEYS leases, info, epoch; ARGV id, token. Removes the
// node if token holds it and bumps the epoch; an absent node is a no-op.
var deregisterScript = redis.NewScript(luaPrelude + `
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if not cur then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
if token_of(cur) ~= ARGV[2] then
  return redis.error_reply('LEASELOST held by ' .. cur)
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('INCR', KEYS[3])
`)

// snapshotScript: KEYS leases, info, epoch, config; ARGV max_slaves. Drops
// lapsed leases (bumping the epoch if any) and returns {epoch, ids, infos}.
var snapshotScript = redis.NewScript(luaPrelude + `
local other = other_max_slaves(KEYS[4], ARGV[1])
if other then return redis.error_reply('MAXSLAVES ' .. other) end
local now = now_ms()
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #gone > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  redis.call('HDEL', KEYS[2], unpack(gone))
  redis.call('INCR', KEYS[3])
end
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local infos = {}
if #ids > 0 then infos = redis.call('HMGET', KEYS[2], unpack(ids)) end
return {tonumber(redis.call('GET', KEYS[3]) or '0'), ids, infos}
`)

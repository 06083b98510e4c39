-- claim: read an origin's shared robots.txt, or take the lease to fetch it.
-- KEYS[1] file hash, KEYS[2] fetch lease (value: token@deadline_ms)
-- ARGV[1] lease token, ARGV[2] lease ms
-- Returns {R_FILE, status, body, fetched_at_ms, ttl_ms} when a live file is
-- there, {R_FETCH} when the caller now holds the lease and must fetch it,
-- or {R_WAIT, lease_ms_left} while another process fetches it (the
-- replies are robots.claimFile, claimFetch, claimWait).
-- Deadlines are values, not key expiries: miniredis (crawler run) expires
-- nothing by itself, so expiries only clean up.
local now = now_ms()
local f = redis.call('HMGET', KEYS[1], F_STATUS, F_BODY, F_FETCHED_AT, F_EXPIRES_AT)
local expires = tonumber(f[4] or '0') or 0
if f[1] and expires > now then
  return {R_FILE, f[1], f[2] or '', f[3] or '0', expires - now}
end
local lease = redis.call('GET', KEYS[2])
if lease then
  local deadline = tonumber(string.match(lease, '@(%d+)$') or '0')
  if deadline > now then
    return {R_WAIT, deadline - now}
  end
end
redis.call('SET', KEYS[2], ARGV[1] .. '@' .. int(now + tonumber(ARGV[2])), 'PX', ARGV[2])
return {R_FETCH}

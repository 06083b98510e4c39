-- Master.tendJob: take a job's lease (KEYS[1]) for the process token
-- ARGV[1] for ARGV[2] ms and return a new fencing token (KEYS[2]), larger
-- than every one handed out before: every new owner process gets its own,
-- even one that reuses a master's --id. Reply R_HELD (master.leaseHeld)
-- if another process holds the lease.
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then
  return R_HELD
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if cur then
  return tonumber(redis.call('GET', KEYS[2]) or '0')
end
return redis.call('INCR', KEYS[2])

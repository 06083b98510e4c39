-- Master.renewJob: extend the lease KEYS[1] held by process token ARGV[1]
-- to ARGV[2] ms; reply 0 if it is lost.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1

-- client.Cancel: ask the job's master to stop it. KEYS: state. ARGV: the
-- state field name, the finished value, the cancel_requested field name,
-- now. Reply -1 for no such job, 0 if it is finished already, 1 if asked.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
return 1

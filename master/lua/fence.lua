-- The fence every frontier script starts with: it acts only while the
-- job's fencing counter (KEYS[1]) still holds this master's token
-- (ARGV[1]), so a master that lost the job to another cannot change it;
-- a counter that is gone (Redis restarted empty, or the job was reset)
-- fails apart, so the master can say so.
-- The script's body sees the remaining keys and arguments as K and A.
local fence = redis.call('GET', KEYS[1])
if not fence then
  return fail('GONE', 'the job state is gone from Redis')
end
if fence ~= ARGV[1] then
  return fail('FENCED', 'the job was taken over by another master')
end
local K, A = {}, {}
for i = 2, #KEYS do
  K[i - 1] = KEYS[i]
end
for i = 2, #ARGV do
  A[i - 1] = ARGV[i]
end

-- Queue.Move: move tasks to the slave queues they are routed to: a dead
-- slave's, or those re-enqueued by retry-failed. KEYS[1] is the source
-- list; KEYS[2] the source in-flight set, looked at when ARGV[1] is '1';
-- KEYS[3] the attempts hash, KEYS[4..] the target queues. ARGV[2] is
-- cluster.AttemptCountPrefix; ARGV[3..] holds task/target-index pairs. A
-- task still in the source (it may have been acknowledged meanwhile) is
-- appended to its target queue; one taken from the in-flight set was
-- delivered to a slave that died with it, so that delivery counts. Reply
-- the number moved.
local moved = 0
for i = 3, #ARGV, 2 do
  local task = ARGV[i]
  local removed = redis.call('LREM', KEYS[1], 1, task)
  if removed == 0 and ARGV[1] == '1' then
    removed = redis.call('ZREM', KEYS[2], task)
    if removed > 0 then
      redis.call('HINCRBY', KEYS[3], ARGV[2] .. task, 1)
    end
  end
  if removed > 0 then
    redis.call('RPUSH', KEYS[tonumber(ARGV[i + 1])], task)
    moved = moved + 1
  end
end
return moved

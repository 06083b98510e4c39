-- SlaveQueue.Steal: move queued tasks from the longest of the other
-- slaves' queues KEYS[2..] to the tail of this slave's queue KEYS[1],
-- which has run dry. The victim must hold at least ARGV[2] tasks; it gives
-- half of them, at most ARGV[1], from its own tail (the tasks it would
-- reach last), in their order. Only queued tasks move: nothing in flight,
-- no delivery counted (attempts are kept per job, not per slave). Reply
-- {moved, the victim's index in KEYS}, or {0, 0}.
local most, least = tonumber(ARGV[1]), tonumber(ARGV[2])
local victim, longest = 0, 0
for i = 2, #KEYS do
  local n = redis.call('LLEN', KEYS[i])
  if n > longest then
    victim, longest = i, n
  end
end
if victim == 0 or longest < least or most < 1 then
  return {0, 0}
end
local popped = redis.call('RPOP', KEYS[victim], math.min(most, math.ceil(longest / 2)))
-- pushed back in their order, 500 at a time: unpack fails past a few
-- thousand values, and a script that fails after the RPOP keeps the RPOP
local CHUNK = 500
for last = #popped, 1, -CHUNK do
  local tasks = {}
  for i = last, math.max(last - CHUNK + 1, 1), -1 do
    tasks[#tasks + 1] = popped[i]
  end
  redis.call('RPUSH', KEYS[1], unpack(tasks))
end
return {#popped, victim}

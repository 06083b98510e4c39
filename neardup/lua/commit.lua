-- Index.FindOrAdd: the commit of a batch. The index is one append-only
-- log (a STRING) per generation of one window: generation g, the key
-- KEYS[1] .. g (the stem carries the job's hash tag), holds the records
-- written in [g*window, (g+1)*window) and expires a window after its last
-- append. A caller keeps a copy of the logs of the current generation and
-- the one before, decides its batch against that copy, and appends the
-- batch's records only if its copy is whole: both logs are as long as the
-- caller read them. Otherwise the caller gets what it lacks, decides again
-- and retries. So every batch is decided against everything written before
-- it, as if the index were one process. The records are opaque here
-- (record.go writes and reads them).
--
-- ARGV: [1] the time (ms; < 0: the server's clock), [2] the window (ms),
-- [3] the generation the caller holds as current (< 0: none), [4] and [5]
-- the bytes it holds of that generation's previous and own log, [6] the
-- records to append (may be empty), [7] the most bytes of a log to reply,
-- [8] and [9] the first bytes (up to 32) it holds of each log: a log that
-- starts otherwise is not the one it read (the job was reset, say).
-- Reply: {1, gen, now} when appended (or nothing to append); else
-- {0, gen, now, from, bytes, from, bytes}: for the previous and the
-- current generation's log, where the bytes the caller lacks start and at
-- most ARGV[7] of them. A from below what the caller holds means the log
-- it held is gone: it starts again from the bytes given.
local argv, tonumber = ARGV, tonumber
local now = tonumber(argv[1])
if now < 0 then
  now = now_ms()
end
local window = tonumber(argv[2])
local gen = math.floor(now / window)
local cg, poff, coff = tonumber(argv[3]), tonumber(argv[4]), tonumber(argv[5])
local pkey, ckey = KEYS[1] .. int(gen - 1), KEYS[1] .. int(gen)
local plen, clen = redis.call('STRLEN', pkey), redis.call('STRLEN', ckey)

-- What the caller holds of each log once it has moved to gen: the logs it
-- held if gen is its generation, its current one as the previous if gen
-- is the next, else nothing.
local hp, hc, headp, headc = 0, 0, '', ''
if cg == gen then
  hp, hc, headp, headc = poff, coff, argv[8], argv[9]
elseif cg == gen - 1 then
  hp, headp = coff, argv[9]
end

-- held is what the caller holds of key: nothing if the log is shorter or
-- starts with other bytes.
local function held(key, have, head, len)
  if have > len or (have > 0 and redis.call('GETRANGE', key, 0, #head - 1) ~= head) then
    return 0
  end
  return have
end
hp, hc = held(pkey, hp, headp, plen), held(ckey, hc, headc, clen)

if cg == gen and hp == poff and hc == coff and plen == hp and clen == hc then
  if argv[6] ~= '' then
    redis.call('APPEND', ckey, argv[6])
    redis.call('PEXPIRE', ckey, window)
  end
  return {1, gen, now}
end
local most = tonumber(argv[7])

-- tail returns at most `most` of the bytes of key from have on.
local function tail(key, have, len)
  if have >= len then
    return ''
  end
  return redis.call('GETRANGE', key, have, math.min(len, have + most) - 1)
end

return {0, gen, now, hp, tail(pkey, hp, plen), hc, tail(ckey, hc, clen)}

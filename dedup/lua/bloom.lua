-- Bloom mode: each slice is a blocked Bloom filter, every bit of a
-- fingerprint in one line of its block.
--
-- Mode keys: for each granule lo..hi, its key of each of the nb block slots
-- this call uses (KEYS[(s - lo) * nb + j + 1] for slot j, from 0), then
-- each granule's writer key (who may write its slice without reading it).
--
-- Mode args: now (ms, < 0 = server TIME), lo, granularity (ms), window
-- (ms), L (the older slices a check reads), nb, k, the last bit of a block,
-- the bytes of a line, the packed fingerprints, ggo, res, id, margin (ms),
-- create, claim, the places of the CHECK fingerprints when some are BLIND
-- (4 bytes each, big-endian, from 1, ascending), then per fingerprint the first byte of
-- its line in its block and, if it is CHECK, the last one, or if it is
-- BLIND, its new line. (Offsets come as strings: a Lua number passed to
-- redis.call is formatted with %.17g, which measured 0.4us an argument.)
--
-- Packed, per fingerprint: its block slot (2 bytes, big-endian), its kind
-- (1 byte: CHECK, read the line here; BLIND, write the line the caller
-- gives, which is its line of the caller's copy with the fingerprint's
-- bits set), then its k bits as pairs of bytes sorted by byte: the byte's
-- index in the line, from 0, and the bit's mask.
--
-- ggo and res say what the caller already checked in its own copies of the
-- slices (ggo < 0: nothing). ggo is the granule the caller took for the
-- current one; res has one letter per granule ggo - L .. ggo: 'r', checked
-- here; 'g', sealed, checked by the caller alone (the script only makes
-- sure the granule ended margin ms ago, after which no script writes it);
-- 'o', owned, checked by the caller alone, who claimed the slice and holds
-- an exact copy (the script makes sure the writer key is still id). The
-- fingerprints the caller found in its copies are duplicates and are not
-- passed. Any write by a caller that is not the writer deletes the writer
-- key, so a copy is trusted only while nobody else writes the slice.
--
-- Only GET, SET, DEL, GETRANGE, SETRANGE and arithmetic are used: the Lua
-- of miniredis has no struct or bit library, and one GETRANGE is cheaper
-- than k GETBITs.

local CHECK, BLIND = 0, 1
local RES_REDIS, RES_SEALED, RES_OWNED = string.byte('rgo', 1, 3)

-- bloom_writer is the writer key of granule s.
local function bloom_writer(c, s)
  return KEYS[c.ng * c.nb + s - c.lo + 1]
end

-- bloom_res is how granule s is checked: RES_REDIS unless the caller says
-- otherwise.
local function bloom_res(c, s)
  if c.ggo < 0 then
    return RES_REDIS
  end
  return string.byte(c.res, s - c.g + c.L + 1)
end

-- bloom_verify fails with DEDUPCLOCK when the clock's granule is not the
-- one the caller checked against, or a granule it took as sealed is not,
-- and with DEDUPOWNER when a slice it took as its own was written by
-- someone else: in every case before anything is written.
local function bloom_verify(c)
  if c.ggo < 0 then
    return c
  end
  if c.g ~= c.ggo then
    return nil, fail('DEDUPCLOCK', 'granule ' .. int(c.g) .. ', the caller took ' .. int(c.ggo))
  end
  for s = c.g - c.L, c.g do
    local r = bloom_res(c, s)
    if r == RES_SEALED and (s == c.g or c.now < (s + 1) * c.gran + c.margin) then
      return nil, fail('DEDUPCLOCK', 'granule ' .. int(s) .. ' is not sealed yet')
    elseif r == RES_OWNED and redis.call('GET', bloom_writer(c, s)) ~= c.id then
      return nil, fail('DEDUPOWNER', 'granule ' .. int(s) .. ' was written by another filter')
    end
  end
  c.owned = bloom_res(c, c.g) == RES_OWNED
  c.older_answered = true
  for s = c.g - c.L, c.g - 1 do
    c.older_answered = c.older_answered and bloom_res(c, s) ~= RES_REDIS
  end
  return c
end

-- bloom_ctx reads the arguments, or fails with DEDUPCLOCK when the clock's
-- granule g needs keys (g - L .. g + 1) that were not passed (see also
-- bloom_verify).
local function bloom_ctx()
  local now = clock_ms(ARGV[4])
  local lo, gran, win = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
  local L, nb, k = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
  local ng = nmk / (nb + 1)
  local g = math.floor(now / gran)
  if ng > 0 and (g - L < lo or g + 1 > lo + ng - 1) then
    return nil, fail('DEDUPCLOCK', 'granule ' .. int(g) .. ' is outside the keys passed, from ' .. int(lo))
  end
  granule = g
  return bloom_verify({now = now, g = g, lo = lo, gran = gran, win = win, L = L, nb = nb, ng = ng,
    k = k, lastbit = ARGV[11], lb = tonumber(ARGV[12]), packed = ARGV[13], ggo = tonumber(ARGV[14]),
    res = ARGV[15], id = ARGV[16], margin = tonumber(ARGV[17]), create = ARGV[18] == '1',
    claim = ARGV[19] == '1', checks = ARGV[20], exists = {}, older = {}})
end

-- bloom_key is the key of block slot j of granule s.
local function bloom_key(c, s, j)
  return KEYS[(s - c.lo) * c.nb + j + 1]
end

-- bloom_exists reports whether key exists, asking Redis once per call.
local function bloom_exists(c, key)
  local e = c.exists[key]
  if e == nil then
    e = redis.call('EXISTS', key) == 1
    c.exists[key] = e
  end
  return e
end

-- bloom_expiry is when granule s's keys expire: when it leaves the window.
local function bloom_expiry(c, s)
  return int((s + 1) * c.gran + c.win)
end

-- bloom_create makes granule s's block key at full size unless it exists,
-- expiring when the granule leaves the window.
local function bloom_create(c, s, key)
  if not bloom_exists(c, key) then
    redis.call('SETBIT', key, c.lastbit, 0)
    redis.call('PEXPIREAT', key, bloom_expiry(c, s))
    c.exists[key] = true
  end
end

-- bloom_older is the keys of slot j's block in the older slices checked
-- here that exist (g - 1 back to g - L), newest first, listed once per
-- call.
local function bloom_older(c, j)
  local keys = c.older[j]
  if not keys then
    keys = {}
    for s = c.g - 1, c.g - c.L, -1 do
      local key = bloom_key(c, s, j)
      if bloom_res(c, s) == RES_REDIS and redis.call('EXISTS', key) == 1 then
        keys[#keys + 1] = key
      end
    end
    c.older[j] = keys
  end
  return keys
end

-- bloom_bits is the fingerprint's k pairs of (byte index from 0, mask) at
-- p in packed, as a table read once.
local function bloom_bits(c, p)
  return {string.byte(c.packed, p, p + 2 * c.k - 1)}
end

-- bloom_has reports whether line holds all of the fingerprint's bits v.
local function bloom_has(line, v, k)
  for j = 1, 2 * k, 2 do
    local m = v[j + 1]
    if string.byte(line, v[j] + 1) % (m + m) < m then
      return false
    end
  end
  return true
end

-- bloom_set writes line back into key at from, with the fingerprint's bits
-- (at p in packed) set. Rebuilding the line through a table measured faster
-- than splicing it around the changed bytes; either way, making Lua strings
-- is most of the cost of an insert, which is why an owner writes lines it
-- built itself (BLIND).
local function bloom_set(key, from, line, v, k)
  local t = {string.byte(line, 1, -1)}
  for j = 1, 2 * k, 2 do
    local i, m = v[j] + 1, v[j + 1]
    if t[i] % (m + m) < m then
      t[i] = t[i] + m
    end
  end
  redis.call('SETRANGE', key, from, string.char(unpack(t)))
end

-- bloom_found reports whether a block of keys holds the fingerprint.
local function bloom_found(c, keys, from, to, v)
  for _, key in ipairs(keys) do
    if bloom_has(redis.call('GETRANGE', key, from, to), v, c.k) then
      return true
    end
  end
  return false
end

-- FP_ARGS is where the fingerprints' own arguments start, after the 17
-- mode arguments above.
local FP_ARGS = 21

-- bloom_each calls fn(i, j, from, to, v, line) for every fingerprint: its
-- block slot, its line's first and last byte, its bits (bloom_bits), and
-- the new line given if it is BLIND.
local function bloom_each(c, fn)
  local w, a = 3 + 2 * c.k, FP_ARGS
  for i = 1, nfp do
    local p = (i - 1) * w + 1
    local s1, s2, kind = string.byte(c.packed, p, p + 2)
    local from, to, line = ARGV[a], ARGV[a + 1], nil
    if kind == BLIND then -- its second argument is its line (and the Lua of
      line = to           -- miniredis assigns a swap in order: keep it apart)
      to = int(tonumber(from) + c.lb - 1)
    end
    fn(i, s1 * 256 + s2, from, to, bloom_bits(c, p + 3), line)
    a = a + 2
  end
end

-- bloom_disown deletes the current slice's writer key unless it is the
-- caller's: its owner's copy no longer holds everything written.
local function bloom_disown(c)
  local key = bloom_writer(c, c.g)
  local w = redis.call('GET', key)
  if w and w ~= c.id then
    redis.call('DEL', key)
  end
end

-- bloom_insert_owned is check_insert when the caller owns the current
-- slice and answered every older one itself: a BLIND fingerprint is new
-- and its line is written as given; the CHECK ones (later ones of a line
-- already written in this call) are read here. The common case, in a loop
-- that does nothing else per fingerprint; the answers hold only the
-- CHECK ones found present (ALL_TRUE).
local function bloom_insert_owned(c)
  local isNew, w, base = setmetatable({}, ALL_TRUE), 3 + 2 * c.k, (c.g - c.lo) * c.nb + 1
  local key, multi, checks, q = KEYS[base], c.nb > 1, c.checks, 1
  local function place(at) -- the CHECK place at at in checks, 0 after the last
    if at > #checks then
      return 0
    end
    local b1, b2, b3, b4 = string.byte(checks, at, at + 3)
    return ((b1 * 256 + b2) * 256 + b3) * 256 + b4
  end
  local nextc = place(q)
  if nfp > 0 then
    bloom_create(c, c.g, key)
  end
  local a = FP_ARGS
  for i = 1, nfp do
    if multi then
      local s1, s2 = string.byte(c.packed, (i - 1) * w + 1, (i - 1) * w + 2)
      key = KEYS[base + s1 * 256 + s2]
      bloom_create(c, c.g, key)
    end
    if i ~= nextc then
      redis.call('SETRANGE', key, ARGV[a], ARGV[a + 1])
    else
      local line, v = redis.call('GETRANGE', key, ARGV[a], ARGV[a + 1]), bloom_bits(c, (i - 1) * w + 4)
      if bloom_has(line, v, c.k) then
        isNew[i] = false
      else
        bloom_set(key, ARGV[a], line, v, c.k)
      end
      q = q + 4
      nextc = place(q)
    end
    a = a + 2
  end
  return isNew
end

local function check_insert()
  local c, err = bloom_ctx()
  if not c then
    return nil, err
  end
  if c.owned and c.older_answered then
    return bloom_insert_owned(c)
  end
  local isNew, shared = {}, false
  bloom_each(c, function(i, j, from, to, v, given)
    local key = bloom_key(c, c.g, j)
    bloom_create(c, c.g, key)
    if given and c.owned then
      isNew[i] = not bloom_found(c, bloom_older(c, j), from, to, v)
      if isNew[i] then
        redis.call('SETRANGE', key, from, given)
      end
      return
    end
    local line = redis.call('GETRANGE', key, from, to)
    isNew[i] = not bloom_has(line, v, c.k) and not bloom_found(c, bloom_older(c, j), from, to, v)
    if isNew[i] then
      bloom_set(key, from, line, v, c.k)
      shared = true
    end
  end)
  if shared then
    bloom_disown(c)
  end
  return isNew
end

local function contains()
  local c, err = bloom_ctx()
  if not c then
    return nil, err
  end
  local found = {}
  local current = bloom_res(c, c.g) == RES_REDIS
  bloom_each(c, function(i, j, from, to, v)
    local key = bloom_key(c, c.g, j)
    found[i] = current and bloom_exists(c, key) and bloom_found(c, {key}, from, to, v)
      or bloom_found(c, bloom_older(c, j), from, to, v)
  end)
  return found
end

-- prepare creates every block (the call passes them all) of the current
-- and the next granule unless the filter creates them on first write, and
-- on request makes the caller the current slice's writer. It returns the
-- clock and whether it claimed the slice.
local function prepare()
  local c, err = bloom_ctx()
  if not c then
    return nil, err
  end
  for s = c.g, c.g + 1 do
    for j = 0, c.nb - 1 do
      if c.create then
        bloom_create(c, s, bloom_key(c, s, j))
      end
    end
  end
  if c.claim then
    local key = bloom_writer(c, c.g)
    redis.call('SET', key, c.id)
    redis.call('PEXPIREAT', key, bloom_expiry(c, c.g))
  end
  return {c.now, c.claim and 1 or 0}
end

local function sweep()
  return 0
end

-- Index.FindOrAdd. Each entry of the batch, in order, drops its id's old
-- entry, then either finds the closest live entry of another id within
-- ARGV[3] bits (ties: the smaller id), or becomes an entry itself.
--
-- The index is one HASH per generation of one window: generation g, the
-- key KEYS[1] .. g (the stem carries the job's hash tag; keys.go), holds
-- the entries added in [g*window, (g+1)*window) and expires a window after
-- its last add. So the live entries are all in the current generation and
-- the one before it, and Redis holds at most two windows of entries. Its
-- fields (keys.go builds them in Go):
--   band field   band prefix + band (0..3), the band's 2 bytes -> the
--                records of the generation's entries with that band
--                value, concatenated: per entry its hash (8 bytes) and
--                its key (8 bytes)
--   entry field  entry prefix, key -> the entry's hash (8 bytes), its
--                expiry (unix ms), ' ', its id
-- An entry's key is a 64-bit digest of its id: a band record names its
-- entry, and an id finds its own entry, through one field. A band record
-- whose entry field holds another hash is left over and not counted.
--
-- ARGV: [1] the window (ms), [2] the time (ms; < 0: the server's clock),
-- [3] the largest distance, [4] the entry prefix, [5] the band prefix;
-- then per entry its entry field and its four band fields (read up front in one HMGET per generation); then per entry
-- its id and its band record. The batch works on a table of the fields it
-- read and writes the ones it changed at the end, in one HSET and one HDEL
-- per generation.
-- Reply: per duplicate entry its index (1-based), the distance and the id
-- found; entries not named were added. The Lua of miniredis has no bit
-- library: distances are counted per 4 bits from a table of popcounts.
local argv, tonumber = ARGV, tonumber
local byte, sub, find = string.byte, string.sub, string.find
local stem, window, maxd = KEYS[1], tonumber(argv[1]), tonumber(argv[3])
local entry_prefix, band_prefix = argv[4], byte(argv[5])
local n = (#argv - 5) / 7

-- now is the time argument, or the server's clock when it is < 0.
local now = tonumber(argv[2])
if now < 0 then
  now = now_ms()
end
local expires = int(now + window) .. ' '
local gen = math.floor(now / window)
local gkey = {stem .. int(gen), stem .. int(gen - 1)}

-- ngen is the number of generations to read: the one before only if it
-- exists (in a job's first window it does not).
local ngen = redis.call('EXISTS', gkey[2]) == 1 and 2 or 1

-- field[g][f] is field f of generation g (1: current, 2: the one before)
-- as this batch has made it: a string, false when absent, nil if not read.
local field = {{}, {}}
for g = 1, ngen do
  local first, last = 6, 5 + 5 * n
  for i = first, last, 1000 do
    local j = math.min(i + 999, last)
    local got = redis.call('HMGET', gkey[g], unpack(argv, i, j))
    local fg = field[g]
    for k = 1, #got do
      fg[argv[i + k - 1]] = got[k]
    end
  end
end
local cur = field[1]

-- get returns field f of generation g.
local function get(g, f)
  local v = field[g][f]
  if v == nil then
    v = g <= ngen and redis.call('HGET', gkey[g], f)
    field[g][f] = v
  end
  return v
end

-- changed[g] is the set of fields of generation g that forget changed;
-- adds lists, per page added, the index of its entry field argument: store
-- writes those fields as the batch has left them.
local changed, adds = {{}, {}}, {}

-- put sets field f of generation g to v (false: deleted).
local function put(g, f, v)
  field[g][f] = v
  changed[g][f] = true
end

-- split returns the expiry and the id of an entry field's value e.
local function split(e)
  local sp = find(e, ' ', 9, true)
  return tonumber(sub(e, 9, sp - 1)), sub(e, sp + 1)
end

-- without returns the records v less record r, false when none is left.
local function without(v, r)
  local i = find(v, r, 1, true)
  while i and i % 16 ~= 1 do
    i = find(v, r, i + 1, true)
  end
  if not i then
    return v
  end
  local rest = sub(v, 1, i - 1) .. sub(v, i + 16)
  return rest ~= '' and rest
end

-- forget drops the entry of id from generation g, which holds its entry
-- field ef (unless that names another id of the same key).
local function forget(g, ef, id)
  local e = field[g][ef]
  if select(2, split(e)) ~= id then
    return
  end
  put(g, ef, false)
  local r = sub(e, 1, 8) .. sub(ef, 2)
  for b = 0, 3 do
    local f = string.char(band_prefix + b) .. sub(e, 2 * b + 1, 2 * b + 2)
    local v = get(g, f)
    if v then
      put(g, f, without(v, r))
    end
  end
end

-- px holds, at 17a+b+1, the number of bits in which 4-bit values a and b
-- differ as a digit: a constant costs nothing per call, unlike a table.
local px = [[
0112122312232334
1021213221323243
1201231223123423
2110322132214332
1223011223341223
2132102132432132
2312120134232312
3221211043323221
1223233401121223
2132324310212132
2312342312012312
3221433221103221
2334122312230112
3243213221321021
3423231223121201
4332322132212110]]

-- q1..q8 are the bytes of the hash being looked up.
local q1, q2, q3, q4, q5, q6, q7, q8

-- apart is the number of bytes in which the record of v at off differs
-- from the hash: more than maxd, and it is too far (no popcount needed).
local function apart(v, off)
  local r1, r2, r3, r4, r5, r6, r7, r8 = byte(v, off, off + 7)
  local d = 0
  if r1 ~= q1 then d = d + 1 end
  if r2 ~= q2 then d = d + 1 end
  if r3 ~= q3 then d = d + 1 end
  if r4 ~= q4 then d = d + 1 end
  if r5 ~= q5 then d = d + 1 end
  if r6 ~= q6 then d = d + 1 end
  if r7 ~= q7 then d = d + 1 end
  if r8 ~= q8 then d = d + 1 end
  return d
end

-- pop is the number of bits in which bytes a and b differ.
local function pop(a, b)
  if a == b then
    return 0
  end
  local al, bl = a % 16, b % 16
  return byte(px, al * 17 + bl + 1) + byte(px, (a - al) / 16 * 17 + (b - bl) / 16 + 1) - 96
end

-- distance is the Hamming distance between the hash and the record of v
-- at off.
local function distance(v, off)
  local r1, r2, r3, r4, r5, r6, r7, r8 = byte(v, off, off + 7)
  return pop(r1, q1) + pop(r2, q2) + pop(r3, q3) + pop(r4, q4) +
    pop(r5, q5) + pop(r6, q6) + pop(r7, q7) + pop(r8, q8)
end

-- closest returns the closest live entry of another id than id within
-- maxd of the hash of band record r, whose band fields are argv[f+1..f+4].
local function closest(id, r, f)
  q1, q2, q3, q4, q5, q6, q7, q8 = byte(r, 1, 8)
  local best, bestd
  for g = 1, ngen do
    local fg = field[g]
    for b = f + 1, f + 4 do
      local v = fg[argv[b]]
      for off = 1, v and #v or 0, 16 do
        local d = apart(v, off) <= maxd and distance(v, off)
        local e = d and d <= maxd and (not best or d <= bestd) and
          get(g, entry_prefix .. sub(v, off + 8, off + 15))
        if e and sub(e, 1, 8) == sub(v, off, off + 7) then
          local exp, mid = split(e)
          if exp > now and mid ~= id and (not best or d < bestd or mid < best) then
            best, bestd = mid, d
          end
        end
      end
    end
  end
  return best, bestd
end

-- add makes band record r the entry of id in the current generation.
local function add(id, r, f)
  for b = f + 1, f + 4 do
    local bf = argv[b]
    cur[bf] = (cur[bf] or '') .. r
  end
  cur[argv[f]] = sub(r, 1, 8) .. expires .. id
  adds[#adds + 1] = f
end

local out = {}
for i = 1, n do
  local f = 5 * i + 1
  local id, r = argv[4 + 5 * n + 2 * i], argv[5 + 5 * n + 2 * i]
  for g = 1, ngen do
    if field[g][argv[f]] then
      forget(g, argv[f], id)
    end
  end
  local best, d = closest(id, r, f)
  if best then
    local k = #out
    out[k + 1], out[k + 2], out[k + 3] = i, d, best
  else
    add(id, r, f)
  end
end

-- store writes the fields of generation g the batch changed: HDEL those
-- it deleted, HSET the others (a field named twice is set twice to its
-- last value).
local function store(g)
  local fg, set, del = field[g], {}, {}
  local function emit(f)
    local v = fg[f]
    if v then
      set[#set + 1] = f
      set[#set + 1] = v
    else
      del[#del + 1] = f
    end
  end
  for f in pairs(changed[g]) do
    emit(f)
  end
  if g == 1 then
    for k = 1, #adds do
      for b = adds[k], adds[k] + 4 do
        emit(argv[b])
      end
    end
  end
  for i = 1, #del, 1000 do
    redis.call('HDEL', gkey[g], unpack(del, i, math.min(i + 999, #del)))
  end
  for i = 1, #set, 1000 do
    redis.call('HSET', gkey[g], unpack(set, i, math.min(i + 999, #set)))
  end
end

for g = 1, ngen do
  store(g)
end
if #adds > 0 then
  redis.call('PEXPIRE', gkey[1], window)
end
return out

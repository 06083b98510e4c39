-- Set mode (scrapy-redis's dupefilter). Mode keys: the SET of 40-hex
-- fingerprints. Mode args: the packed hex fingerprints (40 bytes each).
local function set_member(i)
  return string.sub(ARGV[4], (i - 1) * 40 + 1, i * 40)
end

local function check_insert()
  local isNew = {}
  for i = 1, nfp do
    isNew[i] = redis.call('SADD', KEYS[1], set_member(i)) == 1
  end
  return isNew
end

local function contains()
  local found = {}
  for i = 1, nfp do
    found[i] = redis.call('SISMEMBER', KEYS[1], set_member(i)) == 1
  end
  return found
end

local function prepare()
  return 0
end

local function sweep()
  return 0
end

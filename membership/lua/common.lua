-- Helpers of the node table's scripts (package membership).

-- other_max_slaves records the cluster's max slaves in config hash key on
-- first use (field, value want) and returns the recorded value when it
-- differs from want, else nil.
local function other_max_slaves(key, field, want)
  local got = redis.call('HGET', key, field)
  if not got then
    redis.call('HSET', key, field, want)
    return nil
  end
  if got ~= want then
    return got
  end
  return nil
end

-- token_of is the token in a node's info JSON, or nil.
local function token_of(info)
  if not info then
    return nil
  end
  local ok, obj = pcall(cjson.decode, info)
  if ok and type(obj) == 'table' then
    return obj.token
  end
  return nil
end

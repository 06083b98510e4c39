-- The job ledger's page budgets (jobspec.Budget), counted where pages are
-- admitted: dedup's admission of item links (admit.lua) and a master's
-- queueing of list pages (seed, queue_next). budget_open reads a round's
-- count; budget_take admits one page (a task's or list page's wire form,
-- whose first member is its URL) or names the budget that refuses it;
-- budget_close writes what was taken and refused. Pages are counted as
-- they are admitted, in the one script that queues them, so a round
-- never admits more than max_pages pages cluster-wide. Once a budget is
-- reached (B_F_REACHED in the state hash: max_pages here, max_bytes or
-- max_duration by the master's stop, cancel.lua), every page is refused.
-- A host that reaches max_pages_per_host is closed: its pages are
-- refused, the others' still admitted.

-- budget_open returns the budget of a round: keys state, budget hash
-- (cluster.JobKeys.Budget) and stats; on is '1' when the job has a budget
-- (else nil is returned and every page is admitted); maxPages and
-- maxPerHost are 0 for none.
local function budget_open(stateKey, budgetKey, statsKey, on, maxPages, maxPerHost)
  if on ~= '1' then
    return nil
  end
  local b = {state = stateKey, key = budgetKey, stats = statsKey, maxPages = tonumber(maxPages),
    maxPerHost = tonumber(maxPerHost), hosts = {}, added = {}, addedHosts = {}, taken = 0, closed = 0,
    refused = {}, refusedFields = {}}
  b.reached = redis.call('HGET', stateKey, B_F_REACHED) or nil
  if b.maxPages > 0 then
    b.pages = tonumber(redis.call('HGET', budgetKey, B_PAGES) or '0')
  end
  return b
end

-- budget_host is the host of entry (lowercase in a canonical URL), and
-- how many of its pages the round admitted.
local function budget_host(b, entry)
  local host = string.match(entry, '^{"u":"[%a][%w+.-]*://([^/?#"]+)') or ''
  host = string.gsub(host, '^.*@', '')
  local n = b.hosts[host]
  if n == nil then
    n = tonumber(redis.call('HGET', b.key, B_HOST_PREFIX .. host) or '0')
    b.hosts[host] = n
  end
  return host, n
end

local B_SKIPPED_FIELD = {[B_MAX_PAGES] = B_STAT_SKIPPED_MAX_PAGES,
  [B_MAX_PAGES_PER_HOST] = B_STAT_SKIPPED_MAX_PAGES_PER_HOST,
  [B_MAX_BYTES] = B_STAT_SKIPPED_MAX_BYTES, [B_MAX_DURATION] = B_STAT_SKIPPED_MAX_DURATION}

-- budget_refuse counts a page refused for budget name.
local function budget_refuse(b, name)
  local field = B_SKIPPED_FIELD[name] or B_STAT_SKIPPED_MAX_PAGES
  if not b.refused[field] then
    b.refused[field] = 0
    b.refusedFields[#b.refusedFields + 1] = field
  end
  b.refused[field] = b.refused[field] + 1
  return name
end

-- budget_take admits entry against the budget b and returns nil, or
-- returns the name of the budget that refuses it (jobspec.BudgetMaxPages,
-- ...), counted in its skipped_ field.
local function budget_take(b, entry)
  if b == nil then
    return nil
  end
  if b.reached then
    return budget_refuse(b, b.reached)
  end
  if b.maxPages > 0 and b.pages + b.taken >= b.maxPages then
    b.reached = B_MAX_PAGES
    redis.call('HSET', b.state, B_F_REACHED, B_MAX_PAGES)
    return budget_refuse(b, B_MAX_PAGES)
  end
  if b.maxPerHost > 0 then
    local host, n = budget_host(b, entry)
    if n >= b.maxPerHost then
      return budget_refuse(b, B_MAX_PAGES_PER_HOST)
    end
    b.hosts[host] = n + 1
    if not b.added[host] then
      b.added[host] = 0
      b.addedHosts[#b.addedHosts + 1] = host
    end
    b.added[host] = b.added[host] + 1
    if n + 1 == b.maxPerHost then
      b.closed = b.closed + 1
    end
  end
  b.taken = b.taken + 1
  return nil
end

-- budget_close writes what budget_take counted; it returns how many
-- pages were refused.
local function budget_close(b)
  if b == nil then
    return 0
  end
  if b.taken > 0 then
    redis.call('HINCRBY', b.key, B_PAGES, b.taken)
  end
  for _, host in ipairs(b.addedHosts) do
    redis.call('HINCRBY', b.key, B_HOST_PREFIX .. host, b.added[host])
  end
  if b.closed > 0 then
    redis.call('HINCRBY', b.stats, B_STAT_HOSTS_CLOSED, b.closed)
  end
  local refused = 0
  for _, field in ipairs(b.refusedFields) do
    redis.call('HINCRBY', b.stats, field, b.refused[field])
    refused = refused + b.refused[field]
  end
  return refused
end

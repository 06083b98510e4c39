-- The job ledger's per-kind counters of list pages, for the scripts that
-- queue or drop frontier entries (seed, queue_next, cancel). Their callers
-- append the job's stats key to K and the item kinds' names (space-separated) to A;
-- both are taken off here, so the script's body sees K and A as before.
-- A frontier entry of a list kind ("k" in its wire form, start when it has
-- none) counts in the stats fields kind:<kind>:<stat>; an entry of an item
-- kind, or a sitemaps entry ("s"), is counted where its pages are routed.
-- A job in the short form passes '*' for the item kinds: its counters are
-- the job's alone, as they always were.
local KIND_STATS = table.remove(K)
local KIND_ITEMS = {}
local itemKinds = table.remove(A)
local KIND_OFF = itemKinds == '*'
local nItemKinds = 0
for name in string.gmatch(itemKinds, '%S+') do
  KIND_ITEMS[name] = true
  nItemKinds = nItemKinds + 1
end
-- a job of several item kinds counts its tasks by kind too
local KIND_BY_ITEM = not KIND_OFF and nItemKinds > 1
local kindSums, kindFields = {}, {}

local function addKind(field, n)
  if not kindSums[field] then
    kindSums[field] = 0
    kindFields[#kindFields + 1] = field
  end
  kindSums[field] = kindSums[field] + n
end

-- listKind is the list kind of frontier entry e, or nil when it is a
-- sitemaps entry or a page of an item kind (those are counted where
-- their pages are routed); '' in a job of the short form.
local function listKind(e)
  if string.find(e, '"s":', 1, true) then
    return nil
  end
  if KIND_OFF then
    return ''
  end
  local kind = string.match(e, '"k":"([^"]*)"') or 'start'
  if KIND_ITEMS[kind] then
    return nil
  end
  return kind
end

-- countKind adds n to stat of the list kind of frontier entry e, if any.
local function countKind(e, stat, n)
  local kind = listKind(e)
  if kind and kind ~= '' then
    addKind('kind:' .. kind .. ':' .. stat, n)
  end
end

-- openBudget takes the page budget's keys (state, budget hash) and
-- arguments (on, max_pages, max_pages_per_host) its callers append
-- before the stats key and item kinds, and opens it (budget.lua).
local function openBudget()
  local maxPerHost, maxPages, on = table.remove(A), table.remove(A), table.remove(A)
  local budgetKey, stateKey = table.remove(K), table.remove(K)
  return budget_open(stateKey, budgetKey, KIND_STATS, on, maxPages, maxPerHost)
end

-- countItemKind adds one to stat of the item kind of task e ("k" in its
-- wire form), in a job of several item kinds.
local function countItemKind(e, stat)
  if not KIND_BY_ITEM then
    return
  end
  local kind = string.match(e, '"k":"([^"]*)"')
  if kind and KIND_ITEMS[kind] then
    addKind('kind:' .. kind .. ':' .. stat, 1)
  end
end

-- writeKinds writes the sums countKind made.
local function writeKinds()
  for _, field in ipairs(kindFields) do
    redis.call('HINCRBY', KIND_STATS, field, kindSums[field])
  end
end

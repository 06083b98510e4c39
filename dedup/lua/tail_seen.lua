-- SeenBatch: check and insert, reply with one '1' (new) or '0' per
-- fingerprint, and the granule written.
local isNew, err = check_insert()
if err then
  return err
end
return {flags(isNew, nfp), granule}

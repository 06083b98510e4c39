-- Contains: read-only, one '1' (present) or '0' per fingerprint, and the
-- granule checked.
local found, err = contains()
if err then
  return err
end
return {flags(found, nfp), granule}

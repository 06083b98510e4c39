-- Contains: read-only, one '1' (present) or '0' per fingerprint.
return flags(contains(), nfp)

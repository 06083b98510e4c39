-- A probe of the constants' header: reply them as Lua reads them.
return {F_ODD, R_NONE, N_BIG}

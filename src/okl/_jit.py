"""The one Numba decorator of okl's compiled code (cached on disk, IEEE arithmetic: no fastmath,
so a loop sums in the order written and results do not depend on the machine's vector width)."""

import numba as nb

jit = nb.njit(cache=True, fastmath=False, nogil=True)

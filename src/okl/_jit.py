"""The Numba decorators of okl's compiled code (cached on disk, IEEE arithmetic: no fastmath,
so a loop sums in the order written and results do not depend on the machine's vector width)."""

import numba as nb

jit = nb.njit(cache=True, fastmath=False, nogil=True)

#: :data:`jit` with NumPy's error model: a division by zero gives inf / NaN instead of raising, so
#: Numba adds no zero test to a division and a loop of divisions and square roots vectorises (both
#: are exact IEEE operations: the same bits). Only for loops that never use such a quotient (a
#: branch-free select discards it).
jit_vector = nb.njit(cache=True, fastmath=False, nogil=True, error_model="numpy")

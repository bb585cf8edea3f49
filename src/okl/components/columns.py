"""The engine's layout scheme: the columns of its int table ``I`` and real table ``R`` (one row per
member of a pool), named once for the members' compiled functions (each component's module), the
generated dispatch (:mod:`okl.components.dispatch`), the engine (:mod:`okl.engine.core`), its
layout (:mod:`okl.engine.layout`) and its roots (:mod:`okl.engine.roots`); and the two views
every member function reads: its features' slot and whether the row came sparse."""

from okl._jit import jit, jit_inline

#: a member the engine does not run (no plan it can lay out): Python fills its decision column
PY = -1
# columns of I
(MAP, STEP, RULE, LOSS, SRC, M, K, BUDGET, COUNTER, RHO, MARGIN_COUNTER, NSEEN, NOUT,
 O_A, O_P, O_W, O_G, O_Z, O_KB, O_U, NL, ORDER, UNMAP, O_NRM, GSEED, GKIND) = range(26)
I_COLS = 26
# columns of R
KIND, KA, KB_, KC, ETA, LR, CB, MERGE, GSCALE = range(9)
R_COLS = 9
# what a member needs from Python after a row (``todo``)
# (FAILED: its round left no usable state; Python drops it from the pool)
NOTHING, TRANSITION, UPDATE, FAILED = 0, 1, 2, 3


@jit
def row_is_sparse(xi):
    """Whether the row comes sparse: its non-zeros' indices given (a dense row comes with none; a
    sparse row without non-zeros is computed dense, on its dense copy of zeros)."""
    return xi.shape[0] > 0


@jit_inline
def member_rows(F, I, j, col, nk, n):
    """Member j's block at its offset ``I[j, col]`` as ``nk`` rows of n (K outputs' weights, or a
    step's state per output)."""
    return F[I[j, col]:I[j, col] + nk * n].reshape((nk, n))


@jit_inline
def feature_slot(F, I, j, q):
    """Member j's features in its slot q of F (k = ``I[j, K]`` entries at ``O_Z``)."""
    k = I[j, K]
    return F[I[j, O_Z] + q * k:I[j, O_Z] + (q + 1) * k]

"""The engine's layout scheme: the columns of its int table ``I`` and real table ``R`` (one row per
member of a pool; :mod:`okl.engine.core`), named once for the compiled driver
(:mod:`okl.engine.core`, :mod:`okl.engine.k_outputs`), the layout (:mod:`okl.engine.layout`) and
the roots (:mod:`okl.engine.roots`)."""

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

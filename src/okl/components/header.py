"""The per-event plan's layout (:mod:`okl.engine.fastpath`: a single learner's ``predict_one`` /
``learn_one`` as one compiled call each): the slots of the header of its one float buffer ``F``
(sizes, constants, and the offsets of its parts), named once for the plan, the components'
per-event functions (each component's module: ``*_event_*``) and the generated dispatch
(:mod:`okl.components.dispatch`); ``auto``'s event buffer T (:mod:`okl.engine.roots`) uses the
same slots for the row check and input scale."""

# header slots of F
(MAP, STEP, DIM, M, K, KKIND, KA, KB, KC, SCALE, LOSS, CLASSIFY, CAL, ETA, LR, CB, SHRINK, SKETCH, RHO, MARGIN,
 SEEN, FVAL, COUNTER, PENDING, O_W, O_G, O_SV, O_SPR, O_CAL, O_A, O_P, O_CEN, O_XS, O_XL, O_KB, O_Z,
 O_U, RULE, MERGE) = range(39)
HEADER = 39

#: the codes of the plan's learn for "nothing learned yet": a refused row or label (the generic
#: path takes the event), an update round or the transition to run in Python; and "the width
#: window is full" (its last row is buffered)
BAD_ROW, BAD_LABEL, UPDATE_DUE, TRANSITION_DUE, WINDOW_DONE = -1, -2, -3, -4, -5

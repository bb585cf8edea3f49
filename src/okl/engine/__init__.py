"""Compiled paths that run several learner families' arithmetic in one call, above the families
(:mod:`okl.learners`): the single learners' per-event plans (:mod:`~okl.engine.fastpath`) and
``auto``'s engine -- its members' rounds (:mod:`~okl.engine.core`, K outputs in
:mod:`~okl.engine.k_outputs`), the aggregation (:mod:`~okl.engine.aggregation`) and the compiled
roots every path of ``auto`` calls (:mod:`~okl.engine.roots`)."""

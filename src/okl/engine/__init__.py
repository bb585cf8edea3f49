"""The compiled drivers, below the learners and the runtime and above the components
(:mod:`okl.components`: the maps' and steps' compiled functions): the single learners' per-event
plans (:mod:`~okl.engine.fastpath`) and ``auto``'s engine -- its members' rounds
(:mod:`~okl.engine.core`, one and K outputs, each member's round through the generated dispatch
:mod:`okl.components.dispatch`), the aggregation
(:mod:`~okl.engine.aggregation`) and the compiled roots every path of ``auto`` calls
(:mod:`~okl.engine.roots`). No module here imports a learner."""

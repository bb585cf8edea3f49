"""The runtime every learner shares, below the learner families (:mod:`okl.learners`): the
protocol (:mod:`~okl.runtime.base`: the ``Learner`` class), the state declarations and their
checker (:mod:`~okl.runtime.state`), model files (:mod:`~okl.runtime.modelfile`), traces
(:mod:`~okl.runtime.trace`), the one learner registry (:mod:`~okl.runtime.registry`), the
per-event path (:mod:`~okl.runtime.events`) and K classes from binary learners
(:mod:`~okl.runtime.multiclass`). It imports no learner family: a new learner is one module in
``okl/learners/`` over this package, plus its registration."""

"""The output heads of a :class:`okl.runtime.base.Learner` (:class:`Heads`, its ``heads`` object):
one output or K (one-vs-rest, inside ``auto``'s engine), target centring for regression (an online
intercept: the model learns the residual from the running target mean) and the online calibration of
a classifier's decisions to probabilities (:mod:`okl.calibration`). Their state is the learner's
``target_sum_``, ``calibration_`` and ``n_outputs_`` (declared by :meth:`Heads.spec`)."""

from __future__ import annotations

import numpy as np

import okl.calibration as calibration
from okl.kernels import WIDTH_WINDOW
from okl.runtime.events import drop_event_cache
from okl.runtime.state import Arr, Num, StateSpec


class Heads:
    """A learner's heads (``Learner.heads``, one object per class, holding nothing: the state is the
    learner's): what turns the model's decision into the prediction (plus the running target mean)
    and into a probability (the calibration), and the K-output form. A learner whose K outputs
    need more than its ``_output_attrs`` stacked (the window, ``auto``) gives a subclass."""

    def spec(self, learner) -> StateSpec:
        """The declaration of the heads' state: the sum of the targets learned so far (regression
        with ``center_targets``; 0 otherwise) and the online calibration of a classifier's decisions
        (:mod:`okl.calibration`: one row, None with K outputs or for regression); with K outputs the
        window's labels are class indices."""
        return StateSpec(fields={"target_sum_": Num(float),
                                 "calibration_": Arr(("_outputs", calibration.N_STATE), optional=True)},
                         sizes={"_outputs": (1, 1)}, rules=(
            (lambda m: (m.calibration_ is None) == (m.task != "classification" or bool(m.n_outputs_))
             and (m.calibration_ is None or calibration.state_ok(m.calibration_)), "calibration_",
             "must be a valid calibration state (okl.calibration) for a one-output classifier, None otherwise"),
            (lambda m: not m.n_outputs_ or m.warmup_y_ is None or bool(
                ((m.warmup_y_ >= 0) & (m.warmup_y_ < m.n_outputs_) & (m.warmup_y_ == np.round(m.warmup_y_))).all()),
             "warmup_y_", "must hold class indices 0..K-1 in a learner with K outputs")))

    # ---- regression: the kernel model learns the residual from the running mean ----------------

    def centers_targets(self, learner, ev=None) -> bool:
        """Whether this learner predicts mu_{t-1} + f_t(x_t), where mu_{t-1} is the mean of the
        targets learned so far (0 before the first), while its own model f learns the residual
        y_t - mu_t from the mean *including* y_t (:meth:`residual`): the ``center_targets``
        hyperparameter, for regression losses only. This is an online intercept: the intercept
        (the running mean, exact from the first row) takes its step first, then the model takes
        its step on what the intercept leaves. A constant target leaves every residual 0, so the
        prediction is that constant from the first row on (learning y_1 - mu_0 = y_1 instead put
        the whole first target into the model on top of the mean: one row of target 5 predicted
        10 with ``auto``).

        Why: a kernel expansion or a Nystrom / sketched / Fourier map predicts f(x) = 0 where its
        support vectors or landmarks do not reach, and on [0, 1] targets 0 is a poor guess. The
        running mean is the baseline every regression result is compared with
        (``okl run``'s running-mean row), and it uses no hindsight: the offset is the same
        running-mean predictor, and the kernel model only has to learn what that baseline
        misses. Measured (library defaults, mean squared loss, plain -> centred):
        cadata in file order NOGD 0.150 -> 0.044, FORKS 0.151 -> 0.044 (running mean 0.057;
        the first B rows, the landmarks, come from one region); permutation 0: cpusmall FOGD
        0.0044 -> 0.0027, BOGD 0.0273 -> 0.0140, parkinson NOGD 0.0280 -> 0.0269; the residual
        from mu_t rather than mu_{t-1}: docs/results/target-centring.md.
        Classification labels are not centred (a margin loss needs labels -1/+1). ``ev``: the
        learner's event state, when the caller has it (the loss is looked up once there)."""
        return getattr(learner, "center_targets", False) is True and learner.events.loss(learner, ev).task == "regression"

    def target_mean(self, learner) -> float:
        """mu: the mean of the targets learned so far (0 before the first)."""
        return learner.target_sum_ / learner.n_seen_ if learner.n_seen_ else 0.0

    def residual(self, learner, y: float) -> float:
        """What the model learns from target y at this round under target centring: y - mu_t,
        mu_t the mean of the targets learned so far and y (see :meth:`centers_targets`; the
        same float as :meth:`running_target_means` gives for that row)."""
        return y - (learner.target_sum_ + y) / (learner.n_seen_ + 1)

    def running_target_means(self, learner, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mu, residuals, sums) for the rows of y learned in order from the current state: mu[i]
        the mean of the targets before row i (the offset of its prediction), residuals[i] what
        the model learns from row i (:meth:`residual`), sums[i] the targets' sum before row i
        (sums[-1]: after every row). The sums are accumulated one target at a time, as learn_one
        does, so run() and learn_one agree bit for bit."""
        sums = np.add.accumulate(np.concatenate(([learner.target_sum_], y)))
        counts = learner.n_seen_ + np.arange(len(y) + 1, dtype=float)
        mu = np.divide(sums[:-1], counts[:-1], out=np.zeros(len(y)), where=counts[:-1] > 0)
        return mu, y - sums[1:] / counts[1:], sums

    def calibrate(self, learner, decisions: np.ndarray, y, start_round: int, was_started: bool) -> None:
        """Feed the calibration (:mod:`okl.calibration`) the rounds just learned: their
        decisions before learning and labels, except the rounds whose decision was the width
        window's running label mean. Every path that learns calls this once (``run``,
        ``learn_one``, ``learn_many``, ``okl stream``'s :meth:`EventPath.learn_round` / :meth:`EventPath.learn_rounds`)."""
        if learner.calibration_ is None or not len(decisions):
            return
        skip = 0 if was_started else (max(0, WIDTH_WINDOW - start_round) if learner.inputs.uses_window(learner) else 1)
        if skip < len(decisions):
            labels = np.asarray(y, dtype=np.float64).reshape(-1)[skip:]
            calibration.update(learner.calibration_, decisions[skip:], labels)

    def calibration_state(self, learner) -> np.ndarray:
        """The calibration's state (a fresh one before the first example); ValueError for regression."""
        if learner.task != "classification":
            raise ValueError(f"{learner.name or type(learner).__name__} with loss {getattr(learner, 'loss', None)!r} "
                             "is a regression learner: it has no class probabilities")
        return learner.calibration_ if learner.calibration_ is not None else calibration.new_state(1)

    # ---- K outputs ----------------------------------------------------------------------------

    def out_shape(self, learner, *shape) -> tuple:
        """A per-output state array's declared shape: ``shape``, with a leading K in K-output mode."""
        return (learner.n_outputs_, *shape) if learner.n_outputs_ else shape

    def new_decisions(self, learner, n: int) -> np.ndarray:
        """An empty array for the decisions of n rounds: (n,), or (n, K) with K outputs."""
        return np.empty((n, learner.n_outputs_) if learner.n_outputs_ else n)

    def set_outputs(self, learner, signs) -> None:
        """Turn a started one-output learner into len(signs) outputs: output o is the learned
        model times ``signs[o]`` (+1: a copy, -1: its mirror, the one-vs-rest model of the other
        label; an unstarted model's weights are 0, so any signs give a fresh K-output model).
        Only learners with ``_output_attrs`` take it, and only in ``auto``'s engine."""
        if not learner._output_attrs:
            raise ValueError(f"{learner.name or type(learner).__name__} has no K-output form")
        if learner.n_outputs_:
            raise ValueError("the learner has K outputs already")
        for attr, mirror in learner._output_attrs.items():
            a = getattr(learner, attr, None)
            if a is not None:
                setattr(learner, attr, np.stack([a * s if mirror < 0 else a.copy() for s in signs]))
        learner.n_outputs_ = len(signs)
        learner.calibration_ = None  # the K outputs' probabilities are the multi-class model's
        drop_event_cache(learner)

    def grow_outputs(self, learner, K: int) -> None:
        """Add outputs up to K, each with zero weights (a class seen for the first time)."""
        for attr in learner._output_attrs:
            a = getattr(learner, attr, None)
            if a is not None:
                setattr(learner, attr, np.concatenate([a, np.zeros((K - a.shape[0],) + a.shape[1:])]))
        learner.n_outputs_ = int(K)
        drop_event_cache(learner)

    def drop_last_output(self, learner) -> None:
        """Undo :meth:`grow_outputs` by one output (a new class whose first event was refused)."""
        for attr in learner._output_attrs:
            a = getattr(learner, attr, None)
            if a is not None:
                setattr(learner, attr, np.ascontiguousarray(a[:-1]))
        learner.n_outputs_ -= 1
        drop_event_cache(learner)


#: the heads of every learner that does not give its own
HEADS = Heads()


class Probabilities:
    """The probability methods of :class:`okl.runtime.base.Learner` (its heads' calibration)."""

    def predict_proba_one(self, x) -> float:
        """P(y = +1 | x): the decision f(x) through the learner's online calibration
        (:mod:`okl.calibration`: >= 1/2 exactly when f(x) >= 0); 1/2 before the first example.
        Classification only."""
        state = self.heads.calibration_state(self)
        return calibration.probability(state, self.predict_one(x))

    def predict_proba_many(self, X) -> np.ndarray:
        """P(y = +1 | x) per row of ``X`` (:meth:`predict_proba_one` over the rows)."""
        state = self.heads.calibration_state(self)
        return calibration.probabilities(state, self.predict_many(X))

    def calibrated(self, decisions) -> np.ndarray:
        """P(y = +1) of given decision values under the learner's calibration (no state change)."""
        return calibration.probabilities(self.heads.calibration_state(self), decisions)

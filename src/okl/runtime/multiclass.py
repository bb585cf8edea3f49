"""Multi-class learning: :class:`MultiClass`, K classes as K one-vs-rest outputs.

A stream with K classes (any hashable labels: strings, integers, -1/0/+1) is learned one-vs-rest:
output k learns y_k = +1 when the label is class k, -1 otherwise, and the prediction is the class
of the largest margin,

    yhat(x) = argmax_k s_k f_k(x),

(ties to the first class), the one-vs-rest reduction (Rifkin & Klautau, JMLR 2004: with well-tuned
binary learners it is as accurate as the multi-class formulations). Two forms:

K outputs of one learner (``native``: ``auto``, NOGD, FORKS with the code's ONS, FOGD, linear)
    The learners whose features do not depend on the label hold one feature map and K rows of
    output weights, f_k(x) = w_k^T z(x), in ``auto``'s compiled engine (:mod:`okl.engine.core`;
    a single learner is the one member of an ``auto`` pool, so every path -- learn_one, run,
    okl stream's blocks, model files -- is that engine's): the features are computed once a round
    for the K outputs, and each output takes the learner's own step on its one-vs-rest target.
    Per member: NOGD and FORKS keep one support set in stage 1 (a point joins when any output has
    a nonzero loss derivative; coefficients K x B) and so one landmark set and map; NOGD's AdaGrad
    sums are per output; FORKS's ONS shares one preconditioner A over the outputs
    (:func:`okl.components.steps.ons.ons_shared_step`: O(k^2 + K k) a round instead of O(K k^2)) and
    counts a round with any nonzero derivative towards its update rounds; FOGD and linear are
    OGD per output. ``auto`` mixes the members' K outputs with one weight per member, each member
    paying the mean of its K clipped one-vs-rest hinge losses (module docstring of
    :mod:`okl.ensemble.auto`). Cost of a round: the learner's binary round plus O(K k) for the
    outputs (measured on ImageSegments, K = 7: docs/results/multiclass.md). Memory: K x k weights
    per member, the map once.
One binary head per class (every other learner: the kernel expansions KOGD, RBP, Forgetron,
Projectron, BPA-S, BOGD, whose support sets are the label's; SkeGD; FORKS with the paper's ONS)
    Each head is a full learner of the chosen kind (its own width window, input scale, kernel
    width, budget and calibration), so a round costs K rounds of the binary learner: O(K x its
    per-round cost), memory K x its memory. A binary linear learner turned multi-class by
    :meth:`from_binary` keeps heads too (:func:`okl.runtime._multiclass_core._core_from_binary`).

Classes
    Labels are told apart by Python equality (they are dict keys): ``True``, ``1``, ``1.0`` and
    ``np.int64(1)`` are one class (named by the first one seen), as in River and in
    ``numpy.unique``; ``"1"`` is another. ``classes`` given: fixed, in the given order (scikit-learn's ``classes_``); a label outside
    them is a ValueError. Not given: classes grow in order of first appearance (a stream), and a
    new class gets a new output (zero weights: it predicts 0 until it learns) or a new head (built
    from the same learner with its own seed, derived from ``random_state`` and the class index,
    as River's ``OneVsRestClassifier`` starts a classifier for each new class) at its first
    example; a block is cut there, so a stream's decisions do not depend on its blocks. Before a
    class is first seen it cannot be predicted: its margin is -inf in :meth:`run`'s decisions.

From a binary learner (:meth:`from_binary`, the River adapter's third label)
    A binary learner that learned labels {a (as -1), b (as +1)} becomes two classes with nothing
    learned lost. ``auto``: two outputs, b's the learned model and a's its mirror (every weight
    negated, AdaGrad sums copied): margins (-f, f), and the aggregation's weights carry on, since
    a member's mean loss over two mirrored outputs is the binary loss it paid. Other learners: head
    b is the learner itself (s_b = +1) and head a its copy with s_a = -1 (margin -f, learning the
    opposite targets, which is learning "a vs rest" with the copy's sign flipped); s_k is the
    only place the sign enters.

Probabilities (temperature scaling, learned online)
    P(k | x) = exp(a m_k(x)) / sum_j exp(a m_j(x)) over the classes seen, m_k = s_k f_k(x) the
    margins, with one temperature a > 0 (Guo, Pleiss, Sun & Weinberger, ICML 2017, there fit
    offline) learned test-then-train: after each round, on the margins before learning and the
    class y, one cumulative Newton step on the multinomial log loss l(a) = -log P(y | x),

        g = sum_k P(k) m_k - m_y,  h = sum_k P(k) m_k^2 - (sum_k P(k) m_k)^2 (>= 0),
        H <- H + h,  a <- clip(a - g / H, 1e-3, 1e3),   a = 1, H = 1 at the start,

    O(K) per round. A single a > 0 keeps the argmax: P's most probable class is always the
    predicted one (normalised per-head calibrations would not), so ``predict_proba`` agrees with
    ``predict``. Uniform over the classes seen before any margin
    (:mod:`okl.runtime._multiclass_temperature`).

Model files (:meth:`save` / :meth:`load`; no pickle): one zip holding ``multiclass.json`` (the
learner's name, the classes as JSON scalars, the signs, the round counter, ``native``) and the
okl model file of the K-output learner (``core.npz``) or one per head (``head<k>.npz``), each
checked by :meth:`okl.runtime.base.Learner.load` against its own declaration (a K-output
learner's per-output arrays must have K rows); written and read by
:mod:`okl.runtime._multiclass_files`.

>>> import numpy as np
>>> from okl.runtime.multiclass import MultiClass
>>> rng = np.random.default_rng(0)
>>> X = rng.random((600, 2)); labels = np.array(["low", "mid", "high"])[(X.sum(1) * 1.5).astype(int)]
>>> model = MultiClass("nogd", params={"budget": 30}, random_state=0)
>>> trace = model.run(X, labels)
>>> model.classes_, trace.decisions.shape, trace.mistake_rate < 15
(['mid', 'low', 'high'], (600, 3), True)
>>> model.predict_one(np.array([0.05, 0.1])), round(float(model.predict_proba_one(np.array([0.05, 0.1])).sum()), 6)
('low', 1.0)
"""

from __future__ import annotations

import io
import math
import numbers
import os
import time
from typing import Any

import numpy as np

from okl._files import write_atomically
from okl._threads import one_blas_thread
from okl._validation import check_matrix
from okl.runtime._multiclass_core import _core_from_binary, _has_k_outputs, _k_output_core
from okl.runtime._multiclass_files import FORMAT, VERSION, is_multiclass_file  # noqa: F401
from okl.runtime._multiclass_files import read_multiclass_model, write_multiclass_model
from okl.runtime._multiclass_temperature import TEMPERATURE_START, softmax, temperature_update
from okl.runtime.base import Learner, learner_class, make
from okl.runtime.modelfile import load_from
from okl.runtime.trace import Trace
from okl.runtime.hyperparameters import param_names


def _plain_label(label):
    """A label as a plain Python value (NumPy scalars unwrapped), hashable; ValueError otherwise."""
    if isinstance(label, np.generic):
        label = label.item()
    if label is None or (isinstance(label, float) and math.isnan(label)):
        raise ValueError(f"label {label!r} is not a class label")
    try:
        hash(label)
    except TypeError:
        raise ValueError(f"label {label!r} is not hashable; labels must be hashable values") from None
    return label


def _head_seed(random_state, k: int) -> int | None:
    """Head k's seed: derived from the learner's integer seed and k (None stays None)."""
    if random_state is None:
        return None
    return int(np.random.SeedSequence([int(random_state), int(k)]).generate_state(1)[0])


def _copy(learner: Learner) -> Learner:
    """An exact, independent copy of a learner, through its model file (the path every state
    takes), in memory."""
    buffer = io.BytesIO()
    learner.files.write(learner, buffer)
    return load_from(buffer, f"a copy of the {learner.name} learner")


class _StreamRounds:
    """``okl stream``'s per-event interface of a :class:`MultiClass` (what a learner's
    :class:`okl.runtime.events.EventPath` gives it): its own rounds."""

    def learn_round(self, model, x, label):
        return model._learn_round(x, label)

    def learn_rounds(self, model, X, labels):
        return model._learn_rounds(X, labels)


class MultiClass:
    """K classes as K outputs of one learner, or one binary head per class (module docstring).

    Parameters
    ----------
    learner : str, default "auto"
        Registered streaming learner of every head (``okl.learners()``).
    params : dict or None
        Its hyperparameters (a classification loss; ``random_state`` is set per head).
    classes : sequence or None
        The classes, fixed in this order; None: grown in order of first appearance.
    random_state : int or None
        Seeds the K-output learner, or the heads (head k: a seed derived from it and k).
    """

    task = "classification"
    #: ``okl stream``'s rounds, as a learner's ``events`` gives them
    events = _StreamRounds()

    def __init__(self, learner: str = "auto", params: dict[str, Any] | None = None, classes=None,
                 random_state: int | None = None):
        if random_state is not None and (isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral)):
            raise ValueError(f"random_state must be an int or None, got {random_state!r}")
        self.learner = learner
        self.params = dict(params or {})
        self.params.pop("random_state", None)
        self.random_state = random_state
        if self.params.get("categorical") is not None:  # (its K outputs run on the rows as given)
            raise ValueError("categorical: MultiClass does not map categorical columns yet; pass them to "
                             "OKLRiverClassifier(categorical=[...]) or OKLClassifier(categorical=[...])")
        # the heads' unstarted template: unknown names and bad hyperparameters fail here
        self._template = template = make(learner, **self.params)
        if template.task != "classification":
            raise ValueError(f"MultiClass needs a classification loss; learner {learner!r} has loss "
                             f"{getattr(template, 'loss', None)!r}")
        self.fixed = classes is not None
        self.classes_: list = []
        self._index: dict = {}
        self.heads_: list[Learner] = []
        self.signs_: list[float] = []
        #: native: one learner with K outputs (``auto`` over engine members); else one head per class
        self.core_: Learner | None = _k_output_core(template, random_state) if _has_k_outputs(template) else None
        self.n_seen_ = 0
        self.temperature_ = np.array(TEMPERATURE_START)
        if classes is not None:
            for label in classes:
                label = _plain_label(label)
                if label in self._index:
                    raise ValueError(f"classes: label {label!r} is given twice")
                self._add(label)
            if len(self.classes_) < 2:
                raise ValueError(f"classes must name at least 2 classes, got {list(classes)!r}")

    # ---- heads ------------------------------------------------------------------------------

    @property
    def native(self) -> bool:
        """Whether the K classes are K outputs of one learner (one feature map) rather than heads."""
        return self.core_ is not None

    def _new_head(self, k: int) -> Learner:
        return make(self.learner, **self.params, random_state=_head_seed(self.random_state, k))

    def _add(self, label, head: Learner | None = None, sign: float = 1.0) -> None:
        self._index[label] = len(self.classes_)
        self.classes_.append(label)
        if self.core_ is not None:
            if self.core_.n_outputs_ == 0:
                self.core_.heads.set_outputs(self.core_, [1.0])
            elif self.core_.n_outputs_ < len(self.classes_):
                self.core_.heads.grow_outputs(self.core_, len(self.classes_))
            return
        self.heads_.append(head if head is not None else self._new_head(len(self.heads_)))
        self.signs_.append(sign)

    @classmethod
    def from_binary(cls, learner: Learner, negative, positive, random_state: int | None = None) -> "MultiClass":
        """The one switch from two labels to K classes (River's third label, ``okl stream``'s first
        label outside -1/+1, a new class in scikit-learn's ``partial_fit``): two classes from a
        binary learner that learned ``negative`` as -1 and ``positive`` as +1, both continuing
        from everything learned; more classes join as they appear. K outputs (``auto``, and NOGD
        / FORKS / FOGD as the one member of a pool,
        :func:`okl.runtime._multiclass_core._core_from_binary`): ``positive``'s
        output is the learned model, ``negative``'s its mirror. Heads (every other learner):
        head ``positive`` is an exact copy of the learner, head ``negative`` another with sign -1.
        A label given as None was never seen: it gets no output or head.

        ``learner`` itself is never changed (the K-output form is built from an exact copy,
        :func:`_copy`): when the event that carries the new label is then refused (a NaN row),
        the caller keeps the binary learner it holds, exactly as before that event, and
        predicts, learns, saves and resumes with it. (Changing it in place left a learner with
        K outputs already, or without its input scale, that refused every later event.)"""
        learner = _copy(learner)
        params = {k: v for k, v in learner.get_params().items() if k != "random_state"}
        out = cls(learner.name, params, random_state=random_state)
        labels = [(_plain_label(v), s) for v, s in ((negative, -1.0), (positive, 1.0)) if v is not None]
        if out.core_ is not None and learner.name != "auto" and learner.dim_ is not None:
            out.core_ = _core_from_binary(learner, [s for _, s in labels], random_state)
        elif out.core_ is not None:
            learner.heads.set_outputs(learner, [s for _, s in labels])
            out.core_ = learner
        if out.core_ is not None:  # K outputs: the learner's model and its mirror become outputs
            for label, _ in labels:
                out._add(label)
            out.n_seen_ = learner.n_seen_
            return out
        if negative is not None:
            out._add(_plain_label(negative), _copy(learner) if positive is not None else learner, -1.0)
        if positive is not None:
            out._add(_plain_label(positive), learner, 1.0)
        out.n_seen_ = learner.n_seen_
        return out

    # ---- okl stream's interface (EventPath.learn_round / learn_rounds) --------------------------

    def _learn_round(self, x, label) -> np.ndarray:
        """learn_one returning the K margins before learning (-inf: a class new at this event)."""
        return self._learn_event(x, label)

    def _learn_rounds(self, X, labels) -> np.ndarray:
        """learn_many over a validated block by each head's per-event arithmetic (okl stream):
        the (n, K) margins before learning."""
        return self._learn_block(X, labels, trace=False, exact=True)

    def get_params(self) -> dict[str, Any]:
        """The heads' hyperparameters with this learner's ``random_state`` (as a binary learner's)."""
        return {**self._template.get_params(), "random_state": self.random_state}

    @property
    def n_classes_(self) -> int:
        return len(self.classes_)

    @property
    def dim_(self) -> int | None:
        if self.core_ is not None:
            return self.core_.dim_
        dims = [h.dim_ for h in self.heads_ if h.dim_ is not None]
        return dims[0] if dims else None

    def _uses_window(self) -> bool:
        return self._template.inputs.uses_window(self._template)

    # ---- learning ---------------------------------------------------------------------------

    def learn_one(self, x, label) -> "MultiClass":
        """One round: every head learns x with its one-vs-rest target through its per-event path
        (the features its predict_one computed for x are reused); a new label adds a head."""
        self._learn_event(x, label)
        return self

    def _learn_event(self, x, label) -> np.ndarray:
        """learn_one returning the margins before learning (-inf for a class new at this event)."""
        label = _plain_label(label)
        k = self._index.get(label)
        added = k is None
        if added:
            if self.fixed:
                raise ValueError(f"label {label!r} is not one of the classes {self.classes_!r}")
            self._add(label)
            k = len(self.classes_) - 1
        if self.core_ is not None:
            before = self.core_.n_seen_
            try:
                margins = np.array(self.core_.events.learn_round(self.core_, x, float(k)), dtype=float)
            except Exception:
                if added and self.core_.n_seen_ == before:
                    self._remove_last()  # x was refused before anything was learned
                raise
            if added:
                margins[k] = -np.inf
            temperature_update(self.temperature_, margins[None, :], np.array([float(k)]))
            self.n_seen_ += 1
            return margins
        learned = 0
        margins = np.full(len(self.heads_), -np.inf)
        try:
            for j, (head, sign) in enumerate(zip(self.heads_, self.signs_)):
                f = head.events.learn_round(head, x, sign if j == k else -sign)  # learn_one, returning f before learning
                if not (added and j == k):
                    margins[j] = sign * f
                learned += 1
        except Exception:
            if added and not learned:
                self._remove_last()  # x was refused before any head learned it
            raise
        temperature_update(self.temperature_, margins[None, :], np.array([float(k)]))
        self.n_seen_ += 1
        return margins

    def _remove_last(self) -> None:
        label = self.classes_.pop()
        del self._index[label]
        if self.core_ is not None:
            self.core_.heads.drop_last_output(self.core_)
            return
        self.heads_.pop()
        self.signs_.pop()

    def learn_many(self, X, labels) -> np.ndarray:
        """Test-then-train over the rows; returns the (n, K) margins before learning each row."""
        return self._learn_block(X, labels, trace=False)

    def run(self, X, labels) -> Trace:
        """Test-then-train over the rows; a :class:`Trace` whose ``decisions`` are the (n, K)
        margins before learning (-inf for a class not seen yet) and ``y`` the class indices."""
        return self._learn_block(X, labels, trace=True)

    def _learn_block(self, X, labels, trace: bool, exact: bool = False):
        """Every head over its rows (from its class's first row), by ``run`` or, ``exact``, by
        its per-event arithmetic in compiled loops (``EventPath.learn_rounds``: decisions that do
        not depend on how a stream is cut into blocks, as okl stream's resume needs)."""
        X = check_matrix(X, self.dim_)
        labels = list(labels)
        if len(labels) != X.shape[0]:
            raise ValueError(f"y has {len(labels)} entries but X has {X.shape[0]} rows")
        # class indices, new classes in order of first appearance (nothing changes before all are valid)
        index = dict(self._index)
        starts = [0] * len(index)  # each head's first row: 0, or its new class's first example
        y = np.empty(X.shape[0])
        for i, label in enumerate(labels):
            label = _plain_label(label)
            k = index.get(label)
            if k is None:
                if self.fixed:
                    raise ValueError(f"label {label!r} at row {i} is not one of the classes {self.classes_!r}")
                k = index[label] = len(index)
                starts.append(i)
            y[i] = k
        n_old = len(self.classes_)
        if self.core_ is not None:
            return self._learn_block_native(X, y, list(index)[n_old:], starts[n_old:], trace, exact)
        for label in list(index)[n_old:]:
            self._add(label)
        seconds = 0.0
        D = np.full((X.shape[0], len(index)), -np.inf)
        for k, (head, sign, start) in enumerate(zip(self.heads_, self.signs_, starts)):
            if start == X.shape[0]:
                continue
            targets = np.where(y[start:] == k, sign, -sign)
            t0 = time.perf_counter()
            decisions = head.events.learn_rounds(head, X[start:], targets) if exact else head.run(X[start:], targets).decisions
            seconds += time.perf_counter() - t0
            D[start:, k] = sign * decisions
        for k in range(n_old, len(starts)):
            D[starts[k], k] = -np.inf  # a class did not exist before its first example
        temperature_update(self.temperature_, D, y)
        self.n_seen_ += X.shape[0]
        if trace:
            return Trace(D, y, seconds, "classification", None, {"classes": list(self.classes_)})
        return D

    def _learn_block_native(self, X, y, new_labels, new_starts, trace: bool, exact: bool):
        """The rows through the K-output learner, the block cut where a new class first appears
        (its output is added there, as one event at a time adds it: the decisions do not depend
        on how a stream is cut into blocks)."""
        n = X.shape[0]
        D = np.full((n, len(self.classes_) + len(new_labels)), -np.inf)
        first_rows = [(len(self.classes_) + c, start) for c, start in enumerate(new_starts)]
        cuts = list(new_starts) + [n]
        t0 = time.perf_counter()
        s = 0
        core = self.core_
        for c, e in enumerate(cuts):
            if e > s:
                core.inputs.ensure_started(core, X.shape[1])
                if exact:
                    out = core.events.learn_events(core, X[s:e], y[s:e])
                else:
                    with one_blas_thread():
                        out = core.inputs.advance(core, X[s:e], y[s:e])
                D[s:e, :out.shape[1]] = out
                s = e
            if c < len(new_labels):
                self._add(new_labels[c])
        for k, start in first_rows:
            D[start, k] = -np.inf  # a class did not exist before its first example
        seconds = time.perf_counter() - t0
        temperature_update(self.temperature_, D, y)
        self.n_seen_ += n
        if trace:
            return Trace(D, y, seconds, "classification", None, {"classes": list(self.classes_)})
        return D

    def end_width_window(self) -> "MultiClass":
        if self.core_ is not None:
            self.core_.end_width_window()
        for head in self.heads_:
            head.end_width_window()
        return self

    # ---- prediction -------------------------------------------------------------------------

    def decision_many(self, X) -> np.ndarray:
        """The (n, K) margins s_k f_k(x) under the current heads (no change of state)."""
        X = check_matrix(X, self.dim_)
        if self.core_ is not None:
            return self.core_.predict_many(X) if self.core_.n_outputs_ else np.zeros((X.shape[0], 0))
        D = np.zeros((X.shape[0], self.n_classes_))
        for k, (head, sign) in enumerate(zip(self.heads_, self.signs_)):
            D[:, k] = sign * head.predict_many(X) if head.dim_ is not None else 0.0
        return D

    def decision_one(self, x) -> np.ndarray:
        """The K margins s_k f_k(x) (a head not started yet gives 0)."""
        if self.core_ is not None:
            return np.asarray(self.core_.predict_one(x), dtype=float) if self.core_.n_outputs_ else np.zeros(0)
        return np.array([s * h.predict_one(x) if h.dim_ is not None else 0.0
                         for h, s in zip(self.heads_, self.signs_)])

    def predict_one(self, x):
        """The class of the largest margin; None before the first class."""
        if not self.classes_:
            return None
        return self.classes_[int(self.decision_one(x).argmax())]  # (the method: np.argmax's wrapper costs 1 us)

    def predict_many(self, X) -> list:
        if not self.classes_:
            return [None] * check_matrix(X, self.dim_).shape[0]
        return [self.classes_[k] for k in np.argmax(self.decision_many(X), axis=1).tolist()]

    def predict_proba_one(self, x) -> np.ndarray:
        """P(class k | x) per class: softmax(a m(x)) with the learned temperature a (module
        docstring); its argmax is :meth:`predict_one`'s class."""
        return softmax(float(self.temperature_[0]), self.decision_one(x))[0]

    def predict_proba_many(self, X) -> np.ndarray:
        return softmax(float(self.temperature_[0]), self.decision_many(X))

    @property
    def started_(self) -> bool:
        if self.core_ is not None:
            return bool(self.classes_) and self.core_.started_
        return bool(self.heads_) and all(h.started_ for h in self.heads_)

    def _first_counted_round(self) -> None:
        return None  # every round is counted (no authors' count for K classes)

    def diagnostics(self) -> dict[str, Any]:
        return {"classes": len(self.classes_)}

    def all_diagnostics(self) -> dict[str, Any]:
        """The number of classes, plus the first head's width and input scale (every head
        started at the first row chooses the same: its window holds the same rows)."""
        if self.core_ is not None:
            first = self.core_.all_diagnostics() if self.core_.dim_ is not None else {}
            if self.learner != "auto" and first:  # the one member's own counts, not the pool's weights
                first = {k: v for k, v in first.items()
                         if not k.startswith("weight[") and k not in ("carried_by", "members", "members_alive",
                                                                        "members_outside_engine", "aggregation_rate")}
                if "kernel" not in param_names(learner_class(self.learner)):
                    first.pop("sigma", None)
                    first.pop("width_rule", None)
                if self.core_.started_:
                    first.update(self.core_.pool_[0].diagnostics())
        else:
            first = self.heads_[0].all_diagnostics() if self.heads_ else {}
        return {**first, **self.diagnostics()}

    # ---- model files ------------------------------------------------------------------------

    def save(self, path) -> None:
        """One zip: ``multiclass.json`` and one okl model file per head (no pickle), its entries
        stored uncompressed (so :meth:`load` reads them in place, inflating nothing).

        Written as a single-learner model file is (:func:`okl._files.write_atomically`: a
        temporary file beside ``path``, flushed and renamed over it), so a crash or Ctrl-C
        during the save leaves the previous file at ``path`` whole, and a failed write (a full
        disk) leaves no temporary file and raises an ``OSError`` naming ``path``."""
        write_atomically(path, self._write_model)

    def _write_model(self, fh) -> None:
        """The file's bytes into an open binary file (what :meth:`save` writes atomically; an
        ``okl stream`` checkpoint holds them as its model entry)."""
        write_multiclass_model(self, fh)

    @classmethod
    def load(cls, path) -> "MultiClass":
        """Read a :meth:`save` file; every problem is a :class:`ModelFileError` naming the file.

        The file is untrusted input, checked before anything in it is unpacked: its zip
        directory (not cut short; each entry named once, a plain name, no symbolic link, stored
        and inside the file: :func:`okl.runtime.modelfile.open_model_zip`), then
        ``multiclass.json`` (at most 16 MiB, its fields and counters), then each head or the
        core read in place from the zip (nothing is written to a temporary directory) and
        checked by :meth:`okl.runtime.base.Learner.load` against its own declaration, under
        the name ``FILE: head<k>.npz``."""
        path = os.fspath(path)
        return cls._load_from(path, path)

    @classmethod
    def _load_from(cls, source, path: str) -> "MultiClass":
        """:meth:`load` from ``source`` (a path or a seekable binary file, e.g. the model entry
        of an ``okl stream`` checkpoint), named ``path`` in every error."""
        return read_multiclass_model(cls, source, path)


__all__ = ["MultiClass"]

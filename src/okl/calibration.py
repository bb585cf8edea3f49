"""Probabilities from decision values at any loss: online Platt scaling, learned test-then-train.

A margin learner (hinge loss, the default) outputs a decision value f(x) whose sign is the
prediction but whose size is not a probability. Platt (1999) maps it through a sigmoid fitted by
maximum likelihood on (decision, label) pairs. okl's sigmoid has one slope on each side of the
decision threshold:

    P(y = +1 | f) = sigmoid(a_+ f)  if f >= 0,    sigmoid(a_- f)  if f < 0,     a_+, a_- > 0,

i.e. a logistic fit p = sigmoid(theta . u) of the two features u = (max(f, 0), min(f, 0)) with no
intercept. Platt's p = sigmoid(a f + b) has an offset b instead of the second slope; an offset
moves the point where p = 1/2 away from f = 0, so the probabilities would contradict the
predictions (f >= 0 is +1, everywhere in okl; scikit-learn's checks and River's wrappers take
argmax of the probabilities to be the prediction). Here P(+1) >= 1/2 exactly when f >= 0, p is
strictly increasing in f (it ranks rows as the decisions do), and each side still gets its own
scale. On River's Phishing (progressive log-loss of the probabilities, decisions of the default
learners) the two forms are within 0.003: two slopes 0.289 vs Platt's offset 0.292 for NOGD,
0.297 vs 0.296 for auto.

The fit is **online, test-then-train**: each learned round's decision f_t (computed *before* the
learner learned (x_t, y_t), the prediction of that round) and its label y_t make one step of a
stochastic Newton method on the cross-entropy (Bercu, Godichon-Baggioni and Portier 2020, with
their truncated curvature weight), so the probability of round t never used y_t, and the
learner's own rounds are unchanged (the calibration only reads them). u u^T is diagonal, so each
round is a one-dimensional Newton step on the slope of f_t's side s in {+, -}:

    p_t   = sigmoid(a_s f_t)                                 (the round's probability)
    tau_t = (n_+ + 1) / (n_+ + 2)  if y_t = +1,  1 / (n_- + 2)  if y_t = -1
                                                             (Platt's targets, n_+/- counted so far)
    h_r   <- gamma h_r + (1 - gamma) PRIOR  for both sides r,   h_s <- h_s + max(p_t (1 - p_t), H_FLOOR) f_t^2
    a_s   <- max(a_s - (p_t - tau_t) f_t / h_s, A_MIN)       (the change of a_s f_t clipped to +/- MAX_STEP)

``gamma = 1 - 1 / MEMORY`` forgets curvature over about ``MEMORY`` rounds, so the fit follows a
learner whose margins grow as it learns (and a drifting stream) instead of freezing, while
h >= PRIOR always (the damping never decays away); the floor on the curvature weight (Bercu et
al.'s truncation) keeps steps bounded when p saturates. Start: a_+ = a_- = 1 (the logistic
loss's own link, p = sigmoid(f)). Rounds inside a learner's width window (whose decision is the
running label mean, not the model's) are not used. Defaults: MEMORY = 1000, PRIOR = 1,
H_FLOOR = 0.01, MAX_STEP = 2, A_MIN = 1e-3 (on Phishing's decisions MEMORY 300 / 1000 / no
forgetting give log-loss 0.288 / 0.289 / 0.290 for NOGD).

Cost: O(1) per round (a division, one exp; about 1 us from Python, a few ns in a compiled block
loop) and 6 floats of state per output, saved in the learner's model file (``calibration_``,
declared and checked with the rest of the state, :mod:`okl.runtime.state`).

State layout: one row per calibrated output, ``[a_pos, a_neg, h_pos, h_neg, n_pos, n_neg]``; a
binary learner has one row. A K-class learner keeps K rows, one per one-vs-rest margin, and
:func:`probabilities` normalises the K calibrated probabilities (``state`` of shape (K, 6),
decisions of shape (n, K)); the binary case is K = 1 with P(-1) = 1 - P(+1).

References: J. Platt, "Probabilistic outputs for support vector machines and comparisons to
regularized likelihood methods", Advances in Large Margin Classifiers, MIT Press, 1999;
B. Bercu, A. Godichon-Baggioni, B. Portier, "An efficient stochastic Newton algorithm for
parameter estimation in logistic regressions", SIAM J. Control Optim. 58(1):348-367, 2020.
"""

from __future__ import annotations

import math

import numpy as np

from okl._jit import jit

#: state columns per output: the slopes a_+ and a_-, their curvatures h_+ and h_-, class counts
N_STATE = 6
#: rounds of memory of the curvature (gamma = 1 - 1 / MEMORY)
MEMORY = 1000.0
#: damping of the curvature: h >= PRIOR (about one observation's worth at |f| = 1)
PRIOR = 1.0
#: floor of the curvature weight p (1 - p)
H_FLOOR = 0.01
#: smallest slope (keeps the probability strictly increasing in the decision)
A_MIN = 1e-3
#: largest change of a f at the round's own f in one step
MAX_STEP = 2.0
#: decisions are clipped to +/- F_CLIP before use (a diverged decision cannot break the fit)
F_CLIP = 1e6
#: the decay of the curvature per round
GAMMA = 1.0 - 1.0 / MEMORY


def new_state(n_outputs: int = 1) -> np.ndarray:
    """A fresh calibration state: ``n_outputs`` rows of [a_+ = 1, a_- = 1, h = PRIOR, counts 0]."""
    s = np.zeros((int(n_outputs), N_STATE))
    s[:, 0] = s[:, 1] = 1.0
    s[:, 2] = s[:, 3] = PRIOR
    return s


@jit
def _sigmoid(z):
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@jit
def state_step(s, f, positive, gamma):
    """One round on the state row ``s`` (in place) with decision f and label (+1: positive);
    returns the probability of +1 given before the step (gamma: the curvature's decay)."""
    f = min(max(f, -F_CLIP), F_CLIP)
    side = 0 if f >= 0.0 else 1
    p = _sigmoid(s[side] * f)
    if positive:
        tau = (s[4] + 1.0) / (s[4] + 2.0)
        s[4] += 1.0
    else:
        tau = 1.0 / (s[5] + 2.0)
        s[5] += 1.0
    s[2] = gamma * s[2] + (1.0 - gamma) * PRIOR
    s[3] = gamma * s[3] + (1.0 - gamma) * PRIOR
    s[2 + side] += max(p * (1.0 - p), H_FLOOR) * f * f
    d = (p - tau) * f / s[2 + side]
    dz = abs(d * f)
    if dz > MAX_STEP:
        d *= MAX_STEP / dz
    s[side] = max(s[side] - d, A_MIN)
    return p


@jit
def state_steps(s, F, Y, out, gamma):
    for i in range(F.shape[0]):
        out[i] = state_step(s, F[i], Y[i] > 0.0, gamma)


def update(state: np.ndarray, decisions, labels, memory: float = MEMORY) -> np.ndarray:
    """Learn the rounds (decision before learning, label -1/+1) in order, in place on the first
    row of ``state``; returns each round's probability of +1 given before its step. ``memory``:
    rounds of curvature kept (default :data:`MEMORY`; the learners use the default)."""
    F = np.ascontiguousarray(decisions, dtype=np.float64).reshape(-1)
    Y = np.ascontiguousarray(labels, dtype=np.float64).reshape(-1)
    out = np.empty(F.shape[0])
    if F.shape[0]:
        state_steps(state[0], F, Y, out, 1.0 - 1.0 / memory)
    return out


def update_one(state: np.ndarray, decision: float, label: float) -> float:
    """:func:`update` for one round (the same compiled step)."""
    return state_step(state[0], float(decision), label > 0, GAMMA)


def probabilities(state: np.ndarray, decisions) -> np.ndarray:
    """Calibrated probabilities of the decisions (no state change). One output (K = 1):
    P(+1) per decision, shape (n,). K outputs (decisions of shape (n, K)): the K calibrated
    one-vs-rest probabilities normalised to sum 1 per row, shape (n, K)."""
    F = np.clip(np.asarray(decisions, dtype=np.float64), -F_CLIP, F_CLIP)
    if state.shape[0] == 1:
        F = F.reshape(-1)
        z = np.where(F >= 0.0, state[0, 0], state[0, 1]) * F
        return np.exp(-np.logaddexp(0.0, -z))
    z = np.where(F >= 0.0, state[:, 0], state[:, 1]) * F
    p = np.exp(-np.logaddexp(0.0, -z))
    return p / p.sum(axis=1, keepdims=True)


def probability(state: np.ndarray, decision: float) -> float:
    """P(+1) of one decision under a one-output state."""
    f = min(max(float(decision), -F_CLIP), F_CLIP)
    return float(_sigmoid((state[0, 0] if f >= 0.0 else state[0, 1]) * f))


def state_ok(state: np.ndarray) -> bool:
    """Whether a (loaded) state can be used: finite, slopes >= A_MIN, curvatures >= PRIOR
    (within rounding), counts >= 0."""
    s = np.asarray(state)
    return bool(s.ndim == 2 and s.shape[1] == N_STATE and np.isfinite(s).all()
                and (s[:, :2] >= A_MIN).all() and (s[:, 2:4] >= 0.5 * PRIOR).all() and (s[:, 4:] >= 0).all())


__all__ = ["new_state", "update", "update_one", "probabilities", "probability", "state_ok", "N_STATE",
           "MEMORY"]

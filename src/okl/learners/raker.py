"""Raker and AdaRaker: random-feature online multi-kernel learning (Shen, Chen & Giannakis, JMLR 20 2019).

../shared/KAF.md K9. **Raker** keeps P Gaussian kernels of widths s_1..s_P;
kernel p has D random Fourier directions v_pi ~ N(0, s_p^-2 I) and the map

    z_p(x) = [cos(v_p1^T x), ..., cos(v_pD^T x), sin(v_p1^T x), ..., sin(v_pD^T x)] / sqrt(D)

(the reference codes write sin before cos: a permutation of the same features), its own weights theta_p and
f_p(x) = theta_p^T z_p(x). Each round, with E_p the kernels' exponents (all 0 at the start),

    predict  f(x_t) = sum_p w_p f_p(x_t) / sum_p w_p,   w_p = exp(-(E_p - min_q E_q))
    then     E_p     <- E_p + eta_w l(f_p(x_t), y_t) / u_t
             theta_p <- (1 - 2 eta reg) theta_p - eta l'(f_p(x_t), y_t) z_p(x_t)

(The paper's full text was not at hand, only its abstract: no equation numbers are given here. The
rule is KAF.md K9's, checked against the ``Raker`` class of the OMKL-GF code, pouyamghari/
OMKL-GF_ICML_2020 ``mkl_algorithms.py``, whose authors ran it as the published baseline: the same
features, theta step, exponential weights on the pre-step prediction's loss plus lambda ||theta||^2.)

so w_p is KAF.md's w_p <- w_p exp(-eta_w loss_p) (w_p = 1 at the start) kept as an exponent (no underflow: a
squared loss of targets in their own units would zero every weight in a few rounds), and the
exponents are shifted by their minimum after each round (the weights do not change). Each theta_p
is exactly :mod:`okl.learners.fogd`'s OGD step on its kernel's features (its compiled pieces:
``project_t``, ``fourier_from_projections``; okl's squared loss is (f - y)^2, l' = 2 (f - y), the
OMKL-GF code's gradient; ``ogd_step`` divides by max(1, ||z||^2) = 1). Classification takes the hinge
(or logistic) loss and its gradient in both places; regression the squared loss. With ``reg`` > 0
the weights pay l + reg ||theta_p||^2 (theta_p before the round's step; the OMKL-GF code takes it
after).

u_t, the loss unit (``loss_unit``): ``"targets"`` (okl's default) divides each loss by the running
mean of the squared targets the model has learned (this round's included; the residuals under
target centring), so eta_w is unit-free: a regression stream in any units weighs its kernels as
its [0, 1]-scaled copy does, and for labels -1/+1 u_t = 1 exactly (KAF.md's rule). ``"none"``:
u_t = 1 (the published protocol, whose targets are scaled to [0, 1]).

**AdaRaker** runs K Raker instances on geometric covering intervals (Daniely, Gonen &
Shalev-Shwartz, ICML 2015) and mixes them by exponential weights for adaptive regret. Instance k <
K - 1 restarts (theta = 0, equal kernel weights) every L_k = ``shortest`` x 2^k of the model's
rounds, i.e. it covers the intervals [i L_k, (i + 1) L_k - 1]; the last instance never restarts
(it is Raker itself, so AdaRaker contains Raker). Instance k's mixture weight is kept as an
exponent m_k <- m_k + eta_w l(f^(k)(x_t), y_t) / u_t, f(x_t) = sum_k exp(-(m_k - min m)) f^(k) /
sum(...); on a restart the instance's share of the mixture is set to a prior pi and the other
instances keep their proportions. ``restart_share="rounds"`` (okl's default): pi = 1/(t + 1)
after t rounds, Follow the Leading History's share for a new expert (Hazan & Seshadhri 2007);
``"interval"``: pi = min(1/2, 1/sqrt(L_k)), the initial weight eta_I of Daniely et al.'s SAOL,
whose intervals AdaRaker takes (the reference code's initial weight is its step likewise), the
never-restarting instance's taking L = 2 x the longest interval. Every instance
shares one draw of the random directions (the reference MATLAB code does too), so one feature map
a round serves all of them.

(check) items, settled: the reference MATLAB code (N1cekiko/AdaRaker, ``mkl_adap_online_rf.m``)
uses base-2 intervals (S = 2) with one instance per scale added as t passes 2^k, sets a restarted
instance's meta weight to its step eta_k = min(0.1/S, 0.1/sqrt(S^k)), normalises its losses
per round to [-1, 1] and multiplies the weights by beta^ratio; its reset of theta is commented out.
okl implements the covering-interval construction instead: base 2, theta and the kernel weights
restart with the interval, the meta step is eta_w (the kernels' step), the scales are capped (K
instances, the shortest interval ``shortest``) so the state has a fixed size. The share a
restarted instance gets is okl's choice, measured (docs/results/raker.md): with SAOL's
min(1/2, 1/sqrt|I|) a fresh instance (theta = 0: it predicts 0, or the running mean under target
centring) takes a large share every time it restarts, and AdaRaker lost 2.4 dB to Raker on the
Lorenz series in time order (shortest 64; 16.8 dB with shortest 8), while FLH's 1/(t + 1) kept
Raker's -11.47 dB there (and its MSE on mg30 and santafe) and most of the gain on the adversarial
streams (german-1: Raker 9.21 %; AdaRaker 6.52 % with 1/(t + 1) and shortest 8, 5.99 % with
min(1/2, 1/sqrt|I|) and shortest 64).
The reference code tunes each instance's step to its interval length, ~ 1/sqrt(|I|); okl's
default keeps one constant step for all (below); ``step_schedule="inverse sqrt"`` gives instance
k the steps eta / sqrt(a), eta_w / sqrt(a) at its age a (rounds since its restart), the anytime
form of that tuning, and Raker the same with a = t.

Widths. okl chooses one width sigma_0 from the stream's first rows (:func:`okl.kernels.scale_sigma`,
the width window; a given ``kernel``'s sigma otherwise); the widths are sigma_0 x ``widths``,
default the 9 multiples 10^(j/4), j = -4..4 (0.1, 0.178, 0.316, 0.562, 1, 1.78, 3.16, 5.62, 10:
two decades around sigma_0), so a per-feature affine map of the input changes no decision. The
published protocol (OMKL-GF, ICML 2020, whose code runs Raker): 17 kernels whose random
frequencies have variance gamma_i = 10^((i - 8)/2), i = 0..16, i.e. widths s_i = gamma_i^(-1/2) =
10^((8 - i)/4) from 100 to 0.01, D = 50, eta = eta_w = 1/sqrt(t), reg = 1e-3, on inputs and
targets scaled to [0, 1] (okl's loaders scale as the papers did): :meth:`Raker.paper_params`.

Defaults (okl-style, validated on staged sets outside the comparison: spambase, svmguide1, ijcnn1,
elevators, parkinson; docs/results/raker.md): D = 2 x ``budget`` directions per kernel (200; FOGD
has D = 4B at one width; D = B lost up to 0.5 points (ijcnn1) and had 43 % more MSE on parkinson);
eta = 0.5 with a classification loss and 0.2 (FOGD's, i.e. KOGD's, step) with the squared loss
(0.5 against 0.2: 0.1 to 1.5 points fewer mistakes on the four classification sets, 42 % more MSE
on parkinson; 1.0 was worse than 0.5 on three of the four); eta_w = 0.5 per unit of the loss unit
(0.05 .. 5 moved mistake rates by at most 0.3 points and parkinson's MSE by 0.5 %); constant
steps; reg = 0. AdaRaker: K = 8 instances, shortest interval 8 rounds (intervals 8, 16, .., 512 and
the whole stream), restart share 1/(t + 1).

A composition (:mod:`okl.components`): the ``"fourier kernels"`` map (the P kernels' directions,
:func:`okl.components.maps.fourier.fourier_kernels_features`) with the ``"exponential weights"``
step (:mod:`okl.components.steps.raker`: the kernels' OGD steps and weights, AdaRaker's
instances), which ``auto``'s engine runs with one output. A single learner's events take the
per-event hooks ``_event_features`` / ``_event_learn``, with the one compiled round function
(:func:`~okl.components.steps.raker.raker_round`) that ``_process``'s loop and the engine also
call, so per-event decisions equal run()'s, and auto's, bit for bit.

Cost per round: O(P D d) for the projections and O(P D) for the features (shared by AdaRaker's
instances), O(K P D) for the decisions and steps (K = 1 for Raker). Memory O(P D d + K P D).

>>> import okl
>>> X, y = okl.load_dataset("german")
>>> m = okl.make("raker", random_state=0)
>>> round(m.run(X, y).mistake_rate, 1)
25.7
>>> m.diagnostics()["kernels"]
9
"""

from __future__ import annotations

import math

import numpy as np

from okl.components import Plan
from okl._validation import MAX_ABS_FEATURE
from okl.kernels import RBF, Laplacian
from okl.learners.fogd import DEFAULT_ETA
from okl.components.steps.raker import raker_predict, raker_round, raker_rounds
from okl.runtime.base import Arr, Learner, StateSpec, register
from okl.runtime.events import EventWork
from okl.runtime.hyperparameters import BUDGET, ETA, KERNEL_LEARNER, Hyper, accept

#: the default width multipliers: 10^(j/4), j = -4..4 (two decades around the chosen width)
DEFAULT_WIDTHS = tuple(10.0 ** (j / 4.0) for j in range(-4, 5))
#: the published protocol's widths (OMKL-GF's code: frequency variances 10^((i - 8)/2), i = 0..16)
PAPER_WIDTHS = tuple(10.0 ** ((8 - i) / 4.0) for i in range(17))
#: the kernels' exponential-weights step per unit of the loss unit (okl's default)
DEFAULT_ETA_W = 0.5
#: the kernels' OGD step when eta is None: classification losses, the squared loss (FOGD's)
CLASSIFICATION_ETA, REGRESSION_ETA = 0.5, DEFAULT_ETA
STEP_DEFAULTS = "0.5 with a classification loss, 0.2 with the squared loss"
#: AdaRaker's default instances and shortest interval
DEFAULT_INSTANCES, DEFAULT_SHORTEST = 8, 8
MAX_KERNELS = 64


def check_widths(value):
    """The width multipliers as a tuple of finite positive floats (1..64 of them), or ValueError."""
    try:
        widths = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"widths must be a sequence of positive reals, got {value!r}") from None
    if not 1 <= len(widths) <= MAX_KERNELS or not all(math.isfinite(v) and v > 0.0 for v in widths):
        raise ValueError(f"widths must hold 1 to {MAX_KERNELS} finite reals > 0, got {value!r}")
    return widths


RAKER_BUDGET = BUDGET.but(doc="Sets D = 2 x budget directions per kernel when n_components is None.")
KERNEL_ETA = ETA.but(doc="Every kernel's OGD step.", optional=True, none_means=STEP_DEFAULTS)
N_COMPONENTS = Hyper("n_components", "int", "Random directions D per kernel (2D features each).", low=1,
                     optional=True, none_means="2 x budget", symbol="D")
WIDTHS = Hyper("widths", "any", "The kernels' widths as multiples of the chosen (or given) width.", optional=True,
               none_means="10^(j/4) for j = -4..4", custom=check_widths, bad=(0.0,), symbol="s_p / sigma_0")
ETA_W = Hyper("eta_w", "real", "The kernels' (and AdaRaker's instances') exponential-weights step.", low=0.0,
              symbol="eta_e")
REG = Hyper("reg", "real", "Ridge weight lambda: theta <- (1 - 2 eta lambda) theta - eta l' z.", low=0.0,
            symbol="lambda")
STEP_SCHEDULE = Hyper("step_schedule", "choice", "Constant steps, or eta / sqrt(a) at age a (rounds learned).",
                      choices=("constant", "inverse sqrt"))
LOSS_UNIT = Hyper("loss_unit", "choice", "Divide the weights' losses by the running mean square target, or not.",
                  choices=("targets", "none"))
RESTART_SHARE = Hyper("restart_share", "choice", "A restarted instance's share of the mixture: min(1/2, "
                      "1/sqrt(L)) for its interval length L, or 1/(t + 1) after t rounds.",
                      choices=("interval", "rounds"))
INSTANCES = Hyper("n_instances", "int", "Raker instances K (K - 1 restarting, one over the whole stream).",
                  low=1, high=40, symbol="K")
SHORTEST = Hyper("shortest", "int", "The shortest restart interval (rounds); instance k restarts every "
                 "shortest x 2^k.", low=1, high=2 ** 40)


# ---- the compiled core (shared by both learners: Raker is one instance) ----------------------


# ---- the learners ---------------------------------------------------------------------------


@register("raker")
class Raker(Learner):
    """Raker: P Gaussian kernels, each with D random Fourier features and its own OGD weights,
    mixed by exponential weights; see the module docstring.

    Parameters
    ----------
    budget : int, default 100
        Sets D = 2 x budget random directions per kernel when ``n_components`` is None.
    n_components : int or None
        Random directions D per kernel (2D features each).
    widths : sequence of float or None
        The kernels' widths as multiples of the chosen (or given) width; None: 10^(j/4), j = -4..4.
    eta : float or None, default None
        Every kernel's OGD step; None: 0.5 with a classification loss, 0.2 (FOGD's) with the squared loss.
    eta_w : float, default 0.5
        The exponential-weights step (per unit of the loss unit).
    reg : float, default 0
        Ridge weight lambda of every kernel's loss.
    step_schedule : {"constant", "inverse sqrt"}, default "constant"
        "inverse sqrt": eta / sqrt(t) and eta_w / sqrt(t) at round t (the published protocol).
    loss_unit : {"targets", "none"}, default "targets"
        "targets": the weights' losses are divided by the running mean square target.
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Seed of the random directions.
    """

    _state_attrs = ("U_", "theta_", "expo_", "meta_", "stats_")

    hyperparameters = (RAKER_BUDGET, N_COMPONENTS, WIDTHS, KERNEL_ETA, ETA_W, REG, STEP_SCHEDULE, LOSS_UNIT,
                       *KERNEL_LEARNER)

    def __init__(self, *, budget: int = 100, n_components: int | None = None, widths=None, eta: float | None = None,
                 eta_w: float = DEFAULT_ETA_W, reg: float = 0.0, step_schedule: str = "constant",
                 loss_unit: str = "targets", loss="hinge", kernel=None, center_targets: bool = True,
                 scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())
        self._check_kernel()

    def _check_kernel(self):
        if self.kernel is not None and not isinstance(self.kernel, (RBF, Laplacian)):
            raise ValueError(f"{self.name or type(self).__name__}: kernel must be RBF or Laplacian (a width to "
                             f"scale), got {self.kernel!r}")

    # ---- sizes ----

    def _layout(self) -> tuple[tuple, int]:
        """(the width multipliers, the directions D per kernel) after the defaults."""
        return self.widths or DEFAULT_WIDTHS, self.n_components or 2 * self.budget

    def _periods(self) -> np.ndarray:
        """Each instance's restart period in rounds (0: never)."""
        return np.zeros(1)

    def _priors(self) -> np.ndarray:
        """Each instance's share of the mixture on a restart (0: 1 / (t + 1) after t rounds)."""
        return np.ones(1)

    @classmethod
    def paper_params(cls, budget):
        """The published protocol (OMKL-GF's code for Raker): 17 widths 10^((8 - i)/4), i = 0..16, as
        multiples of a given width 1 (no width window), D = 50, eta = eta_w = 1/sqrt(t), reg = 1e-3,
        the raw losses, on the loaders' [0, 1]-scaled inputs and targets (no input map, no centring)."""
        return {**super().paper_params(budget), "kernel": RBF(sigma=1.0), "widths": PAPER_WIDTHS, "n_components": 50,
                "eta": 1.0, "eta_w": 1.0, "reg": 1e-3, "step_schedule": "inverse sqrt", "loss_unit": "none",
                "center_targets": False}

    def _state_spec(self):
        widths, D = self._layout()
        P, K = len(widths), len(self._periods())
        return StateSpec(fields={"U_": Arr((P * D, "dim")), "theta_": Arr(self._theta_shape(K, P, 2 * D)),
                                 "expo_": Arr(self._expo_shape(K, P), low=0.0), "meta_": Arr((K,)),
                                 "stats_": Arr((2,), low=0.0)})

    def _theta_shape(self, K, P, F):
        return (P, F)

    def _expo_shape(self, K, P):
        return (P,)

    def kernels_in_use(self) -> list:
        """The kernels in use (once the width is known)."""
        base = self.kernel_
        return [type(base)(sigma=base.sigma * m) for m in self._layout()[0]]

    def _start(self, dim):
        widths, D = self._layout()
        self.U_ = np.concatenate([k.sample_frequencies(D, dim, self._rng) for k in self.kernels_in_use()])
        P, K = len(widths), len(self._periods())
        self.theta_ = np.zeros(self._theta_shape(K, P, 2 * D))
        self.expo_ = np.zeros(self._expo_shape(K, P))
        priors = self._priors()
        self.meta_ = -np.log(priors) if priors.all() else np.zeros(len(priors))
        self.meta_ -= self.meta_.min()
        self.stats_ = np.zeros(2)

    # ---- the compiled core's arguments ----

    def _arrays(self):
        """(theta, expo) as the core's (K, P, 2D) and (K, P) views of the state."""
        widths, D = self._layout()
        return self.theta_.reshape(-1, len(widths), 2 * D), self.expo_.reshape(-1, len(widths))

    @property
    def eta_(self) -> float:
        """The kernels' OGD step in use."""
        if self.eta is not None:
            return self.eta
        return REGRESSION_ETA if self.loss_.task == "regression" else CLASSIFICATION_ETA

    def _constants(self, lkind):
        return (self.eta_, self.eta_w, self.reg, lkind, self.step_schedule == "inverse sqrt",
                self.loss_unit == "targets")

    composition = ("fourier kernels", "exponential weights")

    def compiled_plan(self):
        """The ``"fourier kernels"`` map (the P kernels' directions) with the ``"exponential
        weights"`` step (:mod:`okl.components.steps.raker`): ``auto``'s engine runs it."""
        if getattr(self, "U_", None) is None:
            return None
        eta, eta_w, reg, _, decaying, unit = self._constants(0)
        periods = self._periods()
        return Plan("fourier kernels", "exponential weights", w="theta_", UT=np.ascontiguousarray(self.U_.T), eta=eta,
                    options={"kernels": len(self._layout()[0]), "periods": periods, "priors": self._priors(),
                             "constants": (float(len(periods)), eta, eta_w, reg, float(decaying), float(unit))})

    def _decision(self, x):
        theta, expo = self._arrays()
        K, P, F = theta.shape
        ok, f = raker_predict(np.ascontiguousarray(self.U_.T), theta, expo, self.meta_, x, MAX_ABS_FEATURE,
                              np.empty(self.U_.shape[0]), np.empty(P * F), np.empty((K, P)), np.empty(K))
        if not ok:
            self.events.check_values(self, x)
        return f

    def _rounds(self, X, y, lkind):
        out = np.empty(X.shape[0])
        theta, expo = self._arrays()
        raker_rounds(X, np.asarray(y, dtype=np.float64), np.ascontiguousarray(self.U_.T), theta, expo, self.meta_,
                     self._periods(), self._priors(), self.stats_, *self._constants(lkind), out)
        return out

    def _process(self, X, y):
        return self._rounds(X, y, self.loss_.kind)

    def _event_block(self, X, y, out):
        out[:] = self._rounds(X, y, self.events.loss(self).kind)
        return X.shape[0]

    # ---- the per-event hooks (one compiled call each) ----

    def _event_plan(self, ev) -> EventWork:
        """The per-event work space, rebuilt when the directions, the weights or the loss changed."""
        w = ev.buf
        if w is None or w.U is not self.U_ or w.theta is not self.theta_ or w.loss is not self.loss:
            theta, expo = self._arrays()
            K, P, F = theta.shape
            w = ev.buf = EventWork(U=self.U_, theta=self.theta_, loss=self.loss, UT=np.ascontiguousarray(self.U_.T),
                                   theta3=theta, expo2=expo, periods=self._periods(), priors=self._priors(),
                                   p=np.empty(self.U_.shape[0]), z=np.empty(P * F), fk=np.empty((K, P)),
                                   fi=np.empty(K), lkind=self.events.loss(self, ev).kind)
        return w

    def _event_features(self, x, ev):
        w = self._event_plan(ev)
        ok, f = raker_predict(w.UT, w.theta3, w.expo2, self.meta_, x, MAX_ABS_FEATURE, w.p, w.z, w.fk, w.fi)
        if not ok:
            self.events.check_values(self, x)
        return f, w.z

    def _event_learn(self, x, y, z, ev):
        w = self._event_plan(ev)
        if z is None:
            self._event_features(x, ev)
        elif z is not w.z:
            w.z[:] = z
        return raker_round(w.UT, w.theta3, w.expo2, self.meta_, w.periods, w.priors, self.stats_, x, y,
                           *self._constants(w.lkind), w.p, w.z, w.fk, w.fi, True)

    # ---- reports ----

    def kernel_weights(self) -> np.ndarray:
        """The normalised kernel weights (rows: instances, for AdaRaker)."""
        _, expo = self._arrays()
        w = np.exp(expo.min(axis=1, keepdims=True) - expo)
        w /= w.sum(axis=1, keepdims=True)
        return w if expo.shape[0] > 1 else w[0]

    def diagnostics(self):
        widths = [k.sigma for k in self.kernels_in_use()]
        weights = self.kernel_weights()
        top = weights if weights.ndim == 1 else weights[-1]
        return {"kernels": len(widths), "features": 2 * self._layout()[1] * len(widths),
                "heaviest_width": float(widths[int(np.argmax(top))]), "heaviest_weight": float(top.max())}


@register("adaraker")
class AdaRaker(Raker):
    """AdaRaker: Raker instances restarted on geometric covering intervals, mixed by exponential
    weights; see the module docstring.

    Parameters
    ----------
    budget : int, default 100
        Sets D = 2 x budget random directions per kernel when ``n_components`` is None.
    n_components : int or None
        Random directions D per kernel (2D features each), shared by the instances.
    widths : sequence of float or None
        The kernels' widths as multiples of the chosen (or given) width; None: 10^(j/4), j = -4..4.
    n_instances : int, default 8
        K: instances k < K - 1 restart every ``shortest`` x 2^k rounds, the last never.
    shortest : int, default 8
        The shortest restart interval, in rounds.
    restart_share : {"rounds", "interval"}, default "rounds"
        A restarted instance's share of the mixture: 1/(t + 1) after t rounds (Follow the Leading
        History's), or min(1/2, 1/sqrt(L)) for its interval length L (SAOL's eta_I).
    eta : float or None, default None
        Every kernel's OGD step; None: 0.5 with a classification loss, 0.2 with the squared loss.
    eta_w : float, default 0.5
        The exponential-weights step of the kernels and of the instances.
    reg : float, default 0
        Ridge weight lambda of every kernel's loss.
    step_schedule : {"constant", "inverse sqrt"}, default "constant"
        "inverse sqrt": an instance's steps are eta / sqrt(a), eta_w / sqrt(a) at its age a.
    loss_unit : {"targets", "none"}, default "targets"
        "targets": the weights' losses are divided by the running mean square target.
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Seed of the random directions.

    >>> import numpy as np, okl
    >>> from okl.checks import friedman_regression   # Friedman #1, targets scaled to [0, 1]
    >>> X, y = friedman_regression(6000)
    >>> y = np.where(np.arange(len(y)) < 3000, y, 1.0 - y)  # the target turns over at row 3000
    >>> mse = {name: np.mean((okl.make(name, loss="squared", random_state=0).run(X, y).decisions - y) ** 2)
    ...        for name in ("raker", "adaraker")}
    >>> [round(float(mse[name]), 5) for name in ("raker", "adaraker")]   # the targets' variance: 0.024
    [0.0082, 0.00768]
    """

    hyperparameters = (RAKER_BUDGET, N_COMPONENTS, WIDTHS, INSTANCES, SHORTEST, RESTART_SHARE, KERNEL_ETA, ETA_W,
                       REG, STEP_SCHEDULE, LOSS_UNIT, *KERNEL_LEARNER)

    def __init__(self, *, budget: int = 100, n_components: int | None = None, widths=None,
                 n_instances: int = DEFAULT_INSTANCES, shortest: int = DEFAULT_SHORTEST, restart_share: str = "rounds",
                 eta: float | None = None,
                 eta_w: float = DEFAULT_ETA_W, reg: float = 0.0, step_schedule: str = "constant",
                 loss_unit: str = "targets", loss="hinge", kernel=None, center_targets: bool = True,
                 scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())
        self._check_kernel()

    @classmethod
    def paper_params(cls, budget):
        """Raker's protocol for every instance, with the covering intervals from length 1
        (instances 1, 2, 4, ..., 2^14 rounds and the whole stream) and SAOL's initial weights
        min(1/2, 1/sqrt|I|)."""
        return {**super().paper_params(budget), "n_instances": 16, "shortest": 1, "restart_share": "interval"}

    def _periods(self) -> np.ndarray:
        K = self.n_instances
        return np.array([float(self.shortest * 2 ** k) for k in range(K - 1)] + [0.0])

    def _priors(self) -> np.ndarray:
        if self.restart_share == "rounds":
            return np.zeros(self.n_instances)
        lengths = self._periods()
        lengths[-1] = 2.0 * lengths[-2] if len(lengths) > 1 else 1.0
        return np.minimum(0.5, 1.0 / np.sqrt(lengths))

    def _theta_shape(self, K, P, F):
        return (K, P, F)

    def _expo_shape(self, K, P):
        return (K, P)

    def instance_weights(self) -> np.ndarray:
        """The instances' normalised mixture weights (the last: the never-restarting instance)."""
        w = np.exp(self.meta_.min() - self.meta_)
        return w / w.sum()

    def diagnostics(self):
        weights = self.instance_weights()
        return {**super().diagnostics(), "instances": len(weights), "heaviest_instance": int(np.argmax(weights)),
                "whole_stream_weight": float(weights[-1])}


__all__ = ["AdaRaker", "DEFAULT_WIDTHS", "PAPER_WIDTHS", "Raker", "raker_round", "raker_rounds"]

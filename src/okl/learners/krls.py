"""The kernel recursive least-squares family: ALD-KRLS (``krls``), SW-KRLS (``sw-krls``), FB-KRLS (``fb-krls``).

Each keeps a compact dictionary D = {d_0..d_{m-1}} (rows 0..m-1 of ``SV_``) and predicts with the
kernel expansion f(x) = sum_{i<m} alpha_i kappa(d_i, x); a round predicts f_t = f(x_t), then learns
(x_t, y_t) with the a-priori error e_t = y_t - f_t. Notation of ../shared/KAF.md: k_t = [kappa(d_j,
x_t)]_j, k_tt = kappa(x_t, x_t).

**ALD-KRLS** (Engel, Mannor & Meir, "The kernel recursive least-squares algorithm", IEEE TSP 52(8)
2004, the algorithm's table; KAF.md K4; KAFBOX ``lib/krls.m``; the paper's equation numbers were not
at hand here: the rule below is KAF.md's, checked against KAFBOX). State Kinv = K_D^{-1}, P, alpha.
a_t = Kinv k_t, delta_t = k_tt - k_t' a_t (the approximate-linear-dependence test).

* delta_t > nu and m < budget (novel: x_t joins D): Kinv <- (1/delta_t) [[delta_t Kinv
  + a a', -a], [-a', 1]]; P <- [[P, 0], [0', 1]]; alpha <- [alpha - a e_t / delta_t ; e_t / delta_t].
* otherwise (reduced update): q = P a / (1 + a' P a); P <- P - q a' P; alpha <- alpha + Kinv q e_t.

nu = ``threshold`` (KAFBOX's 1e-4). KAFBOX caps the dictionary at M = 1000 and then takes the reduced
update for every input; okl does the same with ``budget`` = 200 by default. The round costs O(m^2)
(four m x m passes): at 200 about 70 us (codrna, cpusmall, cadata: 13,000-16,000 rounds/s), where
1000 would cost 25x that, and at okl's chosen widths the dictionary fills on every staged set
(the published Lorenz setting stores 31 elements, Lorenz at the defaults 74). 100 elements lose on
codrna (5.0 % against 4.4 %) and tie on cadata (docs/results/krls.md).
Measured, published Lorenz setting (``kernel=okl.RBF(sigma=32)`` on the raw values, ``scale=None``,
``center_targets=False``, ``loss="squared"``, embedding 6 in time order, ``threshold=1e-4``): MSE
over samples 1001..10000 = -40.18 dB with 31 elements (KAFBOX README: -40.17 dB). The number is
fragile: the ALD test at nu = 1e-4 decides on differences of 1e-4 between numbers near 1 and Kinv
has entries of order 1/nu, so rounding is amplified (a 1-ulp change of one kernel value moves the
decisions of 300 Lorenz samples by 1e-5 relative). A NumPy transcription of the rule gives -40.45 dB
with the same 31 elements (KAF.md's, -40.30 dB), and with KAFBOX's squared distances
||x||^2 + ||x'||^2 - 2 x.x' (``kernel.m``) 32 elements and -40.48 dB: a spread of 0.3 dB that is
rounding, not the rule (tests/test_krls.py asserts okl within 0.5 dB of -40.17).

**SW-KRLS** (Van Vaerenbergh, Via & Santamaria, "A sliding-window kernel RLS algorithm and its
application to nonlinear channel identification", ICASSP 2006; KAF.md K5; KAFBOX
``lib/swkrls.m``). D is the last M = ``budget`` inputs, y_D their labels, Ainv = (K_D + c I)^{-1},
alpha = Ainv y_D. Each round, grow Ainv by the new input (b = k_t, s = k_tt + c - b' Ainv b, g = 1/s,
h = Ainv b: Ainv <- [[Ainv + g h h', -g h], [-g h', g]]), then, past M, drop the oldest (writing
Ainv = [[e, f'], [f, G]]: Ainv <- G - f f' / e), and alpha = Ainv y_D. Defaults M = 50, c = 1e-2
(the KRLS-T paper's Fig. 3 setting; KAFBOX's class defaults are M = 100, c = 1e-4).

**FB-KRLS** (Van Vaerenbergh, Santamaria, Liu & Principe, "Fixed-budget kernel recursive least-squares",
ICASSP 2010, Alg. 2; KAF.md K6; KAFBOX ``lib/fbkrls.m``). As SW-KRLS (c = lambda = 1e-2, M = 100),
but past M the element removed is the least significant: the smallest a-posteriori error
|alpha_i| / [Ainv]_ii with alpha = Ainv y_D over the M + 1 stored (the new one included: KAFBOX's
rule); then alpha = Ainv y_D. The paper's label update (Section 3.3, Eq. 9), y_i <- y_i - mu
kappa(d_i, x_t) (y_i - y_t) for every stored i, is the option ``label_step`` = mu (default 0:
KAFBOX, which does not implement it); it is applied to the stored labels when (x_t, y_t) arrives,
before the growth and the pruning (on the new element itself it is 0 anyway).

Tasks: these are least-squares rules. With ``loss="squared"`` they are the published filters; with a
classification loss (the default ``"hinge"``, or any other) the same rule runs on the labels -1/+1
(least-squares classification: the class is the sign of the decision). The loss only names the task.

Numerical care. Every matrix is kept exactly symmetric: each update's term for (i, j) is a product
that is the same float for (j, i) (u_i u_j = u_j u_i): P <- P - r r' / (1 + a' r) with r = P a,
Kinv + a a' / delta, Ainv + g h h', G - f f' / e, the published rule with the products grouped
symmetrically. This matters: the removal G - f f' / e reads one column, so it assumes symmetry,
and a transcription that writes SW-KRLS's growth as Ainv + g (Ainv b)(b' Ainv) loses it by rounding
and diverged (decisions of 1e15) within 300 Lorenz samples at width 2, where the symmetric form
stays within 1e-12 of okl's. In exact arithmetic s = k_tt + c - b' Ainv b is at least c (the Schur
complement of K + c I); okl takes max(s, c), so a rounding error cannot make the inverse indefinite.
In ALD-KRLS delta_t < 0 (rounding) is simply not novel. Measured after 20,000 rounds of codrna and
all 20,640 of cadata, permuted, at the defaults: max |Kinv K - I| = 1.5e-9 / 2.5e-7 (ALD-KRLS,
cond(K) = 3e5 / 3e6), max |Ainv (K + c I) - I| = 6e-13 / 2e-12 (SW) and 7e-12 / 1e-11 (FB). The
last quarter's error is that of the whole run for ALD- and SW-KRLS; FB-KRLS's grows (codrna 24.6 %
against 20.9 %), which is its pruning rule keeping the elements its neighbours do not predict, i.e.
the noisy ones, not its numerics (docs/results/krls.md).

Layout: the dictionary stays compact: a removal shifts the rows after it up by one (and the rows
and columns of Ainv, the labels), so rows 0..m-1 are live and in order of arrival. ALD-KRLS stores
``budget`` rows; SW- and FB-KRLS ``budget`` + 1 (the element that joins before one is removed).

Paths. Each learner is a composition (:mod:`okl.components`): the expansion map over the
dictionary with the ``"ald-krls"`` step or the ``"window-krls"`` step (SW and FB, which differ only
in the element removed; :mod:`okl.components.steps.krls`, where the compiled rounds live), so
``auto``'s engine runs it as a member with one output. One compiled round per learner
(:func:`~okl.components.steps.krls.ald_round`, :func:`~okl.components.steps.krls.window_round`) is
used by the compiled loops of ``run()``, by the per-event hooks (``predict_one``: the kernel row
and the decision in one compiled call; ``learn_one``: the round on that cached row in one more)
and by the engine, so per-event decisions equal ``run()``'s bit for bit. The decision is
:func:`okl.components.maps.expansion.expansion_decision`'s sum (same terms, same order). K classes
are K copies of the learner.

Per-round cost: O(m d) for the kernel row plus O(m^2) for the update (m <= ``budget``); memory
O(budget d + budget^2) (two budget x budget matrices for ALD-KRLS, one for SW / FB).

>>> import okl
>>> X, y = okl.load_dataset("german")   # least-squares classification, in file order
>>> for name in ("krls", "sw-krls", "fb-krls"):
...     m = okl.make(name)
...     print(name, round(m.run(X, y).mistake_rate, 1), m.diagnostics())
krls 27.5 {'dictionary': 200}
sw-krls 31.3 {'dictionary': 50}
fb-krls 35.7 {'dictionary': 100}
"""

from __future__ import annotations

import numpy as np

from okl._validation import MAX_ABS_FEATURE
from okl.components import Plan
from okl.components.maps.expansion import expansion_decision
from okl.components.steps.krls import ald_round, ald_rounds, event_features, window_round, window_rounds
from okl.runtime.base import Arr, Learner, Num, StateSpec, register
from okl.runtime.events import EventWork
from okl.runtime.hyperparameters import BUDGET, KERNEL_LEARNER, Hyper, accept

THRESHOLD = Hyper("threshold", "real", "ALD threshold nu: an input joins when delta_t > nu.", low=0.0, low_open=True,
                  symbol="nu")
REGULARIZATION = Hyper("regularization", "real", "Ridge c: Ainv = (K_D + c I)^{-1}.", low=0.0, low_open=True,
                       symbol="c (lambda)")
LABEL_STEP = Hyper("label_step", "real", "FB-KRLS's label update step mu (0: none, KAFBOX).", low=0.0, high=1.0,
                   symbol="mu")


# ---- the compiled pieces --------------------------------------------------------------------


# ---- the learners ---------------------------------------------------------------------------

class _KRLSFamily(Learner):
    """What the three share: the expansion decision, the per-event hooks, the state's layout."""

    _divergence_hint = "raise threshold (fewer, less dependent dictionary elements)"

    def _capacity(self) -> int:
        """Rows stored: ``budget`` (ALD) or ``budget`` + 1 (an element joins before one leaves)."""
        return self.budget

    def _decision(self, x):
        return expansion_decision(*self.kernel_.spec(), self.SV_, self.alpha_, self.m_, x)

    def compiled_plan(self):
        """The expansion map over the dictionary with this learner's step and its declared state
        (:mod:`okl.components.steps.krls`): ``auto``'s engine runs it."""
        return Plan("expansion", self.composition[1], SV="SV_", w="alpha_", counts="m_", budget=self._capacity(),
                    kernel=self.kernel_.spec(), **self._step_declaration())

    def _event_work(self, ev) -> EventWork:
        """The per-event kernel row and work space (rebuilt when the state's arrays were replaced)."""
        w = ev.buf
        if w is None or w.SV is not self.SV_:
            cap = self.SV_.shape[0]
            w = ev.buf = EventWork(SV=self.SV_, k=np.empty(cap), work=np.empty((2, cap)))
        return w

    def _event_features(self, x, ev):
        w = self._event_work(ev)
        ok, f = event_features(*self.kernel_.spec(), self.SV_, self.alpha_, self.m_, x, MAX_ABS_FEATURE, w.k)
        if not ok:
            self.events.check_values(self, x)
        return f, w.k

    def _event_learn(self, x, y, z, ev):
        if z is None:  # (learn_one without predict_one: the row checked and its kernel row computed first)
            z = self._event_features(x, ev)[1]
        f, self.m_ = self._round(x, float(y), z, True, self._event_work(ev).work)
        return f

    def diagnostics(self):
        return {"dictionary": int(self.m_)}


@register("krls")
class KRLS(_KRLSFamily):
    """ALD-KRLS: kernel recursive least squares with approximate linear dependence; see the module docstring.

    Parameters
    ----------
    threshold : float, default 1e-4
        The ALD threshold nu: an input joins the dictionary when delta_t > nu (KAFBOX's default).
    budget : int, default 200
        The dictionary's cap: once full, every input takes the reduced update.
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Unused (ALD-KRLS is deterministic); accepted for a uniform interface.

    """

    _state_attrs = ("SV_", "alpha_", "Kinv_", "P_", "m_")
    composition = ("expansion", "ald-krls")

    hyperparameters = (THRESHOLD, BUDGET.but(doc="The dictionary's cap (then every input takes the reduced update)."),
                       *KERNEL_LEARNER)

    def __init__(self, *, threshold: float = 1e-4, budget: int = 200, loss="hinge", kernel=None,
                 center_targets: bool = True, scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())

    @classmethod
    def paper_params(cls, budget):
        """KAFBOX's threshold and no target centring; the Lorenz demo's width (32 on the raw values) is
        the series' own, passed as ``kernel=okl.RBF(sigma=32)`` (module docstring)."""
        return {**super().paper_params(budget), "threshold": 1e-4, "center_targets": False}

    def _state_spec(self):
        cap = self._capacity()
        return StateSpec(fields={"SV_": Arr((cap, "dim")), "alpha_": Arr((cap,)), "Kinv_": Arr((cap, cap)),
                                 "P_": Arr((cap, cap)), "m_": Num(int, 0, (cap, "n_seen"))})

    def _start(self, dim):
        cap = self._capacity()
        self.SV_ = np.zeros((cap, dim))
        self.alpha_ = np.zeros(cap)
        self.Kinv_ = np.zeros((cap, cap))
        self.P_ = np.zeros((cap, cap))
        self.m_ = 0

    def _step_declaration(self) -> dict:
        return dict(constants=(self.threshold,), state=(("Kinv", "Kinv_"), ("P", "P_")))

    def _round(self, x, y, k, have_k, work):
        f, m = ald_round(*self.kernel_.spec(), x, y, k, have_k, self.SV_, self.alpha_, self.Kinv_, self.P_,
                         self.m_, self.threshold, work)
        return f, int(m)

    def _process(self, X, y):
        out = np.empty(X.shape[0])
        self.m_ = int(ald_rounds(*self.kernel_.spec(), X, np.asarray(y, dtype=np.float64), out, self.SV_,
                                 self.alpha_, self.Kinv_, self.P_, self.m_, self.threshold))
        return out


class _WindowKRLS(_KRLSFamily):
    """SW- and FB-KRLS: the stored pairs, Ainv = (K_D + c I)^{-1} and alpha = Ainv y_D."""

    _state_attrs = ("SV_", "yD_", "alpha_", "Ainv_", "m_")
    composition = ("expansion", "window-krls")
    _divergence_hint = "raise regularization (the ridge c of (K_D + c I)^-1)"
    #: the element removed past the budget: False the oldest (SW), True the least significant (FB)
    _prune_smallest = False

    def _capacity(self) -> int:
        return self.budget + 1

    def _label_step(self) -> float:
        return 0.0

    def _state_spec(self):
        cap = self._capacity()
        return StateSpec(fields={"SV_": Arr((cap, "dim")), "yD_": Arr((cap,)), "alpha_": Arr((cap,)),
                                 "Ainv_": Arr((cap, cap)), "m_": Num(int, 0, (self.budget, "n_seen"))})

    def _start(self, dim):
        cap = self._capacity()
        self.SV_ = np.zeros((cap, dim))
        self.yD_ = np.zeros(cap)
        self.alpha_ = np.zeros(cap)
        self.Ainv_ = np.zeros((cap, cap))
        self.m_ = 0

    def _step_declaration(self) -> dict:
        return dict(constants=(self.budget, self.regularization, float(self._prune_smallest), self._label_step()),
                    state=(("yD", "yD_"), ("Ainv", "Ainv_")))

    def _round(self, x, y, k, have_k, work):
        f, m = window_round(*self.kernel_.spec(), x, y, k, have_k, self.SV_, self.yD_, self.alpha_, self.Ainv_,
                            self.m_, self.budget, self.regularization, self._prune_smallest, self._label_step(),
                            work)
        return f, int(m)

    def _process(self, X, y):
        out = np.empty(X.shape[0])
        self.m_ = int(window_rounds(*self.kernel_.spec(), X, np.asarray(y, dtype=np.float64), out, self.SV_,
                                    self.yD_, self.alpha_, self.Ainv_, self.m_, self.budget, self.regularization,
                                    self._prune_smallest, self._label_step()))
        return out


@register("sw-krls")
class SWKRLS(_WindowKRLS):
    """SW-KRLS: kernel recursive least squares on a sliding window; see the module docstring.

    Parameters
    ----------
    budget : int, default 50
        The window M: the last M pairs are the dictionary.
    regularization : float, default 1e-2
        The ridge c of Ainv = (K_D + c I)^{-1}.
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Unused (SW-KRLS is deterministic); accepted for a uniform interface.

    """

    hyperparameters = (BUDGET.but(doc="The window M: the last M pairs."), REGULARIZATION, *KERNEL_LEARNER)

    def __init__(self, *, budget: int = 50, regularization: float = 1e-2, loss="hinge", kernel=None,
                 center_targets: bool = True, scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())

    @classmethod
    def paper_params(cls, budget):
        """The KRLS-T paper's Fig. 3 setting (c = 1e-2, no target centring; its width 1 is the
        channel's, passed as ``kernel``)."""
        return {**super().paper_params(budget), "regularization": 1e-2, "center_targets": False}


@register("fb-krls")
class FBKRLS(_WindowKRLS):
    """FB-KRLS: fixed-budget kernel recursive least squares; see the module docstring.

    Parameters
    ----------
    budget : int, default 100
        M: past M pairs, the least significant (smallest |alpha_i| / [Ainv]_ii) is removed.
    regularization : float, default 1e-2
        The ridge lambda = c of Ainv = (K_D + c I)^{-1} (KAFBOX's ``lambda``).
    label_step : float, default 0.0
        mu of the paper's label update y_i <- y_i - mu kappa(d_i, x_t) (y_i - y_t) (Eq. 9); 0: none
        (KAFBOX).
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Unused (FB-KRLS is deterministic); accepted for a uniform interface.

    """

    _prune_smallest = True

    hyperparameters = (BUDGET.but(doc="M: past M pairs the least significant is removed."), REGULARIZATION,
                       LABEL_STEP, *KERNEL_LEARNER)

    def __init__(self, *, budget: int = 100, regularization: float = 1e-2, label_step: float = 0.0, loss="hinge",
                 kernel=None, center_targets: bool = True, scale: str | None = "auto",
                 random_state: int | None = None):
        accept(self, locals())

    def _label_step(self) -> float:
        return self.label_step

    @classmethod
    def paper_params(cls, budget):
        """KAFBOX's lambda = 1e-2 without the label update, no target centring."""
        return {**super().paper_params(budget), "regularization": 1e-2, "label_step": 0.0, "center_targets": False}


__all__ = ["FBKRLS", "KRLS", "LABEL_STEP", "REGULARIZATION", "SWKRLS", "THRESHOLD"]

"""BSGD: budgeted stochastic gradient descent (Pegasos kernel SVM with budget maintenance).

Wang, Crammer & Vucetic, "Breaking the curse of kernelization: budgeted stochastic gradient
descent for large-scale SVM training", JMLR 13 2012 (../shared/KAF.md K8; reference C++:
BudgetedSVM, ``src/bsgd.cpp``). f(x) = sum_{i in SV} alpha_i kappa(x_i, x). Round t (t = 1, 2, ...
since the learner started), after predicting f(x_t):

* eta_t = 1 / (lambda t) (Pegasos, the paper's BSGD with that step); every alpha_i <- (1 - eta_t
  lambda) alpha_i;
* if l'(f(x_t), y_t) != 0 (hinge: y_t f(x_t) < 1, a margin error), x_t joins the support vectors
  with alpha = -eta_t l'(f, y_t) (hinge: eta_t y_t);
* when |SV| = B + 1, **budget maintenance** (``maintenance``) takes the support vector m with the
  smallest |alpha_m| (the new one included) and

  - ``"remove"``: drops it;
  - ``"project"``: projects alpha_m phi(x_m) onto the span of the others, alpha_rest += alpha_m
    K_rest^{-1} k_rest,m, from a kept inverse kernel matrix K^{-1} of the support
    set: K_rest^{-1} k_rest,m = -K^{-1}[rest, m] / K^{-1}[m, m], and K_rest^{-1} = K^{-1}[rest,
    rest] - K^{-1}[rest, m] K^{-1}[m, rest] / K^{-1}[m, m] (O(B^2) a maintenance, not the O(B^3) of
    a solve; a new support vector grows K^{-1} by the bordered inverse, O(B^2)). An input within
    sqrt(1e-6 kappa(x, x)) of the span (the Projectron's floor, ``PROJECTRON_MIN_RESIDUAL``) is
    projected on arrival instead of joining, so K^{-1} stays finite;
  - ``"merge"`` (default): for every other n, with k_mn = kappa(x_m, x_n), the
    merged point z = h x_m + (1 - h) x_n has kappa(x_m, z) = k_mn^((1-h)^2) and kappa(x_n, z) =
    k_mn^(h^2) (Gaussian kernel; Laplacian: k_mn^(1-h) and k_mn^h), its coefficient alpha_z =
    alpha_m kappa(x_m, z) + alpha_n kappa(x_n, z) and the weight degradation
    ||alpha_m phi(x_m) + alpha_n phi(x_n) - alpha_z phi(z)||^2 = alpha_m^2 + alpha_n^2 +
    2 alpha_m alpha_n k_mn - alpha_z^2; h in [0, 1] maximises alpha_z^2
    by golden-section search (to a bracket of 2e-4, BudgetedSVM's tolerance), refined by Newton
    steps on the stationary point inside that bracket and compared with the two ends (below),
    and the pair (m, n) with the smallest degradation is replaced by (z, alpha_z).

Where BudgetedSVM differs: for a pair of coefficients of opposite signs it searches h outside
[0, 1] (in [1, 6] or [-5, 0]) and then clips a negative h to 0; here h stays in [0, 1] (KAF.md),
where such a pair's best merge is at an end (z at one of the two points: a projection onto it).
Golden-section search finds the maximum where alpha_z^2 is unimodal in h; for two distant points
of one sign (k_mn below about e^-2) it has two peaks near h = 0 and 1 and the search may return
the lower interior one, as BudgetedSVM's does (such a pair rarely has the smallest degradation).
BudgetedSVM returns the bracket's midpoint; the Newton steps added here make h exact to rounding,
so that it is a continuous function of the data: the midpoint moves by up to the tolerance when
a rounding-level change of the input flips one of the bracket's last comparisons (measured: 1e-5
changes of the decisions under an affine map of the input, which okl's checks refuse).
Merging needs the Gaussian or Laplacian kernel (the closed form of kappa(x, z)); removal and
projection take any kernel. BudgetedSVM has an optional bias term (BIAS_TERM): none here.
The rules are KAF.md K8's and BudgetedSVM's (the paper's text is not in ../shared/papers: no
equation numbers are given here).

Tasks: classification with the hinge loss (the paper's SVM) or any okl classification loss
through its derivative; regression through okl's squared loss (there is no epsilon-insensitive
loss in okl): alpha_t = -eta_t l'(f, y) = 2 eta_t (y - f), with eta_t capped at
:data:`SQUARED_STEP_CAP` = 0.25 (KLMS's default step, alpha_t = 0.5 e_t) for the losses whose
derivative grows with the residual (squared, squared hinge). Uncapped, eta_t = 1 / (lambda t)
exceeds the LMS bound (2 eta_t kappa(x, x) < 2) for t < 1 / lambda: on cpusmall (lambda 1e-4,
removal, a NumPy transcription) |f| passed 1e12 at round 6; capped, the MSE of the first 3,000
rounds was 0.0184. The decay uses the same eta_t.

lambda: Pegasos's lambda = 1 / (C n) needs the number of examples n, which a stream does not
know; the library takes a fixed lambda = 1e-4, validated on nine staged sets (2 permutations, at
most 20,000 rows, lambda in 1e-2..1e-6: docs/results/kaf-first.md): 1e-3 is best on four of them
but barely beats ijcnn1's majority rate (8.3 % against 9.6 %; 1e-4: 5.2 %), while 1e-4 is within
17 % of the best lambda on every set. Defaults: lambda 1e-4, B = 100, merging, a Gaussian kernel
whose width is chosen from the stream's first rows, the input map of :mod:`okl.scaling`.

Per-round cost O(B d) (the kernel row) and O(B) for the decay; a maintenance adds O(B d) for the
kernel values k_mn and B golden-section searches of 18 steps and up to 3 Newton steps, the
partners in lockstep (merge: O(B); cpusmall's squared loss merges every round, 47,000 rounds/s),
O(B^2) (project; a new support vector also O(B^2)) or O(B) (remove). Memory O(B d), plus O(B^2)
for projection's inverse.
"""

from __future__ import annotations

import math

import numpy as np

from okl._compiled import copy_into, jit, kernel_value, loss_derivative, times_and_quadratic
from okl._vecmath import exp_scalar
from okl.kernels import LAPLACIAN_KIND, RBF_KIND
from okl.learners._expansion import (PROJECTRON_MIN_RESIDUAL, bordered_inverse_grow, column_kernel_row,
                                     expansion_value_from, _BudgetedExpansion, _RowEvents)
from okl.losses import SQUARED, SQUARED_HINGE
from okl.runtime.base import Arr, Num, register
from okl.runtime.events import EventWork
from okl.runtime.hyperparameters import BUDGET, KERNEL_LEARNER, Hyper, accept

MAINTENANCE_RULES = ("merge", "remove", "project")
REMOVE, PROJECT, MERGE = 0, 1, 2
#: the largest Pegasos step under a loss whose derivative grows with the residual (module docstring)
SQUARED_STEP_CAP = 0.25
#: golden-section search for the merge's h: stop when the bracket is shorter than 2 x this
MERGE_TOLERANCE = 1e-4
#: Newton steps after the golden-section search (quadratic convergence from within 1e-4)
NEWTON_STEPS = 3
#: the golden ratio's conjugate, (sqrt(5) - 1) / 2
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
#: golden-section steps from [0, 1] to a bracket shorter than 2 MERGE_TOLERANCE (GOLDEN^k < 2 tol)
GOLDEN_STEPS = math.ceil(math.log(2.0 * MERGE_TOLERANCE) / math.log(GOLDEN))
LAMBDA = Hyper("regularization", "real", "The SVM regulariser lambda: eta_t = 1 / (lambda t), alpha decays by 1 - 1/t.",
               low=0.0, low_open=True, symbol="lambda")
MAINTENANCE = Hyper("maintenance", "choice", "Budget maintenance once B + 1 support vectors are stored.",
                    choices=MAINTENANCE_RULES)


@jit
def _merge_exponents(kind, h):
    """The exponents u_m(h), u_n(h) of k_mn in kappa(x_m, z) = k_mn^u_m, kappa(x_n, z) = k_mn^u_n
    for z = h x_m + (1 - h) x_n, and their first and second derivatives in h."""
    if kind == RBF_KIND:
        return (1.0 - h) * (1.0 - h), h * h, -2.0 * (1.0 - h), 2.0 * h, 2.0
    return 1.0 - h, h, -1.0, 1.0, 0.0


@jit
def merged_coefficient(kind, log_k, am, an, h):
    """alpha_z = alpha_m kappa(x_m, z) + alpha_n kappa(x_n, z) for z = h x_m + (1 - h) x_n, from
    log k_mn (Gaussian: kappa(x_m, z) = k_mn^((1-h)^2); Laplacian: k_mn^(1-h))."""
    um, un, _, _, _ = _merge_exponents(kind, h)
    return am * exp_scalar(log_k * um) + an * exp_scalar(log_k * un)


@jit
def merged_values(kind, L, am, A, n, X, out):
    """out[j] = alpha_z(X[j])^2 of :func:`merged_coefficient` for the partners j < n (log k_mj in
    L[j], alpha_j in A[j]): a straight loop over the partners (vectorised exp)."""
    if kind == RBF_KIND:
        for j in range(n):
            h = X[j]
            z = am * exp_scalar(L[j] * ((1.0 - h) * (1.0 - h))) + A[j] * exp_scalar(L[j] * (h * h))
            out[j] = z * z
    else:
        for j in range(n):
            h = X[j]
            z = am * exp_scalar(L[j] * (1.0 - h)) + A[j] * exp_scalar(L[j] * h)
            out[j] = z * z


@jit
def _newton_step(kind, log_k, am, an, h):
    """One Newton step of h towards a stationary point of alpha_z(h)^2; returns (h', whether the
    curvature there is that of a maximum)."""
    um, un, dm, dn, dd = _merge_exponents(kind, h)
    em = am * exp_scalar(log_k * um)
    en = an * exp_scalar(log_k * un)
    value = em + en
    slope = log_k * (em * dm + en * dn)
    curve = em * (log_k * log_k * dm * dm + log_k * dd) + en * (log_k * log_k * dn * dn + log_k * dd)
    second = slope * slope + value * curve  # (alpha_z^2)'' / 2
    if not second < 0.0:
        return h, False
    return h - value * slope / second, True


@jit
def merge_positions(kind, L, am, A, n, H, V, W):
    """For each partner j < n (log k_mj in L[j], alpha_j in A[j]), H[j] = the h in [0, 1]
    maximising alpha_z(h)^2 and V[j] = that maximum (:func:`merged_values`): golden-section search
    to a bracket shorter than 2 ``MERGE_TOLERANCE`` (as BudgetedSVM), then Newton steps on the
    stationary point while they stay in that bracket (h then to rounding: a continuous function of
    the inputs, where the bracket's last comparisons are not), and an end of [0, 1] when its value
    is at least as large (a maximum at an end: opposite signs, the Laplacian kernel). The partners'
    searches advance in lockstep (each step of golden-section search shrinks every bracket by the
    same factor), so each step's evaluations are one vectorised loop. W: work space (9 x n)."""
    lo, hi, p, q, fp, fq, x, v, left = W[0], W[1], W[2], W[3], W[4], W[5], W[6], W[7], W[8]
    for j in range(n):
        lo[j], hi[j] = 0.0, 1.0
        p[j] = 1.0 - GOLDEN
        q[j] = GOLDEN
    merged_values(kind, L, am, A, n, p, fp)
    merged_values(kind, L, am, A, n, q, fq)
    for _ in range(GOLDEN_STEPS):
        for j in range(n):
            if fp[j] >= fq[j]:
                hi[j], q[j], fq[j] = q[j], p[j], fp[j]
                x[j] = hi[j] - GOLDEN * (hi[j] - lo[j])
                left[j] = 1.0
            else:
                lo[j], p[j], fp[j] = p[j], q[j], fq[j]
                x[j] = lo[j] + GOLDEN * (hi[j] - lo[j])
                left[j] = 0.0
        merged_values(kind, L, am, A, n, x, v)
        for j in range(n):
            if left[j] == 1.0:
                p[j], fp[j] = x[j], v[j]
            else:
                q[j], fq[j] = x[j], v[j]
    for j in range(n):
        h = 0.5 * (lo[j] + hi[j])
        for _ in range(NEWTON_STEPS):
            step, is_max = _newton_step(kind, L[j], am, A[j], h)
            if not (is_max and lo[j] - MERGE_TOLERANCE <= step <= hi[j] + MERGE_TOLERANCE and 0.0 <= step <= 1.0):
                break
            h = step
        H[j] = h
        p[j] = 0.0
        q[j] = 1.0
    merged_values(kind, L, am, A, n, H, V)
    merged_values(kind, L, am, A, n, p, fp)
    merged_values(kind, L, am, A, n, q, fq)
    for j in range(n):
        if fp[j] >= V[j]:
            H[j], V[j] = 0.0, fp[j]
        if fq[j] >= V[j]:
            H[j], V[j] = 1.0, fq[j]


def merge_position(kind, log_k, am, an) -> float:
    """:func:`merge_positions` for one pair (log k_mn, alpha_m, alpha_n): its h."""
    H = np.empty(1)
    merge_positions(kind, np.array([float(log_k)]), float(am), np.array([float(an)]), 1, H, np.empty(1),
                    np.empty((9, 1)))
    return float(H[0])


@jit
def merge_degradation(am, an, k_mn, alpha_z):
    """||alpha_m phi(x_m) + alpha_n phi(x_n) - alpha_z phi(z)||^2 for a kernel with kappa(x, x) = 1
    and the optimal alpha_z (the projection of the pair onto phi(z))."""
    return am * am + an * an + 2.0 * am * an * k_mn - alpha_z * alpha_z


@jit
def smallest_coefficient(alpha, m):
    """The first index of the smallest |alpha_i|, i < m."""
    at = 0
    for i in range(1, m):
        if abs(alpha[i]) < abs(alpha[at]):
            at = i
    return at


@jit
def move_column(ST, alpha, src, dst):
    """Support vector ``src`` (column and coefficient) into slot ``dst``."""
    copy_into(ST[:, dst], ST[:, src])
    alpha[dst] = alpha[src]


@jit
def drop_from_inverse(Kinv, m, r):
    """Remove support vector r of m from K^{-1} (the Schur complement), the last one moving into
    slot r (as :func:`move_column` moves it)."""
    krr = Kinv[r, r]
    for p in range(m):
        if p != r:
            s = Kinv[p, r] / krr
            for q in range(m):
                if q != r:
                    Kinv[p, q] -= s * Kinv[r, q]
    last = m - 1
    if r != last:
        for q in range(m):
            Kinv[r, q] = Kinv[last, q]
        for p in range(m):
            Kinv[p, r] = Kinv[p, last]
        Kinv[r, r] = Kinv[last, last]


@jit
def maintain(kind, a, b, c, rule, ST, alpha, m, Kinv, xm, km, W, last):
    """Budget maintenance of m = B + 1 support vectors down to B (module docstring). ``xm``, ``km``,
    ``W``: work space (a column, a row of m, 14 rows of m); ``last`` receives (m, n, h, degradation) of the latest
    merge (n = -1, h = nan after a removal or projection). Returns the new count."""
    r = smallest_coefficient(alpha, m)
    ar = alpha[r]
    last[0] = r
    last[1] = -1.0
    last[2] = math.nan
    if rule == REMOVE:
        last[3] = ar * ar
    elif rule == PROJECT:
        krr = Kinv[r, r]
        # the removed vector's projection coefficients onto the rest: -K^{-1}[rest, r] / K^{-1}[r, r]
        for p in range(m):
            if p != r:
                alpha[p] -= ar * Kinv[p, r] / krr
        last[3] = ar * ar / krr
        drop_from_inverse(Kinv, m, r)
    else:
        copy_into(xm, ST[:, r])
        column_kernel_row(kind, a, b, c, ST, m, xm, km)
        # the partners n != r, packed: log k_rn, alpha_n and their slot
        L, A, slot, H, V = W[0], W[1], W[2], W[3], W[4]
        count = 0
        for n in range(m):
            if n != r:
                L[count] = max(math.log(km[n]) if km[n] > 0.0 else -math.inf, -700.0)
                A[count] = alpha[n]
                slot[count] = n
                count += 1
        merge_positions(kind, L, ar, A, count, H, V, W[5:])
        best, pick = math.inf, 0
        for j in range(count):
            loss = merge_degradation(ar, A[j], km[int(slot[j])], 0.0) - V[j]
            if loss < best:
                best, pick = loss, j
        partner, best_h = int(slot[pick]), H[pick]
        best_z = merged_coefficient(kind, L[pick], ar, A[pick], best_h)
        for i in range(ST.shape[0]):
            ST[i, partner] = best_h * xm[i] + (1.0 - best_h) * ST[i, partner]
        alpha[partner] = best_z
        last[1] = partner
        last[2] = best_h
        last[3] = best
    m -= 1
    if r != m:
        move_column(ST, alpha, m, r)
    return m


@jit
def bsgd_learn(kind, a, b, c, lkind, lam, rule, ST, alpha, m, Kinv, x, y, f, kt, t, xm, km, d, W, last):
    """The learning half of round t (1, 2, ...) after the decision f (kernel row over the support
    vectors in kt[:m]): the Pegasos decay and step, then the budget maintenance. Returns (m,
    maintained)."""
    eta = 1.0 / (lam * t)
    if (lkind == SQUARED or lkind == SQUARED_HINGE) and eta > SQUARED_STEP_CAP:
        eta = SQUARED_STEP_CAP
    shrink = 1.0 - eta * lam
    for j in range(m):
        alpha[j] *= shrink
    g = loss_derivative(lkind, f, y)
    if g == 0.0:
        return m, False
    coef = -eta * g
    if rule == PROJECT:
        kxx = kernel_value(kind, a, b, c, x, x)
        proj2 = times_and_quadratic(Kinv, kt, m, d)
        delta2 = kxx - proj2
        if not delta2 > PROJECTRON_MIN_RESIDUAL * kxx:  # x is in the span: projected on arrival
            for p in range(m):
                alpha[p] += coef * d[p]
            return m, False
        bordered_inverse_grow(Kinv, m, d, delta2)
    copy_into(ST[:, m], x)
    alpha[m] = coef
    m += 1
    if m < ST.shape[1]:
        return m, False
    return maintain(kind, a, b, c, rule, ST, alpha, m, Kinv, xm, km, W, last), True


@jit
def bsgd_rounds(kind, a, b, c, lkind, lam, rule, X, Y, out, ST, alpha, m, Kinv, t, kt, xm, km, d, W, last):
    """Predict-then-learn over the rows of X. Returns (m, t, maintenance events)."""
    events = 0
    given = X.shape[0] < 0  # a run-time False: Numba compiles a callee again for a literal argument
    for i in range(X.shape[0]):
        x = X[i]
        f = out[i] = expansion_value_from(kind, a, b, c, ST, alpha, m, x, kt, given)
        t += 1
        m, maintained = bsgd_learn(kind, a, b, c, lkind, lam, rule, ST, alpha, m, Kinv, x, Y[i], f, kt, t, xm,
                                   km, d, W, last)
        events += maintained
    return m, t, events


@jit
def bsgd_event_learn(kind, a, b, c, lkind, lam, rule, ST, alpha, m, Kinv, x, y, kt, have_row, t, xm, km, d, W,
                     last):
    """learn_one's compiled call: the round of :func:`bsgd_rounds` on x, from predict_one's kernel
    row when ``have_row``. Returns (f, m, maintained)."""
    f = expansion_value_from(kind, a, b, c, ST, alpha, m, x, kt, have_row)
    m, maintained = bsgd_learn(kind, a, b, c, lkind, lam, rule, ST, alpha, m, Kinv, x, y, f, kt, t + 1, xm, km,
                               d, W, last)
    return f, m, maintained


@register("bsgd")
class BSGD(_RowEvents, _BudgetedExpansion):
    """Budgeted stochastic gradient descent (Pegasos with a budget); see the module docstring.

    Parameters
    ----------
    regularization : float, default 1e-4
        The regulariser lambda > 0: eta_t = 1 / (lambda t) (capped at 0.25 under the squared
        losses).
    budget : int, default 100
        B >= 2 support vectors kept.
    maintenance : {"merge", "remove", "project"}, default "merge"
        What happens to the (B + 1)-th support vector: merging two (Gaussian or Laplacian kernel),
        removing the one with the smallest |alpha|, or projecting it onto the others.
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Unused (BSGD is deterministic); accepted for a uniform interface.

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> merged = okl.make("bsgd", budget=50)
    >>> print(round(merged.run(X, y).mistake_rate, 1), merged.diagnostics())
    30.7 {'support_vectors': 50, 'maintenance_events': 293}
    >>> removed = okl.make("bsgd", budget=50, maintenance="remove")
    >>> round(removed.run(X, y).mistake_rate, 1)   # the paper's finding: merging keeps more
    33.8
    """

    _state_attrs = _BudgetedExpansion._state_attrs + ("Kinv_", "t_", "maintenance_events_", "last_maintenance_")
    _divergence_hint = "raise regularization (the step is 1 / (regularization t))"

    hyperparameters = (LAMBDA, BUDGET.but(low=2), MAINTENANCE, *KERNEL_LEARNER)

    def __init__(self, *, regularization: float = 1e-4, budget: int = 100, maintenance: str = "merge", loss="hinge",
                 kernel=None, center_targets: bool = True, scale: str | None = "auto",
                 random_state: int | None = None):
        accept(self, locals())
        if self.maintenance == "merge" and self.kernel is not None \
                and self.kernel.spec()[0] not in (RBF_KIND, LAPLACIAN_KIND):
            raise ValueError(f"bsgd: maintenance='merge' needs a Gaussian or Laplacian kernel, got {self.kernel!r} "
                             "(use maintenance='remove' or 'project')")

    @property
    def rule_(self) -> int:
        return {"remove": REMOVE, "project": PROJECT, "merge": MERGE}[self.maintenance]

    def _state_spec(self):
        spec = super()._state_spec()
        slots = self.budget + 1
        inverse = slots if self.maintenance == "project" else 0
        spec.fields.update(SVT_=Arr(("dim", slots)), alpha_=Arr((slots,)), Kinv_=Arr((inverse, inverse)),
                           t_=Num(int, 0, "n_seen"), maintenance_events_=Num(int, 0, "n_seen"),
                           last_maintenance_=Arr((4,), finite=False))
        return spec

    def _start(self, dim):
        slots = self.budget + 1
        self.SVT_ = np.zeros((dim, slots))
        self.alpha_ = np.zeros(slots)
        self.m_ = 0
        inverse = slots if self.maintenance == "project" else 0
        self.Kinv_ = np.zeros((inverse, inverse))
        self.t_ = 0
        self.maintenance_events_ = 0
        self.last_maintenance_ = np.full(4, np.nan)

    def _buffer(self) -> np.ndarray:
        return np.empty(self.budget + 1)

    def _work(self, ev=None) -> EventWork:
        """The work space of a round (per event: kept in the event state, never saved)."""
        w = None if ev is None else ev.buf
        slots = self.budget + 1
        if w is None or w.kt.shape[0] != slots or w.xm.shape[0] != self.dim_:
            w = EventWork(kt=np.empty(slots), xm=np.empty(self.dim_), km=np.empty(slots), d=np.empty(slots),
                          W=np.empty((14, slots)))
            if ev is not None:
                ev.buf = w
        return w

    def _process(self, X, y):
        self._check_state()
        out = np.empty(X.shape[0])
        w = self._work()
        m, t, events = bsgd_rounds(*self.kernel_.spec(), self.loss_.kind, self.regularization, self.rule_, X,
                                   np.asarray(y, dtype=np.float64), out, self.SVT_, self.alpha_, self.m_, self.Kinv_,
                                   self.t_, w.kt, w.xm, w.km, w.d, w.W, self.last_maintenance_)
        self.m_, self.t_ = int(m), int(t)
        self.maintenance_events_ = int(self.maintenance_events_ + events)
        return out

    def _learn_row(self, x, y, w, have_row):
        """learn_one's compiled call (:class:`okl.learners._expansion._RowEvents`)."""
        f, m, maintained = bsgd_event_learn(*self.kernel_.spec(), self._event_loss().kind, self.regularization,
                                            self.rule_, self.SVT_, self.alpha_, self.m_, self.Kinv_, x, y, w.kt,
                                            have_row, self.t_, w.xm, w.km, w.d, w.W, self.last_maintenance_)
        self.m_, self.t_ = int(m), self.t_ + 1
        self.maintenance_events_ += int(maintained)
        return f

    def diagnostics(self):
        return {"support_vectors": int(self.m_), "maintenance_events": int(self.maintenance_events_)}


__all__ = ["BSGD", "MAINTENANCE_RULES", "SQUARED_STEP_CAP", "bsgd_rounds", "merge_position", "merged_coefficient",
           "merge_degradation", "merge_positions"]

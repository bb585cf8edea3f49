"""Fourier online gradient descent (FOGD; Lu, Hoi, Wang, Zhao & Liu, JMLR 2016).

ALGORITHMS.md 1.5 and 6. Draw D frequencies u_i from the kernel's spectral density (Gaussian:
N(0, sigma^-2 I)) and use the explicit map

    z(x) = [cos(u_1^T x), ..., cos(u_D^T x), sin(u_1^T x), ..., sin(u_D^T x)] / sqrt(D),

so that z(x)^T z(x') is the Monte-Carlo estimate of kappa(x, x') (z^T z = 1). The learner is OGD
on f(x) = w^T z(x): w <- w - eta l'(f, y) z(x) (hinge: w += eta y z on a margin error).

Scale: LSOKL and the FORKS code use the features without 1/sqrt(D) and eta_fou = 0.002; that is
the same learner as ours with eta = eta_fou * D (0.8 at D = 400, ALGORITHMS.md 9.10).

Defaults: D = 4B random directions (FORKS/SkeGD tables), eta = 0.2. Since z(x)^T z(x') estimates
kappa(x, x'), OGD on z with step eta is the random-feature approximation of KOGD with the same
step, so FOGD takes KOGD's default eta = 0.2, independent of D; and because ||z||^2 = 1 the
squared loss (l' = 2 (f - y)) is an LMS filter with normalised step 2 eta = 0.4, inside the
stability bound 2 eta ||z||^2 < 2 (eta < 1) with a small misadjustment. The published LSOKL step,
eta = 0.002 D (eta_fou = 0.002 on the unnormalised features; 0.8 at B = 100), grows with D and
diverges for the squared loss once 0.002 D >= 1; it stays reachable as ``eta=0.002 * D``
(with it ours gives german 32.9 / 27.6 % at sigma 8 / 1, 20 permutations, against LSOKL's
32.74 / 27.30, ALGORITHMS.md 9.10).
Directions (``directions``): ``"stored"`` draws U once from the learner's generator and keeps it
(D x d floats, saved in model files); ``"generated"`` keeps none: the column U[:, j] of input index j
is regenerated whenever a row has a non-zero at j, from a counter-based generator keyed by (a seed
drawn once, j) (:mod:`okl.features.generated`: Gaussian entries for the RBF kernel, Cauchy for the
Laplacian, times 1 / sigma as ``sample_frequencies`` draws them), so a hashed stream of 2^20
columns costs O(D) memory and O(nnz D) a round (about 4-5 ns an entry) with the numbers of the
stored matrix those columns make (a test holds them equal bit for bit). ``"auto"`` (default):
stored while U holds at most :data:`STORED_DIRECTIONS_MAX` floats (32 MiB: d <= 10,485 at D = 400),
generated beyond.

Sparse rows (:mod:`okl._sparse`): the projection sums the columns of the non-zeros only (bit for bit
the dense sum; O(nnz D)).

Per-round cost O(D d) for the features plus O(D) for the weight update, all in one compiled loop.
The loop is vectorised: the D projections u_j^T x are accumulated together over the coordinates
from a transposed copy of U (made once per call, never saved; bit for bit the per-direction dot
products of the single-row path), and cos / sin come from one shared range reduction in
:func:`okl._vecmath.sincos_scaled_into` (within 1 ulp of libm). About 2.3 us per round at
D = 800, d = 8 (codrna), against 15 us with a scalar dot product and libm's cos and sin per
direction (now about half in cos / sin and a third in the sequential sum f = w^T z).
"""

from __future__ import annotations

import math

import numpy as np

from okl._compiled import (dot, jit, linear_round, loss_derivative, ogd_step, row_ok, sparse_axpy,
                           sub_scaled)
from okl._sparse import SparseRows
from okl._validation import MAX_ABS_FEATURE
from okl.features.generated import CACHE_COLUMNS, CAUCHY, GAUSSIAN, project_generated_cached
from okl.kernels import RBF, Laplacian
from okl.runtime.base import Arr, Learner, Num, StateSpec, register
from okl.runtime.state import MAX_CLASSES
from okl.components import Plan
from okl.runtime.hyperparameters import BUDGET, ETA, KERNEL_LEARNER, Hyper, accept
from okl.runtime.events import EventWork, event_state
from okl.components.maps.fourier import fourier_from_projections, project_t


#: default step: KOGD's (FOGD approximates KOGD with the same step; see the module docstring)
DEFAULT_ETA = 0.2
#: LSOKL's step on the unnormalised features, 0.002 D on ours (explicit ``eta`` only)
LSOKL_ETA_PER_COMPONENT = 0.002
#: ``directions="auto"``: the most floats of a stored U (D x d); beyond, its columns are generated
STORED_DIRECTIONS_MAX = 1 << 22


def generator_kind(kernel) -> int:
    """The entries of a generated direction for ``kernel``: Gaussian (RBF), Cauchy (Laplacian)."""
    if isinstance(kernel, RBF):
        return GAUSSIAN
    if isinstance(kernel, Laplacian):
        return CAUCHY
    raise ValueError(f"directions='generated' needs a Gaussian (rbf) or Laplacian kernel, got {kernel!r}")


def column_cache(D: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """An empty cache of generated columns (:func:`okl.features.generated.project_generated_cached`):
    min(CACHE_COLUMNS, dim) columns of D entries, and their tags."""
    C = max(1, min(CACHE_COLUMNS, int(dim)))
    return np.zeros((C, D)), np.zeros(C)


@jit
def fourier_row_features(UT, seed, kind, scale, xi, xv, p, z, cache, tags):
    """The Fourier features z of a row given by its non-zeros (indices xi ascending, values xv):
    p = U x from the stored directions UT (d x D, :func:`okl._compiled.sparse_axpy`) or, with UT
    empty, from the generated ones (keyed by ``seed``, through the column ``cache``:
    :func:`okl.features.generated.project_generated_cached`); either way bit for bit the dense
    projection of the same U."""
    if UT.shape[0] > 0:
        sparse_axpy(UT, xi, xv, p)
    else:
        project_generated_cached(seed, kind, scale, xi, xv, p, cache, tags)
    fourier_from_projections(p, 1.0 / math.sqrt(p.shape[0]), z)


@jit
def fogd_sparse_rounds(indptr, indices, data, Y, UT, seed, kind, scale, w, eta, lkind, out, cache, tags):
    """:func:`fogd_rounds` over sparse rows (:class:`okl._sparse.SparseRows`), the features by
    :func:`fourier_row_features` (stored UT, or generated columns when UT is empty)."""
    D = UT.shape[1]
    p = np.empty(D)
    z = np.empty(2 * D)
    for i in range(indptr.shape[0] - 1):
        a, b = indptr[i], indptr[i + 1]
        fourier_row_features(UT, seed, kind, scale, indices[a:b], data[a:b], p, z, cache, tags)
        g = linear_round(w, z, Y[i], lkind, out, i)
        if g != 0.0:
            sub_scaled(w, ogd_step(eta * g, z, lkind), z)


@jit
def generated_event_features(seed, kind, scale, w, x, bound, p, z, cache, tags):
    """:func:`fogd_event_features` with generated directions: the non-zeros of x (checked), then
    :func:`fourier_row_features`; returns (ok, w^T z)."""
    if not row_ok(x, bound):
        return False, 0.0
    xi = np.flatnonzero(x)
    fourier_row_features(np.empty((0, p.shape[0])), seed, kind, scale, xi, x[xi], p, z, cache, tags)
    return True, dot(w, z)


@jit
def ogd_rounds(Z, Y, w, eta, lkind, out):
    """Test-then-train OGD on precomputed features: f = w.z, then w -= eta l'(f, y) z (the step
    through :func:`okl._compiled.ogd_step`: divided by max(1, ||z||^2) under the squared loss)."""
    for i in range(Z.shape[0]):
        z = Z[i]
        g = linear_round(w, z, Y[i], lkind, out, i)
        if g != 0.0:
            sub_scaled(w, ogd_step(eta * g, z, lkind), z)


@jit
def _project(U, x, p):
    """p[j] = u_j^T x from U itself (D x d): one dot product per direction, summed as in
    :func:`project_t`, for single rows, where transposing U would cost more than it saves."""
    for j in range(U.shape[0]):
        pj = 0.0
        for c in range(x.shape[0]):
            pj += U[j, c] * x[c]
        p[j] = pj


@jit
def _fourier_row(U, x, scale, p, z):
    """The Fourier features z of one row x (p: work space of length D)."""
    _project(U, x, p)
    fourier_from_projections(p, scale, z)


@jit
def fogd_rounds(X, Y, U, w, eta, lkind, out):
    """FOGD test-then-train with the Fourier map computed row by row inside the compiled loop (no
    feature matrix is materialised). U is transposed once per call so that the D projections of
    a row are computed together (:func:`project_t`; the same values as :func:`_fourier_row`)."""
    D = U.shape[0]
    scale = 1.0 / math.sqrt(D)
    UT = np.ascontiguousarray(U.T)
    p = np.empty(D)
    z = np.empty(2 * D)
    for i in range(X.shape[0]):
        project_t(UT, X[i], p)
        fourier_from_projections(p, scale, z)
        g = linear_round(w, z, Y[i], lkind, out, i)
        if g != 0.0:
            sub_scaled(w, ogd_step(eta * g, z, lkind), z)


@jit
def fogd_decision(U, w, x):
    z = np.empty(2 * U.shape[0])
    _fourier_row(U, x, 1.0 / math.sqrt(U.shape[0]), np.empty(U.shape[0]), z)
    return dot(w, z)


@jit
def fogd_event_features(UT, w, x, bound, p, z):
    """The per-event Fourier features z of x (as :func:`fogd_rounds` computes them, from the
    transposed frequencies UT = U^T; p: work space of length D) after checking x
    (:func:`okl._compiled.row_ok`); returns (ok, w^T z)."""
    if not row_ok(x, bound):
        return False, 0.0
    project_t(UT, x, p)
    fourier_from_projections(p, 1.0 / math.sqrt(UT.shape[1]), z)
    return True, dot(w, z)


@jit
def fogd_event_learn(z, y, w, eta, lkind):
    """learn_one after predict_one: the OGD round of :func:`ogd_rounds` on the cached features z;
    returns f = w^T z."""
    f = dot(w, z)
    g = loss_derivative(lkind, f, y)
    if g != 0.0:
        sub_scaled(w, ogd_step(eta * g, z, lkind), z)
    return f


def fourier_features(X: np.ndarray, U: np.ndarray) -> np.ndarray:
    """[cos(X U^T), sin(X U^T)] / sqrt(D) for frequencies U (D x d)."""
    P = X @ U.T
    return np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(U.shape[0])


@register("fogd")
class FOGD(Learner):
    """Fourier online gradient descent.

    Parameters
    ----------
    budget : int, default 100
        The budget B of the tables; sets D = 4B when ``n_components`` is None.
    n_components : int or None
        Number D of random directions (2D features).
    directions : {"auto", "stored", "generated"}, default "auto"
        Keep U (D x d) or regenerate its columns from a seed (module docstring); "auto": stored
        while D d <= :data:`STORED_DIRECTIONS_MAX`.
    eta : float or None, default None (= 0.2, KOGD's step; LSOKL's published step is 0.002 D, pass
        it explicitly to reproduce LSOKL, see the module docstring)
    loss : str or Loss, default "hinge"
    kernel : shift-invariant Kernel, default RBF(sigma=1)
    [[center_targets, scale]]
    random_state : int or None

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> trace = FOGD(budget=50, kernel=okl.RBF(sigma=2), random_state=0).run(X, y)
    >>> 20 < trace.mistake_rate < 40
    True
    """

    _state_attrs = ("U_", "direction_seed_", "w_", "n_outputs_")
    #: state added since model files were first written, with the value an older file means
    _state_added = {"direction_seed_": None}
    accepts_csr = True
    #: the seed of the generated directions (None: U_ is stored)
    direction_seed_: int | None = None
    _output_attrs = {"w_": -1.0}

    hyperparameters = (BUDGET, Hyper("n_components", "int", "Random directions D (2D features).", low=1, optional=True,
                                     none_means="4 x budget", symbol="D"),
                       Hyper("directions", "choice", "Keep U or generate its columns from a seed.",
                             choices=("auto", "stored", "generated")),
                       ETA.but(optional=True, none_means="the default step of the loss"), *KERNEL_LEARNER)

    def __init__(self, *, budget: int = 100, n_components: int | None = None, directions: str = "auto",
                 eta: float | None = None, loss="hinge", kernel=None, center_targets: bool = True,
                 scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())
        if self.kernel is not None:  # fail early if not shift-invariant
            self.kernel.sample_frequencies(1, 1, np.random.default_rng(0))
            if self.directions == "generated":
                generator_kind(self.kernel)

    @property
    def n_components_(self) -> int:
        return self.n_components if self.n_components is not None else 4 * self.budget

    @property
    def eta_(self) -> float:
        return self.eta if self.eta is not None else DEFAULT_ETA

    @classmethod
    def paper_params(cls, budget):
        """LSOKL's and the FORKS code's step eta_fou = 0.002 on unnormalised features, i.e.
        eta = 0.002 D with D = 4B."""
        return {**super().paper_params(budget), "eta": 0.002 * 4 * budget}

    def _state_spec(self):
        D = self.n_components_
        return StateSpec(fields={"U_": Arr((D, "dim"), optional=True),
                                 "direction_seed_": Num(int, 0, 2 ** 62, optional=True),
                                 "w_": Arr(self.heads.out_shape(self, 2 * D)), "n_outputs_": Num(int, 0, MAX_CLASSES)},
                         rules=((lambda m: (m.U_ is None) != (m.direction_seed_ is None), "U_",
                                 "and direction_seed_: exactly one must be given"),))

    def _start(self, dim):
        D = self.n_components_
        generated = self.directions == "generated" or (self.directions == "auto" and D * dim > STORED_DIRECTIONS_MAX)
        if generated:
            generator_kind(self.kernel_)
            self.U_, self.direction_seed_ = None, int(self._rng.integers(2 ** 62))
        else:
            self.U_, self.direction_seed_ = self.kernel_.sample_frequencies(D, dim, self._rng), None
        self.w_ = np.zeros(2 * D)

    @property
    def generator_(self) -> tuple[int, int, float]:
        """(seed, kind, scale) of the generated directions (:mod:`okl.features.generated`)."""
        return self.direction_seed_, generator_kind(self.kernel_), 1.0 / float(self.kernel_.sigma)

    def _decision(self, x):
        if self.U_ is None:
            w = self._event_plan(event_state(self))
            D = self.n_components_
            return generated_event_features(*self.generator_, self.w_, np.ascontiguousarray(x, dtype=float),
                                            np.inf, np.empty(D), np.empty(2 * D), w.cache, w.tags)[1]
        return fogd_decision(self.U_, self.w_, x)

    def _event_plan(self, ev) -> EventWork:
        """The per-event work space, rebuilt when U or the loss changed: U^T C-contiguous and the
        projection and feature work spaces."""
        w = ev.buf
        if w is None or w.U is not self.U_ or w.loss is not self.loss or w.seed != self.direction_seed_:
            D = self.n_components_
            UT = np.ascontiguousarray(self.U_.T) if self.U_ is not None else None
            cache, tags = column_cache(D, self.dim_) if self.U_ is None else (None, None)
            w = ev.buf = EventWork(U=self.U_, seed=self.direction_seed_, loss=self.loss, UT=UT, p=np.empty(D),
                                   z=np.empty(2 * D), lkind=self.events.loss(self, ev).kind, cache=cache, tags=tags)
        return w

    def _event_features(self, x, ev):
        w = self._event_plan(ev)
        if self.U_ is None:
            ok, f = generated_event_features(*self.generator_, self.w_, x, MAX_ABS_FEATURE, w.p, w.z, w.cache, w.tags)
        else:
            ok, f = fogd_event_features(w.UT, self.w_, x, MAX_ABS_FEATURE, w.p, w.z)
        if not ok:
            self.events.check_values(self, x)
        return f, w.z

    def _event_learn(self, x, y, z, ev):
        if z is None:
            z = self._event_features(x, ev)[1]
        return fogd_event_learn(z, y, self.w_, self.eta_, self._event_plan(ev).lkind)

    @classmethod
    def runs_in_engine(cls, params):
        return True

    def compiled_plan(self):
        if self.U_ is None:
            return Plan("generated fourier", "ogd", w="w_", eta=self.eta_, features=2 * self.n_components_,
                        generator=self.generator_)
        return Plan("fourier", "ogd", UT=self.U_.T, w="w_", eta=self.eta_)

    def _rounds(self, X, y, lkind, out):
        """Test-then-train over a block (dense or :class:`okl._sparse.SparseRows`): the dense loop
        with stored directions, else over the rows' non-zeros (:func:`fogd_sparse_rounds`)."""
        if self.U_ is not None and not isinstance(X, SparseRows):
            fogd_rounds(X, y, self.U_, self.w_, self.eta_, lkind, out)
            return
        if not isinstance(X, SparseRows):  # (generated directions: a dense block's non-zeros)
            X = SparseRows.from_dense(X)
        if self.U_ is not None:
            UT, seed, kind, scale = np.ascontiguousarray(self.U_.T), 0, GAUSSIAN, 1.0
            cache, tags = np.zeros((1, 1)), np.zeros(1)
        else:
            UT, (seed, kind, scale) = np.zeros((0, self.n_components_)), self.generator_
            w = self._event_plan(event_state(self))  # (its column cache: kept between blocks and events)
            cache, tags = w.cache, w.tags
        fogd_sparse_rounds(X.indptr, X.indices, X.data, np.ascontiguousarray(y, dtype=float), UT, seed, kind, scale,
                           self.w_, self.eta_, lkind, out, cache, tags)

    def _event_block(self, X, y, out):
        # the rounds compute each row's features alone: the per-event arithmetic already
        self._rounds(X, y, self.events.loss(self).kind, out)
        return X.shape[0]

    def _process(self, X, y):
        out = np.empty(X.shape[0])
        self._rounds(X, y, self.loss_.kind, out)
        return out

    def diagnostics(self):
        return {"features": 2 * self.n_components_}

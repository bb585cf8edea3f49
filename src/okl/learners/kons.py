"""PROS-N-KONS, CON-KONS and B-KONS (Calandriello, Lazaric & Valko, NeurIPS 2017).

ALGORITHMS.md 5.2-5.4; PNK Algorithm 1 (Sec. 3) with KORS (App. A, :mod:`okl.features.kors`).

**Embedding.** KORS grows a dictionary I_j (never removes). During epoch j (between two
additions) the features are the Nystrom embedding of PNK Sec. 2/3,

    phi~(x) = Lambda^{-1/2} U^T k_I(x) in R^j,   K_j = U Lambda U^T (unweighted kernel matrix of I_j),

so phi~(x)^T phi~(x') = k_I(x)^T K_j^{-1} k_I(x') and the kernel is reproduced exactly on the
dictionary points. The default ``embedding="cholesky"`` uses phi~(x) = L^{-1} k_I(x) with
K_j = L L^T instead, kept by an O(j^2) bordered update (the new coordinate is the Gram-Schmidt
residual (k(x, x_new) - phi~(x_new)^T phi~(x)) / d, d^2 = k(x_new, x_new) - |phi~(x_new)|^2);
``embedding="eigen"`` is the paper's literal map. The two differ by an orthogonal rotation, and
every step below (A = alpha I, the projection, ONS, the CON-KONS map) is rotation-equivariant,
so predictions agree up to rounding (measured: 1e-10 on cpusmall, 1e-5 on codrna with gamma =
0.01, where K_j is numerically singular; identical mistakes); "cholesky" avoids the O(j^3)
eigendecomposition per addition (the "careful implementation" of PNK Sec. 3). Numerically null
directions are dropped: eigenvalues <= ``rank_rtol`` * lambda_max ("eigen") or
d^2 <= ``rank_rtol`` * k(x_new, x_new) ("cholesky"); default rank_rtol = j * machine epsilon
(the numerical-rank rule of ``numpy.linalg.matrix_rank``). With sigma = 8 on [0,1]^d data K_j
is numerically singular early, and 1/sqrt(lambda) of a rounding-level eigenvalue would only
amplify noise; ``diagnostics()["embedding_dim"]`` reports the dimension kept.

**Exact ONS in the embedded space** (PNK Sec. 3, Alg. 1 lines 11-17), with h(z) = sign(z) max(|z|-C, 0):

    v_t = w_{t-1} - A^{-1} g_{t-1}
    w_t = v_t - h(phi~_t^T v_t) / (phi~_t^T A_{t-1}^{-1} phi~_t) * A_{t-1}^{-1} phi~_t     (oblique projection)
    y~_t = phi~_t^T w_t  (= clip(phi~_t^T v_t, -C, C) exactly, which :meth:`predict_one` uses)
    g_t = l'(y~_t, y_t) phi~_t,   A_t = A_{t-1} + (sigma_t / 2) g_t g_t^T  (Sherman-Morrison on A^{-1}).

**Reset** (PNK): the round after KORS adds a point starts epoch j+1 with the new embedding and
A = alpha I. ``reset="zero"`` is Alg. 1 lines 8-9 literally: w = 0, so the first round of every
epoch predicts exactly 0 (no projection), which the f >= 0 -> +1 rule counts as +1 whatever the
classes (the 2JC term of Thm 1). With a data-driven width KORS adds a point every few rounds
(german: ~420 additions in 1000 rounds), so this is most rounds' prediction: measured 38.9 %
exact zeros and 49.5 % mistakes on german (majority 30 %), squared loss 0.12 on cpusmall.
``reset="warm"`` (default for PROS-N-KONS and B-KONS) restarts only the second-order state: the
new epoch starts from v <- R v_t, where v_t = w_{t-1} - A^{-1} g_{t-1} is the point after the
growth round's own gradient step (the round whose point the old space explains worst, so its
step is kept) and R the map below. Since H_{j-1} is a subspace of H_j (KORS never removes a
point), R v_t is the same function, so the first round of the epoch predicts with the previous
epoch's function and projects like every other round (A = alpha I there). ONS from a non-zero
start keeps the per-epoch KONS bound with alpha ||w||^2 replaced by alpha ||w - w_start||^2
(Hazan et al. 2007; PNK App. B uses only A_{t_j} = alpha I), and the 2JC term of Thm 1 (the
default prediction 0) is gone. Measured (cell.py, library defaults): german 50.9 -> 29.6 %,
svmguide3 43.3 -> 25.7 %, spambase 47.9 -> 13.5 %. **CON-KONS** (PNK Sec. 5) instead maps
w and A into the new space with R = E_j K_{j,j-1} E_{j-1}^T (phi~ = E k_I; R = [I; 0] for the
Cholesky map), which keeps the function: w <- R w_{t-1}; A as chosen by ``hessian_map``.
**B-KONS** stops adding to the dictionary at ``budget`` = J_max (100 in PNK) and keeps learning
in the last space.

Paper/code choices, all switchable (paper reading by default):

* ``reset`` ("warm"; PROS-N-KONS and B-KONS): "zero" = Alg. 1 lines 8-9 (see **Reset**).
* ``reset_round_learns`` (True): the reset round learns from its gradient in the new space, as
  the proof (A_{t_j} = alpha I + (sigma/2) g g^T, App. B) and the R code PROS-N-KONS.R do;
  False = the FORKS C++ PNK, which sets phi = 0 there (no learning on reset rounds).
* ``gradient_step`` ("updated"): v_{t+1} = w_t - A_t^{-1} g_t with A_t already containing g_t
  (Alg. 1, ONS); "previous" uses A_{t-1}^{-1} g_t, as PROS-N-KONS.R and the FORKS C++ ONS do.
* CON-KONS ``hessian_map``: the paper only says "a similar rule maps A". "complete" (default,
  our choice [I]): A <- R A R^T + alpha (I - R R^T), i.e. A keeps its quadratic form on the old
  span and the new direction starts at alpha like a fresh ONS (R has orthonormal columns); "regularized":
  A <- R A R^T + alpha I (ALGORITHMS.md 5.3 [I]; alpha accumulates at every addition);
  "r-code": CONS-KONS.R, whose stored A is R A R^T while A^{-1} = (R A R^T + alpha I)^{-1}.
  Measured (seed 0, sigma = 8, alpha = gamma = 1): cadata 0.0272 / 0.0434 / 0.0271, cpusmall
  0.0162 / 0.0259 / 0.0160.
* ``curvature`` (None): sigma_t from the loss (``get_loss(loss).curvature(C)``: squared
  1/(8 C^2) by PNK Thm 2, squared hinge / logistic by ALGORITHMS.md 0); the hinge loss has none,
  and the FORKS C++ constant 1/(8 C^2) (A += g g^T / 16 at C = 1) is used for it. PNK's
  step-sizes eta_t (Alg. 1 input) are taken equal to sigma_t (ALGORITHMS.md 5.2 [I]).
* The first point is sampled like every other (tau~ = (1+eps) k/(k+gamma)); PROS-N-KONS.R
  forces it into the dictionary. CON-KONS maps w_{t-1} (the last iterate): the last gradient
  step is dropped at an addition, as in the paper and CONS-KONS.R.

Loss: ``loss`` defaults to "hinge" (PNK Table 2 classification, and every learner of the
library takes -1/+1 labels by default); regression (PNK Table 1) needs ``loss="squared"``
with real targets. ``run`` warns when every target is -1/+1 under a regression loss (squared
loss on labels is legitimate, e.g. PNK's Sec. 3 example, so it is not an error).

Hyperparameters (PNK Sec. 5): alpha = 1 (regression) or 1 / 0.01 (classification), gamma =
alpha, eps = 0.5, beta = 1, C = 1, Gaussian sigma = 8, J_max = 100.

**Defaults.** ``kernel=None`` takes the base class's data-driven Gaussian width. ``alpha=None``
gives alpha = max(1, L kappa), L = sup_z l''(z) (hinge 0, logistic 1/4, squared and squared
hinge 2; ``LOSS_SMOOTHNESS``), kappa = k(x, x) = 1 for the Gaussian kernel: PNK's alpha = 1 unless
the loss needs more. Reason: after each restart A = alpha I and the ONS step moves f - y along
phi~_t by the factor (1 - l'' |phi~_t|^2 / alpha); for the squared loss at alpha = 1 that is
(1 - 2 |phi~|^2), about -1 for |phi~| ~ 1: the prediction oscillates around the target instead
of converging, and with many restarts A never grows out of it (PNK cadata, default width, 750
restarts: 0.115 with alpha = 1 and the zero reset, 0.090 warm, 0.029 with alpha = 2).
alpha >= L kappa makes the step at most the exact minimiser along phi~_t. gamma stays 1 (Thm 1
needs gamma <= alpha). PNK's classification alpha = gamma = 0.01 (Sec. 5, for sigma = 8) is NOT
the default: with the data-driven width it is far worse (german PNK / CON-KONS / B-KONS 59 / 59
/ 41 % vs 30 / 29 / 28 %, svmguide3 45 / 36 / 34 %), as it mainly grows the dictionary.
Pass ``alpha=1.0`` and ``reset="zero"`` for the paper's literal PROS-N-KONS.

Cost per round: O(j d) kernel row + O(j^2) KORS estimate + O(j^2) embedding (these three as
matrix products over blocks of rounds, since the dictionary is fixed between additions; only
KORS's Bernoulli draw is sequential, and the first accepted row ends a block) + O(j^2) compiled
ONS (one A^{-1} phi product and one rank-one update). Per addition: O(j^2) for KORS and the
Cholesky map, O(j^3) for the eigendecomposition ("eigen") and for CON-KONS's "regularized" and
"r-code" maps. Total O(T J^2) plus O(J^4) for "eigen".

PROS-N-KONS and CON-KONS have no budget. J follows the effective dimension of the kernel at
gamma. On dense low-dimensional sets that is small, but on sparse one-hot rows almost every row
is new to the dictionary. Measured with the library defaults on the first 6,000 rows of adult,
permutation 0 (sigma 1.54):
- PROS-N-KONS: J = 1,874, 28.6 s, 20.6 % mistakes;
- CON-KONS: J = 1,874, 27.0 s, 19.0 %;
- B-KONS (J capped at 100): under 0.1 s, 19.1 %.

For long high-dimensional streams use B-KONS (``budget``) or a budgeted learner.

>>> import okl
>>> X, y = okl.load_dataset("german")
>>> m = ProsNKons(alpha=1.0, gamma=1.0, kernel=okl.RBF(sigma=8), random_state=0)
>>> trace = m.run(X, y)
>>> 0 < m.diagnostics()["dictionary_size"] < 50 and 20 < trace.mistake_rate < 45
True
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from okl.runtime.hyperparameters import BUDGET, C, KERNEL_LEARNER, Hyper, accept
from okl.features.kors import bordered_gram, bordered_inverse, leverage_estimates
from okl.learners._kons_steps import cholesky_embedding_append, kons_rounds, nystrom_embedding
from okl.runtime.base import Arr, Learner, Num, Seq, StateSpec, register
from okl.linalg.svd import one_blas_thread
from okl.runtime.hyperparameters import param_names

MIN_BLOCK, MAX_BLOCK = 32, 4096

#: L = sup_z l''(z, y) of each loss (the smoothness of z -> l(z, y)); hinge is piecewise linear
LOSS_SMOOTHNESS = {"hinge": 0.0, "squared_hinge": 2.0, "logistic": 0.25, "squared": 2.0}

#: the hyperparameters every KONS variant takes (PNK Alg. 1 and 2; the module docstring)
_ALPHA = Hyper("alpha", "real", "The ONS regulariser.", low=0.0, low_open=True, optional=True,
               none_means="max(1, L kappa)", symbol="alpha")
_GAMMA = Hyper("gamma", "real", "KORS's regulariser.", low=0.0, low_open=True, symbol="gamma")
_EPS = Hyper("eps", "real", "KORS's accuracy.", low=0.0, high=1.0, low_open=True, high_open=True, symbol="epsilon")
_BETA = Hyper("beta", "real", "KORS's oversampling.", low=0.0, low_open=True, symbol="beta")
_CURVATURE = Hyper("curvature", "real", "The ONS curvature sigma.", low=0.0, low_open=True, optional=True,
                   none_means="from the loss", symbol="sigma")
_KONS_STEPS = (Hyper("reset_round_learns", "bool", "A reset round also learns its row."),
               Hyper("gradient_step", "choice", "The gradient of the updated or the previous map.",
                     choices=("previous", "updated")),
               Hyper("embedding", "choice", "The Nystrom embedding's factorisation.", choices=("cholesky", "eigen")),
               Hyper("rank_rtol", "real", "The embedding's relative rank cut.", low=0.0, high=1.0, high_open=True,
                     optional=True, none_means="none"))
_RESET = Hyper("reset", "choice", "What a reset restarts from.", choices=("warm", "zero"))


class _KonsBase(Learner):
    """Shared machinery of PROS-N-KONS and its variants (see the module docstring)."""

    _state_attrs = ("dict_X_", "dict_p_", "kors_inv_", "gram_", "embed_", "v_", "w_", "Ainv_", "A_",
                    "epoch_start_", "resets_", "growth_rounds_")
    _divergence_hint = "raise alpha (the ONS regulariser) or lower C"
    _maps_on_growth = False


    # ---- derived constants --------------------------------------------------------------------

    @property
    def alpha_(self) -> float:
        """The ONS regulariser: the given ``alpha``, or max(1, L kappa) (see "Defaults" in the module
        docstring): L = sup l'' of the loss, kappa = k(x, x) = 1 for the Gaussian kernel."""
        if self.alpha is not None:
            return self.alpha
        return max(1.0, LOSS_SMOOTHNESS.get(self.loss, 0.0))

    @property
    def curvature_(self) -> float:
        """sigma_t: the given constant, the loss's curvature on |z| <= C, or 1/(8 C^2) for hinge."""
        if self.curvature is not None:
            return self.curvature
        sigma = self.loss_.curvature(self.C)
        return sigma if sigma > 0 else 1.0 / (8.0 * self.C ** 2)

    def _max_dictionary(self) -> int | None:
        return None

    def _warm(self) -> bool:
        """PNK/B-KONS ``reset="warm"``: an epoch starts from the previous function (mapped), A = alpha I."""
        return getattr(self, "reset", None) == "warm"

    def _tracks_hessian(self) -> bool:
        return False

    # ---- state --------------------------------------------------------------------------------

    def _state_spec(self):
        cap = self._max_dictionary()
        j_high = self.n_seen_ if cap is None else min(cap, self.n_seen_)
        tiny = float(np.finfo(float).tiny)
        return StateSpec(sizes={"j": (0, j_high), "m": (0, "j")}, fields={
            "dict_X_": Arr(("j", "dim")), "dict_p_": Arr(("j",), low=tiny, high=1.0),
            "kors_inv_": Arr(("j", "j")), "gram_": Arr(("j", "j")), "embed_": Arr(("m", "j")),
            "v_": Arr(("m",)), "w_": Arr(("m",)), "Ainv_": Arr(("m", "m")),
            "A_": Arr(("m", "m"), optional=True), "epoch_start_": Num(bool),
            "resets_": Num(int, 0, "n_seen"), "growth_rounds_": Seq("j", 0, self.n_seen_ - 1)},
            rules=((lambda m: (m.A_ is not None) == m._tracks_hessian(), "A_",
                    "must be kept exactly when hessian_map keeps the Hessian"),))

    def _start(self, dim):
        self.dict_X_ = np.zeros((0, dim))
        self.dict_p_ = np.zeros(0)
        self.kors_inv_ = np.zeros((0, 0))
        self.gram_ = np.zeros((0, 0))
        self.embed_ = np.zeros((0, 0))
        self.v_ = np.zeros(0)
        self.w_ = np.zeros(0)
        self.Ainv_ = np.zeros((0, 0))
        self.A_ = np.zeros((0, 0)) if self._tracks_hessian() else None
        self.epoch_start_ = False
        self.resets_ = 0
        self.growth_rounds_ = []

    @classmethod
    def paper_params(cls, budget):
        """PNK Sec. 5: alpha = 1 and, for PROS-N-KONS and B-KONS, Alg. 1's zero reset."""
        return {**super().paper_params(budget), "alpha": 1.0, **({"reset": "zero"} if "reset" in param_names(cls) else {})}

    @property
    def dictionary_size_(self) -> int:
        return int(self.dict_X_.shape[0])

    def _kernel_rows(self, X):
        if self.dictionary_size_ == 0:
            return np.zeros((X.shape[0], 0))
        return self.kernel_(X, self.dict_X_)

    def embed(self, X) -> np.ndarray:
        """phi~(x) for the rows of X under the current embedding (n x j')."""
        return self._kernel_rows(np.atleast_2d(np.asarray(X, dtype=float))) @ self.embed_.T

    def _decision(self, x):
        z = float(self.embed(x[None, :])[0] @ self.v_)
        return z if self.epoch_start_ and not self._warm() else min(max(z, -self.C), self.C)

    # ---- rounds -------------------------------------------------------------------------------

    def run(self, X, y):
        if self.loss_.task == "regression":
            y_arr = np.asarray(y, dtype=float).reshape(-1)
            if y_arr.size > 1 and np.all(np.abs(y_arr) == 1.0) and np.unique(y_arr).size == 2:
                warnings.warn(f"{type(self).__name__}: every target is -1 or +1 but loss={self.loss!r} "
                              "is a regression loss; for classification pass loss='hinge' (or "
                              "'squared_hinge', 'logistic')", UserWarning, stacklevel=2)
        return super().run(X, y)

    def _process(self, X, y):
        with one_blas_thread():  # j x j products: threads only hurt, by 10-50x on a busy machine
            return self._rounds(X, y)

    def _rounds(self, X, y):
        n = X.shape[0]
        out = np.empty(n)
        uniforms = self._rng.random(n)  # one draw per round, in stream order
        k_diag = self.kernel_.diag(X)
        lkind = self.loss_.kind
        half_sigma = 0.5 * self.curvature_
        cap = self._max_dictionary()
        no_A = np.zeros((0, 0))
        block = MIN_BLOCK
        i = 0
        while i < n:
            e = min(n, i + block)
            K_rows = self._kernel_rows(X[i:e])
            stop, hit = e - i, -1
            if cap is None or self.dictionary_size_ < cap:
                tau, delta = leverage_estimates(K_rows, k_diag[i:e], 1.0 / np.sqrt(self.dict_p_),
                                                self.kors_inv_, self.gamma, self.eps)
                p = np.minimum(self.beta * tau, 1.0)
                hits = np.flatnonzero(uniforms[i:e] < p)
                if hits.size:
                    hit = int(hits[0])
                    stop = hit + 1
            Phi = np.ascontiguousarray(K_rows[:stop] @ self.embed_.T)
            kons_rounds(Phi, y[i:i + stop], lkind, self.C, half_sigma, self.v_, self.w_, self.Ainv_,
                        no_A if self.A_ is None else self.A_, self.A_ is not None, self.epoch_start_,
                        self.reset_round_learns, self.gradient_step == "updated", out[i:i + stop],
                        np.empty(Phi.shape[1]), self._warm())
            self.epoch_start_ = False
            if hit >= 0:
                self._grow(X[i + hit], K_rows[hit], float(k_diag[i + hit]), float(p[hit]),
                           float(delta[hit]), Phi[hit], self.n_seen_ + i + hit)
                block = max(MIN_BLOCK, min(MAX_BLOCK, 2 * stop))
            else:
                block = min(MAX_BLOCK, 2 * block)
            i += stop
        return out

    def _grow(self, x, k_row, k_xx, p, delta, phi_x, round_index):
        """KORS added x: border (S K S + gamma I)^{-1} and K_I, new embedding, reset or map."""
        self.kors_inv_ = bordered_inverse(self.kors_inv_, k_row / np.sqrt(self.dict_p_), delta, p,
                                          self.gamma)
        self.gram_ = bordered_gram(self.gram_, k_row, k_xx)
        self.dict_X_ = np.vstack([self.dict_X_, x[None, :]])
        self.dict_p_ = np.append(self.dict_p_, p)
        self.growth_rounds_.append(int(round_index))
        old_embed = self.embed_
        if self.embedding == "eigen":
            self.embed_ = nystrom_embedding(self.gram_, self.rank_rtol)
        else:
            self.embed_, _ = cholesky_embedding_append(old_embed, phi_x, k_xx, self.rank_rtol)
        m = self.embed_.shape[0]
        R = None
        if (self._maps_on_growth or self._warm()) and old_embed.shape[0] > 0:
            if self.embedding == "eigen":
                R = self.embed_ @ self.gram_[:, :old_embed.shape[1]] @ old_embed.T
            else:
                R = np.eye(m, old_embed.shape[0])
        if self._maps_on_growth and R is not None:
            self._map_state(R)
        else:
            self.resets_ += 1
            # "warm": the last iterate w_{t-1} mapped into the new space (the same function, as
            # H_{j-1} is a subspace of H_j), "zero" (PNK Alg. 1 line 9) or first epoch: w = 0
            self.v_ = np.zeros(m) if R is None else R @ self.v_
            self.Ainv_ = np.eye(m) / self.alpha_
            if self.A_ is not None:
                self.A_ = np.eye(m) * self.alpha_
        self.w_ = self.v_.copy()
        self.epoch_start_ = True

    def diagnostics(self):
        started = self.dim_ is not None
        return {"dictionary_size": self.dictionary_size_ if started else 0,
                "support_vectors": self.dictionary_size_ if started else 0,
                "embedding_dim": int(self.embed_.shape[0]) if started else 0,
                "resets": int(self.resets_) if started else 0,
                "growth_rounds": list(self.growth_rounds_) if started else []}

    def dictionary_size_trace(self, n_rounds: int) -> np.ndarray:
        """Dictionary size after each of the first ``n_rounds`` rounds (from ``growth_rounds``)."""
        sizes = np.zeros(n_rounds, dtype=int)
        for r in self.growth_rounds_:
            if r < n_rounds:
                sizes[r:] += 1
        return sizes


_COMMON_DOC = """
    Parameters
    ----------
    alpha : float or None, default None
        ONS regulariser, A = alpha I at an epoch start (PNK: 1; classification also 0.01). None =
        max(1, L) with L = sup l'' of the loss: 1 for hinge / logistic, 2 for (squared) hinge^2
        and squared (module docstring, "Defaults"); pass 1.0 for the paper's value.
    gamma : float, default 1.0
        KORS ridge regularisation (PNK uses gamma = alpha).
    eps : float in (0, 1), default 0.5
        KORS accuracy.
    beta : float, default 1.0
        KORS oversampling.
    C : float, default 1.0
        Prediction bound of the projection h(z) = sign(z) max(|z| - C, 0).
    curvature : float or None, default None
        sigma_t; None = from the loss (hinge: the FORKS-code constant 1/(8 C^2)).
    loss : str or Loss, default "hinge"
        Use "squared" for regression (PNK Table 1).
    kernel : Kernel or None, default None (a Gaussian whose width is chosen from the first rows;
        PNK experiments: RBF(sigma=8))
    reset_round_learns : bool, default True
        False = FORKS C++ (no learning on the first round of an epoch).
    reset : {"warm", "zero"}, default "warm" (PROS-N-KONS and B-KONS only)
        At a dictionary growth A = alpha I and the new epoch starts from the previous function
        mapped into the new space ("warm") or from w = 0, predicting 0 (PNK Alg. 1, "zero").
    gradient_step : {"updated", "previous"}, default "updated"
        Which A^{-1} multiplies g_t in v_{t+1} = w_t - A^{-1} g_t (paper: A_t; R/C++ code: A_{t-1}).
    embedding : {"cholesky", "eigen"}, default "cholesky"
        L^{-1} k_I(x), O(j^2) per addition, or the paper's Lambda^{-1/2} U^T k_I(x), O(j^3):
        a rotation of each other, same predictions up to rounding.
    rank_rtol : float or None, default None
        Cut-off for numerically null embedding directions (None = j * machine epsilon).
    center_targets : bool, default True
        Regression: predict the targets' running mean plus this model of the residual
        (``Heads.centers_targets``); False: the paper's model alone (PNK Table 1 passes it).
    scale : {"auto", "symlog", "range", "affine"} or None, default "auto"
        The per-feature input map fixed in the first 50 rows (:mod:`okl.scaling`): "auto" is
        "symlog" unless a kernel is given, "symlog" / "range" / "affine" always, None uses the
        features as given.
    random_state : int or None
        Seeds KORS's Bernoulli draws (one uniform per round).
"""


@register("pros-n-kons")
class ProsNKons(_KonsBase):
    __doc__ = ("PROS-N-KONS: KORS dictionary + exact ONS in the Nystrom embedding, reset at every"
               " dictionary growth (PNK Alg. 1)." + _COMMON_DOC)

    hyperparameters = (_ALPHA, _GAMMA, _EPS, _BETA, C, _CURVATURE, *_KONS_STEPS, _RESET, *KERNEL_LEARNER)

    def __init__(self, *, alpha: float | None = None, gamma: float = 1.0, eps: float = 0.5, beta: float = 1.0,
                 C: float = 1.0, curvature: float | None = None, loss="hinge", kernel=None,
                 reset_round_learns: bool = True, gradient_step: str = "updated",
                 embedding: str = "cholesky", rank_rtol: float | None = None, reset: str = "warm",
                 center_targets: bool = True, scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())


@register("b-kons")
class BKons(_KonsBase):
    __doc__ = ("B-KONS: PROS-N-KONS whose dictionary stops growing at ``budget`` = J_max points;"
               " learning continues in the last space (PNK Sec. 5)." + _COMMON_DOC + """
    budget : int, default 100
        J_max, the largest dictionary.
""")

    hyperparameters = (BUDGET.but(doc="J_max, the largest dictionary."), _ALPHA, _GAMMA, _EPS,
                       _BETA, C, _CURVATURE, *_KONS_STEPS, _RESET, *KERNEL_LEARNER)

    def __init__(self, *, budget: int = 100, alpha: float | None = None, gamma: float = 1.0, eps: float = 0.5,
                 beta: float = 1.0, C: float = 1.0, curvature: float | None = None, loss="hinge",
                 kernel=None, reset_round_learns: bool = True, gradient_step: str = "updated",
                 embedding: str = "cholesky", rank_rtol: float | None = None, reset: str = "warm",
                 center_targets: bool = True, scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())

    def _max_dictionary(self):
        return self.budget


@register("con-kons")
class ConKons(_KonsBase):
    __doc__ = ("CON-KONS: PROS-N-KONS that maps w and A into the new embedding at a dictionary growth"
               " instead of resetting them (PNK Sec. 5, ALGORITHMS.md 5.3)." + _COMMON_DOC + """
    hessian_map : {"complete", "regularized", "r-code"}, default "complete"
        A <- R A R^T + alpha (I - R R^T); R A R^T + alpha I (ALGORITHMS.md 5.3); or CONS-KONS.R
        (stored A <- R A R^T, A^{-1} <- (R A R^T + alpha I)^{-1}).
""")

    _maps_on_growth = True

    hyperparameters = (_ALPHA, _GAMMA, _EPS, _BETA, C, _CURVATURE, *_KONS_STEPS,
                       Hyper("hessian_map", "choice", "How the Hessian moves to a new map.",
                             choices=("complete", "r-code", "regularized")), *KERNEL_LEARNER)

    def __init__(self, *, alpha: float | None = None, gamma: float = 1.0, eps: float = 0.5, beta: float = 1.0,
                 C: float = 1.0, curvature: float | None = None, loss="hinge", kernel=None,
                 reset_round_learns: bool = True, gradient_step: str = "updated",
                 hessian_map: str = "complete", embedding: str = "cholesky",
                 rank_rtol: float | None = None, center_targets: bool = True, scale: str | None = "auto",
                 random_state: int | None = None):
        accept(self, locals())

    def _tracks_hessian(self):
        return self.hessian_map != "complete"

    def _map_state(self, R):
        """w <- R w_{t-1}; A^{-1} (and A) by ``hessian_map``.

        "complete": R has orthonormal columns, so (R A R^T + alpha (I - R R^T))^{-1} =
        R A^{-1} R^T + (I - R R^T)/alpha, O(j^3) for "eigen" and O(j^2) for "cholesky" (R = [I; 0]);
        A itself is not needed. The other maps keep A (one more rank-one update per round) and
        invert R A R^T + alpha I, O(j^3).
        """
        m, m_old = R.shape
        self.v_ = R @ self.w_
        if self.hessian_map == "complete":
            if self.embedding == "cholesky":
                Ainv = np.eye(m) / self.alpha_
                Ainv[:m_old, :m_old] = self.Ainv_
            else:
                Ainv = R @ self.Ainv_ @ R.T + (np.eye(m) - R @ R.T) / self.alpha_
        else:
            mapped = R @ self.A_ @ R.T
            A = mapped + self.alpha_ * np.eye(m)
            stored = A if self.hessian_map == "regularized" else mapped
            self.A_ = np.ascontiguousarray(0.5 * (stored + stored.T))
            Ainv = scipy.linalg.inv(0.5 * (A + A.T), check_finite=False)
        self.Ainv_ = np.ascontiguousarray(0.5 * (Ainv + Ainv.T))


__all__ = ["ProsNKons", "ConKons", "BKons", "kons_rounds", "nystrom_embedding", "cholesky_embedding_append"]

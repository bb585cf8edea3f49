"""Raker's and AdaRaker's step (component ``"exponential weights"`` of :mod:`okl.components`): each
kernel's OGD step on its Fourier features and the exponential weights of the kernels (and of
AdaRaker's instances on covering intervals), over the ``"fourier kernels"`` map (P Fourier maps,
:func:`okl.components.maps.fourier.fourier_kernels_features`). The rule, its defaults and sources:
:mod:`okl.learners.raker` (Shen, Chen & Giannakis, JMLR 2019; KAF.md K9). Per round O(K P D) after
the features' O(P D d).

In auto's engine (the layout of :mod:`okl.components.columns`): the weights theta (K x P x 2D, the
learner's, shared) at ``O_W``; at ``O_G`` the constants (:data:`CONSTANTS`), then the kernels'
exponents (K x P), the instances' (K) and the stats (2), all the learner's, shared, then each
instance's restart period and share (K each); at ``O_U`` the work (K P + K)."""

from __future__ import annotations

import math

import numpy as np

from okl._compiled import dot, jit, loss_derivative, loss_value, ogd_step, row_ok, sub_scaled
from okl._jit import jit_inline
from okl.components.columns import K, LOSS, NL, NOTHING, NSEEN, O_A, O_G, O_KB, O_U, O_W, feature_slot
from okl.components.maps.fourier import fourier_kernels_features, kernels_member_features


@jit
def _mixture(expo, values):
    """sum_k exp(-(expo_k - min expo)) values_k / sum_k exp(-(expo_k - min expo))."""
    low = expo[0]
    for k in range(1, expo.shape[0]):
        low = min(low, expo[k])
    num = 0.0
    den = 0.0
    for k in range(expo.shape[0]):
        w = math.exp(low - expo[k])
        num += w * values[k]
        den += w
    return num / den


@jit
def raker_decision(theta, expo, meta, z, fk, fi):
    """The decision from the features z: fk[i, p] = theta[i, p] . z_p (instance i, kernel p), fi[i]
    instance i's kernel mixture, and the instances' mixture (Raker: the one instance's)."""
    K, P, F = theta.shape
    for i in range(K):
        for k in range(P):
            fk[i, k] = dot(theta[i, k], z[k * F:(k + 1) * F])
        fi[i] = _mixture(expo[i], fk[i])
    if K == 1:
        return fi[0]
    return _mixture(meta, fi)


@jit
def raker_predict(UT, theta, expo, meta, x, bound, p, z, fk, fi):
    """(ok, f(x)): x checked (:func:`okl._compiled.row_ok`), its features into z, the decision."""
    if not row_ok(x, bound):
        return False, 0.0
    fourier_kernels_features(UT, x, theta.shape[1], p, z)
    return True, raker_decision(theta, expo, meta, z, fk, fi)


@jit
def _shift_to_zero(expo):
    """expo -= min(expo) (the weights do not change; the exponents stay small)."""
    low = expo[0]
    for k in range(1, expo.shape[0]):
        low = min(low, expo[k])
    for k in range(expo.shape[0]):
        expo[k] -= low


@jit
def _restart(theta, expo, meta, i, prior):
    """Instance i starts afresh (theta 0, equal kernel weights) with share ``prior`` of the mixture;
    the others keep their proportions."""
    theta[i, :, :] = 0.0
    expo[i, :] = 0.0
    K = meta.shape[0]
    low = math.inf
    for j in range(K):
        if j != i:
            low = min(low, meta[j])
    others = 0.0
    for j in range(K):
        if j != i:
            others += math.exp(low - meta[j])
    meta[i] = low - math.log(prior * others / (1.0 - prior))


@jit
def raker_round(UT, theta, expo, meta, periods, priors, stats, x, y, eta, eta_w, reg, lkind, decaying,
                unit_targets, p, z, fk, fi, features_ready):
    """One test-then-train round (the per-event hooks and ``_process``'s loop both call this):
    the features of x (unless ``features_ready``: z holds them), the decision f, then every
    instance's kernel steps and weights, the instances' weights, and the restarts due after the
    round. ``stats`` = [rounds learned, sum of squared targets]; ``periods[i]`` instance i's
    restart period (0: never), ``priors[i]`` its share on a restart (0: 1 / (t + 1) after t
    rounds). Returns f."""
    K, P, F = theta.shape
    if not features_ready:
        fourier_kernels_features(UT, x, P, p, z)
    f = raker_decision(theta, expo, meta, z, fk, fi)
    t = stats[0] + 1.0
    stats[1] += y * y
    unit = stats[1] / t if unit_targets else 1.0
    for i in range(K):
        age = t if periods[i] == 0 else (stats[0] % periods[i]) + 1.0
        rate = 1.0 / math.sqrt(age) if decaying else 1.0
        step = eta * rate
        shrink = 1.0 - 2.0 * step * reg
        for k in range(P):
            th = theta[i, k]
            zk = z[k * F:(k + 1) * F]
            loss = loss_value(lkind, fk[i, k], y)
            if reg > 0.0:
                loss += reg * dot(th, th)
                for j in range(F):
                    th[j] *= shrink
            if unit > 0.0:
                expo[i, k] += eta_w * rate * loss / unit
            g = loss_derivative(lkind, fk[i, k], y)
            if g != 0.0:
                sub_scaled(th, ogd_step(step * g, zk, lkind), zk)
        _shift_to_zero(expo[i])
        if K > 1 and unit > 0.0:
            meta[i] += eta_w * rate * loss_value(lkind, fi[i], y) / unit
    stats[0] = t
    if K > 1:
        _shift_to_zero(meta)
        for i in range(K):
            if periods[i] > 0 and t % periods[i] == 0.0:
                _restart(theta, expo, meta, i, priors[i] if priors[i] > 0.0 else 1.0 / (t + 1.0))
        _shift_to_zero(meta)
    return f


@jit
def raker_rounds(X, Y, UT, theta, expo, meta, periods, priors, stats, eta, eta_w, reg, lkind, decaying,
                 unit_targets, out):
    """:func:`raker_round` over the rows of X (out[i]: the decision before learning row i)."""
    K, P, F = theta.shape
    p = np.empty(UT.shape[1])
    z = np.empty(P * F)
    fk = np.empty((K, P))
    fi = np.empty(K)
    given = X.shape[0] < 0  # a run-time False: Numba compiles a callee again for a literal argument
    for i in range(X.shape[0]):
        out[i] = raker_round(UT, theta, expo, meta, periods, priors, stats, X[i], Y[i], eta, eta_w, reg, lkind,
                             decaying, unit_targets, p, z, fk, fi, given)


# ---- a member of auto's engine -------------------------------------------------------------------

#: the step's constants at ``O_G``, in order (then its arrays: see the module docstring)
CONSTANTS = ("instances", "eta", "eta_w", "reg", "decaying", "unit_targets")
N_CONSTANTS = len(CONSTANTS)


@jit_inline
def _member_views(F, I, j):
    """Member j's theta (K x P x 2D), exponents (K x P), instances' exponents (K), stats (2),
    restart periods and shares (K each), work fk (K x P) and fi (K), and the constants' offset."""
    o = I[j, O_G]
    n, P = int(F[o]), I[j, NL]
    width = I[j, K] // P
    theta = F[I[j, O_W]:I[j, O_W] + n * P * width].reshape((n, P, width))
    a = o + N_CONSTANTS
    expo = F[a:a + n * P].reshape((n, P))
    a += n * P
    meta, stats = F[a:a + n], F[a + n:a + n + 2]
    periods, priors = F[a + n + 2:a + 2 * n + 2], F[a + 2 * n + 2:a + 3 * n + 2]
    u = I[j, O_U]
    return theta, expo, meta, stats, periods, priors, F[u:u + n * P].reshape((n, P)), F[u + n * P:u + n * P + n], o


@jit_inline
def raker_outputs_one(F, I, R, j, x, xi, xv, q, out):
    """Member j's decision on row x into out[0]: every kernel's features into its slot q (a
    sparse row on its dense copy x), the kernels' and instances' mixture (:func:`raker_decision`)."""
    theta, expo, meta, _, _, _, fk, fi, _ = _member_views(F, I, j)
    z = kernels_member_features(F, I, R, j, x, xi, xv, True, q, False)
    out[0] = raker_decision(theta, expo, meta, z, fk, fi)


@jit_inline
def raker_learn_one(F, I, R, j, x, xi, xv, y, out, q):
    """Member j's round on row x with label / target y (:func:`raker_round` on the features its
    decision left in slot q)."""
    theta, expo, meta, stats, periods, priors, fk, fi, o = _member_views(F, I, j)
    d, PD = x.shape[0], I[j, K] // 2
    raker_round(F[I[j, O_A]:I[j, O_A] + d * PD].reshape((d, PD)), theta, expo, meta, periods, priors, stats, x, y,
                F[o + 1], F[o + 2], F[o + 3], I[j, LOSS], F[o + 4] != 0.0, F[o + 5] != 0.0,
                F[I[j, O_KB]:I[j, O_KB] + PD], feature_slot(F, I, j, q), fk, fi, x.shape[0] >= 0)
    I[j, NSEEN] += 1
    return NOTHING


def raker_layout(plan, m, I, R):
    """The step's parts after the weights (see the module docstring): the constants, the
    learner's exponents and stats (shared), its restart periods and shares (copies; all three in
    ``plan.options``), the work."""
    K, P = int(plan.options["constants"][0]), int(I[NL])
    return [(O_G, np.asarray(plan.options["constants"], dtype=np.float64), None),
            (None, getattr(m, "expo_"), "expo_"), (None, getattr(m, "meta_"), "meta_"),
            (None, getattr(m, "stats_"), "stats_"),
            (None, np.asarray(plan.options["periods"], dtype=np.float64), None),
            (None, np.asarray(plan.options["priors"], dtype=np.float64), None), (O_U, K * P + K, None)]

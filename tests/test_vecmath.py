"""okl._vecmath: the vectorisable exp / cos / sin against NumPy and long-double references, their
special values, that their loops compile to packed (SIMD) arithmetic, and that every compiled
kernel path computes the same values bit for bit.

Accuracy is measured in ulp of the double result: |ours - ref| / spacing(|ref|) (for subnormal
results spacing is 2^-1074, so the bound holds absolutely there). Stated bounds: within 2 ulp of
NumPy's np.exp / np.cos / np.sin, and (where long double has a 64-bit mantissa, as on x86) within
1 ulp of the exact value; measured maxima when written: exp 0.88 ulp, cos 0.77 ulp, sin 0.78 ulp
(NumPy's own on the same inputs: 0.69, 0.56, 0.51).
"""

import math
import platform
import re

import numba as nb
import numpy as np
import pytest

import okl
from okl import _compiled, _vecmath
from okl._vecmath import SINCOS_MAX_ARG, exp_neg_scaled, exp_scalar, sincos_into, sincos_scaled_into
from okl.learners._expansion import column_kernel_row
from okl.learners.fogd import _project, fogd_decision, fourier_features
from okl.components.maps.fourier import project_t

ULP_VS_NUMPY = 2.0
ULP_VS_EXACT = 1.0
LD = np.longdouble
EXACT_REFERENCE = np.finfo(LD).nmant >= 63


def ulp_error(ours, ref):
    """|ours - ref| in units of the spacing of the double nearest to ref (ref: float or long)."""
    refd = np.asarray(ref).astype(np.float64)
    err = np.abs(np.asarray(ours).astype(LD) - np.asarray(ref).astype(LD))
    return (err / np.spacing(np.abs(refd)).astype(LD)).astype(np.float64)


# --------------------------------------------------------------------------------------------
# exp


def exp_arguments():
    """3 x 10^6 arguments x of exp(-x) in [0, 800]: uniform over the range, dense over the
    underflow region (708 - 746: subnormal results and the underflow to 0), small ones, and the
    edges."""
    rng = np.random.default_rng(0)
    edges = [0.0, 5e-324, 1e-300, 1e-17, 0.5 * math.log(2), math.log(2), 708.3964185322641,
             708.4, 744.44007192138122, 745.1332191019411, 745.1332191019412, 745.2, 746.0, 800.0]
    return np.concatenate([rng.uniform(0.0, 800.0, 10**6), rng.uniform(700.0, 746.0, 10**6),
                           rng.uniform(0.0, 1.0, 5 * 10**5), np.exp(rng.uniform(-700, 0, 5 * 10**5)),
                           edges])


def test_exp_neg_scaled_accuracy():
    x = exp_arguments()
    out = x.copy()
    exp_neg_scaled(out, 1.0, out.size)
    ref = np.exp(-x)
    assert ulp_error(out, ref).max() <= ULP_VS_NUMPY
    sub = (ref > 0) & (ref < np.finfo(float).tiny)
    assert sub.sum() > 10**5 and (ref == 0).sum() > 10**4  # the subnormal range and underflow
    np.testing.assert_array_equal(out[ref == 0], 0.0)
    normal = ref >= np.finfo(float).tiny
    assert np.max(np.abs(out[normal] - ref[normal]) / ref[normal]) <= 4.5e-16
    assert np.max(np.abs(out[sub] - ref[sub])) <= 1e-300
    if EXACT_REFERENCE:
        assert ulp_error(out, np.exp(-x.astype(LD))).max() <= ULP_VS_EXACT


@pytest.mark.parametrize("a", [0.5, 1.0 / 3.0, 2.0, 7.3])
def test_exp_neg_scaled_scale_and_length(a):
    """out[j] = exp(-a out[j]) for j < m only (the product -a out[j] rounded first, as a loop of
    math.exp would)."""
    rng = np.random.default_rng(1)
    x = rng.uniform(0.0, 800.0 / a, 10**5)
    out = x.copy()
    exp_neg_scaled(out, a, 90000)
    assert ulp_error(out[:90000], np.exp(-a * x[:90000])).max() <= ULP_VS_NUMPY
    np.testing.assert_array_equal(out[90000:], x[90000:])


def test_exp_special_values():
    x = np.array([0.0, -0.0, np.inf, np.nan, 1e308, 5e-324, 1e-20, 745.14, 1e6])
    out = x.copy()
    exp_neg_scaled(out, 1.0, out.size)
    assert out[0] == 1.0 and out[1] == 1.0 and out[2] == 0.0 and np.isnan(out[3])
    assert out[4] == 0.0 and out[5] == 1.0 and out[6] == 1.0 and out[7] == 0.0 and out[8] == 0.0
    # exp_scalar on the whole line: overflow to inf, -inf to 0, NaN to NaN
    assert exp_scalar(0.0) == 1.0 and exp_scalar(-np.inf) == 0.0 and exp_scalar(np.inf) == np.inf
    assert np.isnan(exp_scalar(np.nan)) and exp_scalar(710.0) == np.inf
    assert exp_scalar(-745.0) == np.exp(-745.0) == 5e-324
    t = np.random.default_rng(2).uniform(-745.0, 709.78, 10**5)
    assert ulp_error([exp_scalar(v) for v in t[:2000]], np.exp(t[:2000])).max() <= ULP_VS_NUMPY
    assert exp_scalar(709.78) == pytest.approx(np.exp(709.78), rel=4.5e-16)


# --------------------------------------------------------------------------------------------
# sin and cos


def sincos_arguments():
    """3.8 x 10^6 arguments: uniform on |p| <= 10^6 and on [-10, 10], log-uniform magnitudes
    from 1e-300 to 1e6, and the doubles nearest to k pi / 2 (k <= 6 x 10^5) and their
    neighbours, where the reduced argument is tiny."""
    rng = np.random.default_rng(3)
    k = np.arange(1, 600001, dtype=float) * (np.pi / 2)
    return np.concatenate([rng.uniform(-1e6, 1e6, 10**6), rng.uniform(-10.0, 10.0, 5 * 10**5),
                           np.exp(rng.uniform(-690.0, 13.8, 5 * 10**5)) * rng.choice([-1.0, 1.0], 5 * 10**5),
                           k, np.nextafter(k, 0.0), -np.nextafter(k, np.inf),
                           [np.pi / 4, np.nextafter(np.pi / 4, 1.0), 3 * np.pi / 4, 1e-310, 5e-324]])


def test_sincos_accuracy():
    p = sincos_arguments()
    c, s = np.empty_like(p), np.empty_like(p)
    sincos_into(p, c, s, p.size)
    assert ulp_error(c, np.cos(p)).max() <= ULP_VS_NUMPY
    assert ulp_error(s, np.sin(p)).max() <= ULP_VS_NUMPY
    if EXACT_REFERENCE:
        assert ulp_error(c, np.cos(p.astype(LD))).max() <= ULP_VS_EXACT
        assert ulp_error(s, np.sin(p.astype(LD))).max() <= ULP_VS_EXACT


def test_sincos_special_values_and_fallback():
    """inf and NaN give NaN (as libm); |p| > SINCOS_MAX_ARG goes to math.cos / math.sin; the sign
    of zero is kept; only the first n entries are written; the scale multiplies both."""
    p = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e22, np.nextafter(SINCOS_MAX_ARG, 0.0),
                  SINCOS_MAX_ARG, np.nextafter(SINCOS_MAX_ARG, np.inf), -2e6, 7.0])
    n = p.size - 1
    c, s = np.full(p.size, 9.0), np.full(p.size, 9.0)
    with np.errstate(invalid="ignore"):
        sincos_into(p, c, s, n)
        rc, rs = np.cos(p[:n]), np.sin(p[:n])
    assert c[0] == 1.0 and s[0] == 0.0 and not np.signbit(s[0])
    assert c[1] == 1.0 and s[1] == 0.0 and np.signbit(s[1])
    assert np.isnan(c[2:5]).all() and np.isnan(s[2:5]).all()
    for j in (5, 6, 9, 10):  # the fallback: libm's values exactly
        assert c[j] == math.cos(p[j]) and s[j] == math.sin(p[j])
    assert ulp_error(c[5:n], rc[5:]).max() <= ULP_VS_NUMPY and ulp_error(s[5:n], rs[5:]).max() <= ULP_VS_NUMPY
    assert c[n] == 9.0 and s[n] == 9.0
    q = np.random.default_rng(4).normal(0.0, 5.0, 1000)
    q[::97] = 3e6
    c1, s1, c2, s2 = (np.empty(1000) for _ in range(4))
    sincos_into(q, c1, s1, 1000)
    sincos_scaled_into(q, 0.125, c2, s2, 1000)
    np.testing.assert_array_equal(c2, c1 * 0.125)
    np.testing.assert_array_equal(s2, s1 * 0.125)


# --------------------------------------------------------------------------------------------
# vectorisation


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86 assembly")
@pytest.mark.parametrize("name", ["exp_neg_scaled", "sincos_scaled_into"])
def test_loops_compile_to_packed_arithmetic(name):
    """The main loops are vectorised: the polynomial is evaluated with packed double multiplies
    (mulpd on xmm/ymm/zmm; a loop calling math.exp gets at most its one -a * x packed, the
    exponentials being scalar calls). (Compiled afresh: Numba does not show the assembly of
    cached code.)"""
    f = getattr(_vecmath, name)
    arr = nb.types.float64[::1]
    sig = (arr, nb.float64, nb.int64) if name == "exp_neg_scaled" else (arr, nb.float64, arr, arr, nb.int64)
    g = nb.njit(sig, fastmath=False)(f.py_func)
    asm = g.inspect_asm(g.signatures[0])
    packed = len(re.findall(r"\bv?mulpd\b", asm))
    assert packed >= 10, f"{packed} packed multiplies: the loop is not vectorised"


# --------------------------------------------------------------------------------------------
# the compiled kernel paths agree bit for bit; NumPy within rounding


@pytest.mark.parametrize("kernel", [okl.RBF(sigma=0.7), okl.RBF(sigma=0.05), okl.Laplacian(sigma=1.3)])
def test_compiled_kernel_rows_equal_kernel_value_bit_for_bit(kernel):
    rng = np.random.default_rng(5)
    S, x = rng.random((37, 6)), rng.random(6)
    spec = kernel.spec()
    value = np.array([_compiled.kernel_value(*spec, S[j], x) for j in range(37)])
    row, row_t, col = np.empty(37), np.empty(37), np.empty(37)
    _compiled.kernel_row(*spec, S, 37, x, row)
    _compiled.kernel_row_t(*spec, np.ascontiguousarray(S.T), 37, x, row_t)
    column_kernel_row(*spec, np.ascontiguousarray(S.T), 37, x, col)
    for other in (row, row_t, col):
        np.testing.assert_array_equal(other, value)
    # NumPy's kernel: its own sums and np.exp, so rounding level, not bit for bit (a rounding
    # difference in the exponent e moves exp(-e) by a relative e * 2^-52)
    ref = kernel(S, x[None, :])[:, 0]
    assert np.all(np.abs(value - ref) <= 1e-14 * (1.0 - np.log(ref)) * ref)
    assert _compiled.kernel_value(*spec, x, x) == 1.0


def test_fogd_projections_and_features():
    """The transposed projections (run()) equal the per-direction dot products (single rows) bit
    for bit; the Fourier features match NumPy's ``fourier_features`` to rounding level; run() and
    predict_one / learn_one agree."""
    rng = np.random.default_rng(6)
    for kernel in (okl.RBF(sigma=0.5), okl.Laplacian(sigma=0.01)):  # Cauchy: some |p| > 2^19 pi
        U = kernel.sample_frequencies(300, 7, rng)
        X = rng.normal(size=(40, 7))
        p1, p2 = np.empty(300), np.empty(300)
        UT = np.ascontiguousarray(U.T)
        for x in X:
            _project(U, x, p1)
            project_t(UT, x, p2)
            np.testing.assert_array_equal(p1, p2)
        learner = okl.make("fogd", n_components=300, kernel=kernel, random_state=0)
        trace = learner.run(X[:20], np.sign(X[:20, 0]))
        w = learner.w_.copy()
        Z = fourier_features(X[20:], learner.U_)
        dec = [fogd_decision(learner.U_, w, x) for x in X[20:]]
        np.testing.assert_allclose(dec, Z @ w, rtol=0, atol=1e-12 * max(1.0, np.abs(w).sum()))
        again = okl.make("fogd", n_components=300, kernel=kernel, random_state=0)
        per_event = []
        for x, y in zip(X[:20], np.sign(X[:20, 0])):
            per_event.append(again.predict_one(x))
            again.learn_one(x, y)
        np.testing.assert_allclose(per_event, trace.decisions, rtol=0, atol=1e-12)
        np.testing.assert_allclose(again.w_, learner.w_, rtol=0, atol=1e-12)


def test_dot_is_eight_partial_sums_in_a_fixed_order():
    """okl._compiled.dot: s_r = sum over i = 8m + r in order from 0.0, then ((s0 + s1) + (s2 + s3))
    + ((s4 + s5) + (s6 + s7)), then the remaining terms in order: the same bits as this plain
    Python evaluation (IEEE doubles), whatever the CPU vectorises."""
    from okl._compiled import dot

    rng = np.random.default_rng(2)
    for k in (0, 1, 7, 8, 9, 100, 2003):
        u = rng.standard_normal(k) * 10.0 ** rng.integers(-5, 6, k)
        v = rng.standard_normal(k)
        lanes = [0.0] * 8
        m = k - k % 8
        for i in range(m):
            lanes[i % 8] += float(u[i]) * float(v[i])
        s = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
        for i in range(m, k):
            s += float(u[i]) * float(v[i])
        assert dot(u, v) == s, k


def test_dot_rows_is_each_rows_dot_bit_for_bit():
    """okl._compiled.dot_rows (K outputs on one feature vector, two rows a pass) gives every
    row's dot product exactly, for any number of rows and an odd last row."""
    from okl._compiled import dot, dot_rows

    rng = np.random.default_rng(1)
    for n in range(1, 20):
        for k in (0, 1, 7, 100, 801):
            W = rng.standard_normal((n, k)) * 10.0 ** rng.integers(-5, 6, (n, k))
            z = rng.standard_normal(k)
            out = np.full(n + 1, 7.0)
            dot_rows(W, z, out[:n])
            assert [out[o] for o in range(n)] == [dot(W[o], z) for o in range(n)], (n, k)
            assert out[n] == 7.0


def test_adagrad_step_vectorised_is_the_branching_form():
    """okl.learners.nogd.adagrad_step is written branch-free (it vectorises); it must give the
    branching form's G and w bit for bit: coordinates with g z_j = 0 (or underflowing to 0) keep
    G_j and w_j, signed zeros included, and G_j = 0 takes no step."""
    from okl.components.steps.adagrad import adagrad_step

    def branching(z, g, w, G, lr):
        for j in range(w.shape[0]):
            gj = g * z[j]
            if gj != 0.0:
                G[j] += gj * gj
                if G[j] > 0.0:
                    w[j] -= lr * gj / np.sqrt(G[j])

    rng = np.random.default_rng(0)
    for trial in range(200):
        k = int(rng.integers(1, 130))
        z = rng.standard_normal(k) * 10.0 ** rng.integers(-200, 3, k)
        z[rng.random(k) < 0.2] = 0.0
        z[rng.random(k) < 0.1] = -0.0
        w = rng.standard_normal(k)
        w[rng.random(k) < 0.2] = -0.0
        G = np.abs(rng.standard_normal(k))
        G[rng.random(k) < 0.3] = 0.0
        g = float(rng.choice([1.0, -1.0, 1e-200, 0.3]))
        w1, G1, w2, G2 = w.copy(), G.copy(), w.copy(), G.copy()
        branching(z, g, w1, G1, 0.7)
        adagrad_step(z, g, w2, G2, 0.7)
        assert w1.tobytes() == w2.tobytes() and G1.tobytes() == G2.tobytes(), trial

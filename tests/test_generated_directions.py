"""okl.features.generated: random-feature directions generated on the fly.

Bit equality with the stored-matrix path (rows_axpy / FOGD's Fourier map), the generator against
an independent pure-Python SplitMix64 and NumPy's Box-Muller / tan on the same words, the
distributions (moments, quantiles, Kolmogorov-Smirnov, correlations), kernel approximation with
okl's own kernels' parameterisation, determinism, vectorisation and the input checks.
"""

import math
import platform
import re

import numba as nb
import numpy as np
import pytest
from scipy import stats

import okl
from okl._compiled import rows_axpy
from okl.features import generated as gen
from okl.features.generated import (CAUCHY, GAUSSIAN, centred_uniform, column_key, column_word, fill_column,
                                    generated_directions, log_positive, mix64, project_generated, unit_uniform)
from okl.components.maps.fourier import fourier_from_projections

MASK = 2**64 - 1
GAMMA = 0x9E3779B97F4A7C15


def mix_reference(z):
    """SplitMix64's finaliser in Python integers (Vigna's splitmix64.c)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def words_reference(seed, j, n):
    """Words 0..n-1 of column j, in Python integers (the module docstring's formulas)."""
    key = mix_reference((mix_reference((seed + GAMMA) & MASK) + (j + 1) * GAMMA) & MASK)
    return [mix_reference((key + (i + 1) * GAMMA) & MASK) for i in range(n)]


def column(seed, kind, j, D, scale=1.0):
    out = np.empty(D)
    fill_column(seed, kind, j, scale, out)
    return out


def sparse_row(rng, d, nnz):
    indices = np.sort(rng.choice(d, nnz, replace=False)).astype(np.int64)
    values = rng.normal(0.0, 1.0, nnz)
    values[::7] = 0.0  # explicit zeros among the non-zeros: their terms are +-0.0 as in the dense sum
    dense = np.zeros(d)
    dense[indices] = values
    return indices, values, dense


# --------------------------------------------------------------------------------------------
# the generator against independent references


def test_mix64_is_splitmix64():
    """SplitMix64 from state 0: its first output is 0xe220a8397b1dcdaf (splitmix64.c); and
    mix64 equals the Python finaliser on arbitrary words."""
    assert int(mix64(np.uint64(GAMMA))) == 0xE220A8397B1DCDAF
    rng = np.random.default_rng(0)
    for z in rng.integers(0, 2**63, 200, dtype=np.uint64) * np.uint64(2) + np.uint64(1):
        assert int(mix64(z)) == mix_reference(int(z))


@pytest.mark.parametrize("seed, j", [(0, 0), (1, 7), (2**63 - 1, 2**20 - 1)])
def test_words_and_uniforms_match_the_formulas(seed, j):
    """column_word(column_key(seed, j), n) is the docstring's SplitMix64 stream; the uniforms are
    the exact grids (2m + 1 - 2^53) 2^-54 and (m + 1) 2^-53 of the top 53 bits m."""
    key = column_key(seed, j)
    ref = words_reference(seed, j, 20)
    for n, word in enumerate(ref):
        assert int(column_word(key, n)) == word
        m = word >> 11
        w = centred_uniform(np.uint64(word))
        assert w == (2 * m + 1 - 2**53) / 2**54 and -0.5 < w < 0.5
        v = unit_uniform(np.uint64(word))
        assert v == (m + 1) / 2**53 and 0.0 < v <= 1.0
    extremes = [np.uint64(0), np.uint64(MASK)]
    assert centred_uniform(extremes[0]) == -0.5 + 2.0**-54 and centred_uniform(extremes[1]) == 0.5 - 2.0**-54
    assert unit_uniform(extremes[0]) == 2.0**-53 and unit_uniform(extremes[1]) == 1.0


def gaussian_reference(seed, j, D):
    """The Gaussian entries of column j by the module docstring, in NumPy: Box-Muller pairs
    (np.log, np.cos, np.sin) laid out in blocks of 32 (16 cos outputs, then their 16 sin outputs)."""
    pairs = -(-D // 32) * 16
    words = np.array(words_reference(seed, j, 2 * pairs), dtype=np.uint64)
    m = (words >> np.uint64(11)).astype(np.int64)
    r = np.sqrt(-2.0 * np.log((m[0::2] + 1).astype(np.float64) * 2.0**-53))
    theta = 2.0 * math.pi * ((2 * m[1::2] + 1 - 2**53).astype(np.float64) * 2.0**-54)
    blocks_cos = (r * np.cos(theta)).reshape(-1, 16)
    blocks_sin = (r * np.sin(theta)).reshape(-1, 16)
    return np.hstack([blocks_cos, blocks_sin]).ravel()[:D]


@pytest.mark.parametrize("D", [1, 16, 17, 31, 32, 33, 301])
def test_entries_are_box_muller_and_tan_of_the_words(D):
    """The Gaussian entries are sqrt(-2 ln v) (cos, sin)(2 pi w) of the words in the block layout,
    and the Cauchy ones tan(pi w), as NumPy computes them from the same words (to rounding: our
    ln, cos, sin are within 1 ulp, as NumPy's are); every D, including partial blocks."""
    seed, j = 11, 123
    np.testing.assert_allclose(column(seed, GAUSSIAN, j, D), gaussian_reference(seed, j, D), rtol=1e-14, atol=1e-15)
    words = np.array(words_reference(seed, j, D), dtype=np.uint64)
    w = (2 * (words >> np.uint64(11)).astype(np.int64) + 1 - 2**53).astype(np.float64) * 2.0**-54
    np.testing.assert_allclose(column(seed, CAUCHY, j, D), np.tan(math.pi * w), rtol=1e-13)


def test_log_is_within_one_ulp():
    """fdlibm's log as written here: within 1 ulp of the long-double logarithm over (0, 1] (the
    arguments the generator gives it), and exact at 1."""
    rng = np.random.default_rng(3)
    x = np.concatenate([np.exp(-rng.uniform(0.0, 37.0, 200_000)), rng.uniform(0.5, 1.0, 100_000),
                        1.0 - rng.integers(1, 2**20, 1000) * 2.0**-53, [2.0**-53, 0.5, 1.0]])
    log_all = nb.njit(lambda a: np.array([log_positive(t) for t in a]))
    ours = log_all(x)
    assert ours[-1] == 0.0 and ours[-2] == -math.log(2.0)
    if np.finfo(np.longdouble).nmant >= 63:
        exact = np.log(x.astype(np.longdouble))
        ulp = np.abs(ours.astype(np.longdouble) - exact) / np.spacing(np.abs(exact.astype(np.float64)))
        assert float(ulp[:-1].max()) <= 1.0
    else:
        np.testing.assert_allclose(ours, np.log(x), rtol=4e-16)


# --------------------------------------------------------------------------------------------
# bit equality with the stored-matrix path


@pytest.mark.parametrize("kind", [GAUSSIAN, CAUCHY])
@pytest.mark.parametrize("seed", [0, 5, 2**40 + 3])
@pytest.mark.parametrize("D", [64, 63, 40])
def test_project_generated_equals_stored_matrix_bit_for_bit(kind, seed, D):
    """p from the generated columns equals rows_axpy(UT, x, p) on the dense row with the stored
    UT = generated_directions(...), with np.array_equal; so do the Fourier features."""
    d, scale = 300, 0.37
    UT = generated_directions(seed, kind, scale, d, D)
    rng = np.random.default_rng(seed % 1000 + kind)
    for nnz in (1, 12, 50, 300):
        indices, values, dense = sparse_row(rng, d, nnz)
        p_gen, p_stored = np.empty(D), np.empty(D)
        project_generated(seed, kind, scale, indices, values, p_gen)
        rows_axpy(UT, dense, p_stored)
        assert np.array_equal(p_gen, p_stored)
        z_gen, z_stored = np.empty(2 * D), np.empty(2 * D)
        fourier_from_projections(p_gen, 1.0 / math.sqrt(D), z_gen)
        fourier_from_projections(p_stored, 1.0 / math.sqrt(D), z_stored)
        assert np.array_equal(z_gen, z_stored)
    # and both are U x to rounding (a wrong column or order of entries would fail here)
    np.testing.assert_allclose(p_gen, dense @ UT, rtol=1e-12, atol=1e-12)


def test_generated_directions_rows_are_columns():
    """Row c of generated_directions is fill_column(c); a shorter D is a prefix (entries do not
    depend on D); scale multiplies the standard entries exactly."""
    UT = generated_directions(9, GAUSSIAN, 1.0, 5, 33)
    for c in range(5):
        assert np.array_equal(UT[c], column(9, GAUSSIAN, c, 33))
        assert np.array_equal(UT[c, :10], column(9, GAUSSIAN, c, 10))
    assert np.array_equal(generated_directions(9, GAUSSIAN, 0.25, 5, 33), UT * 0.25)
    cauchy = generated_directions(9, CAUCHY, 1.0, 5, 33)
    assert np.array_equal(cauchy[:, :8], generated_directions(9, CAUCHY, 1.0, 5, 8))


def test_empty_row_projects_to_zero():
    p = np.full(16, 7.0)
    project_generated(1, GAUSSIAN, 1.0, np.empty(0, np.int64), np.empty(0), p)
    assert np.array_equal(p, np.zeros(16))


# --------------------------------------------------------------------------------------------
# distributions


def entries(seed, kind, n_columns=200, D=1000, first=0):
    return generated_directions(seed, kind, 1.0, first + n_columns, D)[first:]


def test_gaussian_entries_are_standard_normal():
    x = entries(1, GAUSSIAN).ravel()
    assert x.size == 200_000
    assert abs(x.mean()) < 0.01
    assert abs(x.var() - 1.0) < 0.01
    assert stats.kstest(x, "norm").statistic < 0.005


def test_cauchy_entries_are_standard_cauchy():
    x = entries(2, CAUCHY).ravel()
    q1, median, q3 = np.quantile(x, [0.25, 0.5, 0.75])
    assert abs(median) < 0.01
    assert abs(q1 + 1.0) < 0.02 and abs(q3 - 1.0) < 0.02
    assert stats.kstest(x, "cauchy").statistic < 0.005


@pytest.mark.parametrize("kind", [GAUSSIAN, CAUCHY])
def test_entries_are_uncorrelated(kind):
    """|corr| < 0.01 over at least 100,000 pairs each: the two outputs of one Box-Muller pair (entries k and
    k + 16 of a block of 32), neighbours k, k + 1, neighbouring columns j, j + 1, and seeds 3, 4.
    Cauchy entries through arctan (their CDF up to an affine map; Cauchy variables have no
    correlation)."""
    A = entries(3, kind, n_columns=201, D=1024)
    B = entries(4, kind, n_columns=200, D=1024)
    if kind == CAUCHY:
        A, B = np.arctan(A), np.arctan(B)
    blocks = A[:200].reshape(200, 32, 32)
    pairs = {
        "k, k + 16 in a block (one Box-Muller pair)": (blocks[:, :, :16], blocks[:, :, 16:]),
        "k, k + 1": (A[:200, 0:1000:2], A[:200, 1:1001:2]),
        "j, j + 1": (A[:200, :500], A[1:201, :500]),
        "seeds 3, 4": (A[:100, :1000], B[:100, :1000]),
    }
    for name, (a, b) in pairs.items():
        assert a.size == b.size >= 100_000
        assert abs(np.corrcoef(a.ravel(), b.ravel())[0, 1]) < 0.01, name


# --------------------------------------------------------------------------------------------
# kernel approximation (okl.kernels' parameterisation)


@pytest.mark.parametrize("kernel, kind, spread", [(okl.RBF(sigma=1.0), GAUSSIAN, 0.25),
                                                  (okl.Laplacian(sigma=1.0), CAUCHY, 0.05)])
def test_fourier_features_approximate_the_kernel(kernel, kind, spread):
    """D = 2000 generated directions with scale 1 / sigma (kernels.py: RBF N(0, sigma^-2),
    Laplacian Cauchy of scale 1 / sigma): z(x)^T z(x') within 0.1 of kappa(x, x') on all pairs of
    50 rows (d = 20), mean absolute error < 0.02. The rows' spread puts kappa across (0, 1)."""
    rng = np.random.default_rng(7)
    X = rng.normal(0.0, spread, (50, 20))
    D = 2000
    K = kernel(X, X)
    assert 0.05 < K[np.triu_indices(50, 1)].mean() < 0.8  # a test of values, not of zeros
    indices = np.arange(20, dtype=np.int64)
    Z = np.empty((50, 2 * D))
    p = np.empty(D)
    for i in range(50):
        project_generated(17, kind, 1.0 / kernel.sigma, indices, X[i], p)
        fourier_from_projections(p, 1.0 / math.sqrt(D), Z[i])
    err = np.abs(Z @ Z.T - K)
    assert err.max() < 0.1
    assert err.mean() < 0.02


def test_wrong_scale_would_fail_the_kernel_check():
    """The check above can fail: directions of twice the scale approximate another kernel."""
    rng = np.random.default_rng(7)
    X = rng.normal(0.0, 0.25, (50, 20))
    D = 2000
    P = X @ generated_directions(17, GAUSSIAN, 2.0, 20, D)
    Z = np.hstack([np.cos(P), np.sin(P)]) / math.sqrt(D)
    assert np.abs(Z @ Z.T - okl.RBF(sigma=1.0)(X, X)).max() > 0.1


# --------------------------------------------------------------------------------------------
# determinism


def test_same_seed_and_index_give_the_same_column():
    for kind in (GAUSSIAN, CAUCHY):
        a, b = column(21, kind, 1000, 257), column(21, kind, 1000, 257)
        assert np.array_equal(a, b)
        assert not np.array_equal(a, column(22, kind, 1000, 257))
        assert not np.array_equal(a, column(21, kind, 1001, 257))
        assert np.all(a != column(22, kind, 1000, 257))  # no shared entry at all
        assert np.all(np.isfinite(a))


# --------------------------------------------------------------------------------------------
# vectorisation and input checks


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86 assembly")
def test_column_loops_compile_to_packed_arithmetic():
    """The loop over a column's entries is vectorised: packed double multiplies (mulpd) and a
    packed square root (the Box-Muller radius). (Compiled afresh with the module's options:
    Numba does not show the assembly of cached code.)"""
    arr, iarr = nb.types.float64[::1], nb.types.int64[::1]
    g = nb.njit((nb.int64, nb.int64, nb.float64, iarr, arr, arr), fastmath=False,
                error_model="numpy")(gen.project_generated.py_func)
    asm = g.inspect_asm(g.signatures[0])
    assert len(re.findall(r"\bv?mulpd\b", asm)) >= 20
    assert len(re.findall(r"\bv?sqrtpd\b", asm)) >= 1


def test_bad_input_raises():
    p = np.empty(4)
    with pytest.raises(ValueError, match="strictly ascending"):
        project_generated(0, GAUSSIAN, 1.0, np.array([3, 2]), np.ones(2), p)
    with pytest.raises(ValueError, match="strictly ascending"):
        project_generated(0, GAUSSIAN, 1.0, np.array([-1, 2]), np.ones(2), p)
    with pytest.raises(ValueError, match="same length"):
        project_generated(0, GAUSSIAN, 1.0, np.array([1, 2]), np.ones(3), p)
    with pytest.raises(ValueError, match="kind"):
        project_generated(0, 2, 1.0, np.array([1]), np.ones(1), p)
    with pytest.raises(ValueError, match="seed"):
        fill_column(-1, GAUSSIAN, 0, 1.0, p)
    with pytest.raises(ValueError, match="input index j"):
        fill_column(0, CAUCHY, -3, 1.0, p)
    with pytest.raises(ValueError, match="D must be an integer >= 1"):
        generated_directions(0, GAUSSIAN, 1.0, 3, 0)
    with pytest.raises(ValueError, match="seed"):
        generated_directions(2**63, GAUSSIAN, 1.0, 3, 4)
    with pytest.raises(ValueError, match="scale"):
        generated_directions(0, GAUSSIAN, float("nan"), 3, 4)
    with pytest.raises(ValueError, match="kind"):
        generated_directions(0, 5, 1.0, 3, 4)

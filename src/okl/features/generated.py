"""Random-feature directions generated on the fly from a counter-based generator (no stored matrix).

FOGD's random Fourier features (okl.learners.fogd, ALGORITHMS.md 1.5) need p = U x for D
directions U (D x d): N(0, sigma^-2) entries for the Gaussian (RBF) kernel, Cauchy entries of scale
1 / sigma for the Laplacian (L1) kernel (okl.kernels: ``RBF.sample_frequencies``,
``Laplacian.sample_frequencies``). With hashed sparse rows (d = 2^20 columns) U cannot be stored,
so the column U[:, j] of input index j is regenerated whenever a row has a non-zero at j: entry k
of column j is a pure function entry(seed, j, k), O(1) time and memory each, the same numbers
every time (integer arithmetic and IEEE +, -, *, /, sqrt without fastmath; no libm call, so they
do not depend on the machine's libm either).

Generator
---------
The 64-bit mixing function is the finaliser of SplitMix64 (Steele, Lea & Flood, "Fast splittable
pseudorandom number generators", OOPSLA 2014; the constants of Vigna's ``splitmix64.c``, the
variant "Mix13" of Stafford's 2011 search over MurmurHash3's finaliser)::

    mix64(z): z ^= z >> 30; z *= 0xbf58476d1ce4e5b9; z ^= z >> 27; z *= 0x94d049bb133111eb; z ^= z >> 31

SplitMix64's n-th output (n >= 1) from state s is mix64(s + n gamma), gamma = 0x9e3779b97f4a7c15
(odd, 2^64 / golden ratio), so any output is computed directly from its counter. Here

    key(seed)    = mix64(seed + gamma)            (seed: integer in [0, 2^63))
    key(seed, j) = mix64(key(seed) + (j + 1) gamma)
    word(n)      = mix64(key(seed, j) + (n + 1) gamma)     (mod 2^64 throughout)

i.e. key(seed, j) is output j + 1 of the SplitMix64 stream from state key(seed), and the words of
column j are the outputs of the stream from state key(seed, j).

Uniforms from a word (the top 53 bits m = word >> 11), both exact in double precision:

    centred  w = (2 m + 1 - 2^53) 2^-54 in (-1/2, 1/2)   (u = w + 1/2 = (m + 1/2) 2^-53 in (0, 1):
                                                         held as u - 1/2 because the grid of u has
                                                         no double above 1/2; w's odd numerator has
                                                         at most 53 bits)
    unit     v = (m + 1) 2^-53 in (0, 1]                 (for the logarithm, never 0)

Entries (standard, then multiplied by ``scale``):

* GAUSSIAN: Box-Muller (Box & Muller, Ann. Math. Stat. 29, 1958), both outputs used: pair q takes
  words 2q and 2q + 1, r_q = sqrt(-2 ln v(word 2q)), theta_q = 2 pi w(word 2q + 1). The entries come
  in blocks of 32, block b holding pairs q = 16 b + i (i < 16): entry 32 b + i = r_q cos theta_q,
  entry 32 b + 16 + i = r_q sin theta_q (contiguous halves, so the loop vectorises with plain loads
  and stores). A column of D entries uses the pairs q < 16 ceil(D / 32) and ignores the sin outputs
  beyond D.
* CAUCHY: the inverse CDF, entry k = tan(pi w(word k)) = tan(pi (u - 1/2)); pi w is inside
  (-pi/2, pi/2), so the cosine is never 0 and every entry is finite (|entry| <= 3.6e15).

ln is fdlibm's ``e_log.c`` (Sun Microsystems 1993; the FreeBSD msun version) with its branches turned
into selects (its arguments here are normal and positive, so no special case applies), and cos / sin
come from :func:`okl._vecmath.sincos_scalar`: both within 1 ulp and free of calls, so the loop
over the D entries of a column vectorises (packed 64-bit integer multiplies for the mixing).

Public functions: :func:`fill_column` (a column), :func:`project_generated` (p = U x for a sparse
row, bit for bit the stored-matrix projection ``rows_axpy(UT, x, p)``), :func:`generated_directions`
(the stored UT itself, for tests and small d). Cost: a column of D entries is D mixings plus
D / 2 logarithms, square roots and sine-cosine pairs (Gaussian) or D sine-cosine pairs and
divisions (Cauchy); benchmarks/generated_directions.py measures it (docs/results/generated-directions.md).
"""

from __future__ import annotations

import math

import numpy as np

from okl._jit import jit, jit_inline, jit_vector
from okl._vecmath import sincos_scalar

#: entry kinds: standard normal (the Gaussian / RBF kernel's frequencies) and standard Cauchy (the
#: Laplacian kernel's)
GAUSSIAN = 0
CAUCHY = 1

#: largest seed + 1 (seeds are int64 in compiled code)
SEED_LIMIT = 2**63

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_TWO_53 = 2**53
_TWO_M53 = 2.0**-53
_TWO_M54 = 2.0**-54
_TWO_PI = 2.0 * math.pi
#: Gaussian layout: blocks of _BLOCK entries, the cos outputs of _PAIRS Box-Muller pairs then their sin outputs
_PAIRS = 16
_BLOCK = 2 * _PAIRS

# fdlibm e_log.c: ln 2 split so that k ln2_hi is exact for |k| < 2000, and the Remez coefficients
# of R(s) ~ Lg1 s^2 + ... + Lg7 s^14 on [0, 0.1716] (error < 2^-58.45)
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01


@jit
def mix64(z):
    """SplitMix64's finaliser of the uint64 z (module docstring): a bijection of 64-bit words
    whose every output bit depends on every input bit. (Arguments are cast to uint64: Numba
    would type uint64 op int64 as float64.)"""
    z = np.uint64(z)
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@jit
def column_key(seed, j):
    """key(seed, j) = mix64(mix64(seed + gamma) + (j + 1) gamma): the start of column j's stream."""
    return mix64(mix64(np.uint64(seed) + _GAMMA) + (np.uint64(j) + _ONE) * _GAMMA)


@jit
def column_word(key, n):
    """Word n of the column with key ``key``: mix64(key + (n + 1) gamma)."""
    return mix64(np.uint64(key) + (np.uint64(n) + _ONE) * _GAMMA)


@jit
def centred_uniform(word):
    """w = (2 m + 1 - 2^53) 2^-54 in (-1/2, 1/2) from the top 53 bits m of the word (exact)."""
    m = np.int64(word >> _S11)
    return np.float64(2 * m + 1 - _TWO_53) * _TWO_M54


@jit
def unit_uniform(word):
    """v = (m + 1) 2^-53 in (0, 1] from the top 53 bits m of the word (exact, never 0)."""
    return np.float64(np.int64(word >> _S11) + 1) * _TWO_M53


@jit_inline
def log_positive(x):
    """ln x for a positive normal double x, within 1 ulp: fdlibm's e_log.c with its branches as
    selects. x = 2^k (1 + f), sqrt(2)/2 <= 1 + f < sqrt(2); s = f / (2 + f);
    ln(1 + f) = 2s + s R(s^2) with fdlibm's Remez polynomial R; ln x = k ln2_hi + (f - (hfsq -
    (s (hfsq + R) + k ln2_lo))) where f is large, else k ln2_hi - ((s (f - R) - k ln2_lo) - f).
    (fdlibm's k = 0 forms are these with k = 0, and its |f| < 2^-20 shortcut only saves time.)"""
    bits = np.float64(x).view(np.int64)
    hx = bits >> 32
    k = (hx >> 20) - 1023
    hx &= 0x000FFFFF
    i = (hx + 0x95F64) & 0x100000
    # the mantissa with the exponent of 1 (or of 1/2 when it is above sqrt(2)): 1 + f
    k += i >> 20
    f = np.int64(((hx | (i ^ 0x3FF00000)) << 32) | (bits & 0xFFFFFFFF)).view(np.float64) - 1.0
    s = f / (2.0 + f)
    dk = np.float64(k)
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    R = t2 + t1
    hfsq = 0.5 * f * f
    large = ((hx - 0x6147A) | (0x6B851 - hx)) > 0
    with_square = dk * _LN2_HI - ((hfsq - (s * (hfsq + R) + dk * _LN2_LO)) - f)
    without = dk * _LN2_HI - ((s * (f - R) - dk * _LN2_LO) - f)
    return with_square if large else without


@jit_inline
def gaussian_pair(key, q):
    """Box-Muller pair q of the column with key ``key``: (r cos theta, r sin theta) from words 2q
    and 2q + 1, two independent standard normals; they are entries 32 (q // 16) + q % 16 and 16
    after it (the block layout of the module docstring)."""
    r = np.sqrt(-2.0 * log_positive(unit_uniform(column_word(key, 2 * q))))
    c, s = sincos_scalar(_TWO_PI * centred_uniform(column_word(key, 2 * q + 1)))
    return r * c, r * s


@jit_inline
def cauchy_entry(key, k):
    """Standard Cauchy entry k of the column with key ``key``: tan(pi w) = sin / cos (cos > 0)."""
    c, s = sincos_scalar(math.pi * centred_uniform(column_word(key, k)))
    return s / c


@jit
def _check(seed, kind):
    if seed < 0:
        raise ValueError("generated directions: seed must be an integer in [0, 2^63)")
    if kind != GAUSSIAN and kind != CAUCHY:
        raise ValueError("generated directions: kind must be GAUSSIAN (0) or CAUCHY (1)")


@jit_inline
def gaussian_column(key, scale, v, out, accumulate, scratch):
    """Column ``key``'s Gaussian entries e_k times ``scale``, k < len(out), in the block layout of
    the module docstring: out[k] = scale e_k, or with ``accumulate`` out[k] += (scale e_k) v. Each
    block's two halves (the pairs' cos and sin outputs) are contiguous, so the loop over a block's
    pairs vectorises with contiguous loads and stores (interleaving the two outputs of a pair,
    entries 2q and 2q + 1, cost 1.3x the time: 5.0 against 3.9-4.2 ns an entry, measured). A last,
    partial block is generated whole into ``scratch`` (length 32, unused when 32 divides len(out))
    by the same vectorised loop (a loop with a variable trip count is not vectorised) and copied."""
    D = out.shape[0]
    full = D // _BLOCK
    for block in range(full):
        base = block * _BLOCK
        for i in range(_PAIRS):
            a, b = gaussian_pair(key, block * _PAIRS + i)
            if accumulate:
                out[base + i] += (scale * a) * v
                out[base + _PAIRS + i] += (scale * b) * v
            else:
                out[base + i] = scale * a
                out[base + _PAIRS + i] = scale * b
    base = full * _BLOCK
    if base < D:
        for i in range(_PAIRS):
            a, b = gaussian_pair(key, full * _PAIRS + i)
            scratch[i] = scale * a
            scratch[_PAIRS + i] = scale * b
        for t in range(D - base):
            if accumulate:
                out[base + t] += scratch[t] * v
            else:
                out[base + t] = scratch[t]


@jit_vector
def fill_column(seed, kind, j, scale, out):
    """out[k] = scale * entry(seed, j, k) for k < len(out): column j of the directions
    (module docstring; GAUSSIAN: N(0, scale^2) entries, CAUCHY: Cauchy of scale ``scale``).
    The entries do not depend on len(out): a shorter column is a prefix of a longer one.
    Cost O(len(out)); allocates 32 doubles when 32 does not divide len(out) (Gaussian).
    ValueError for a negative seed or j, or an unknown kind."""
    _check(seed, kind)
    if j < 0:
        raise ValueError("fill_column: the input index j must be >= 0")
    key = column_key(seed, j)
    if kind == GAUSSIAN:
        gaussian_column(key, scale, 1.0, out, False, np.empty(_BLOCK if out.shape[0] % _BLOCK else 0))
    else:
        for k in range(out.shape[0]):
            out[k] = scale * cauchy_entry(key, k)


@jit_vector
def project_generated(seed, kind, scale, indices, values, p):
    """p[k] = sum over the non-zeros i (in the order given) of (scale * entry(seed, indices[i], k))
    * values[i], each sum from 0.0: p = U x for the sparse row x (x[indices[i]] = values[i]) and
    the directions U = generated_directions(seed, kind, scale, d, len(p)).T.

    Bit for bit ``rows_axpy(UT, x, p)`` (okl._compiled; FOGD's ``project_t``) on the dense row x
    and that UT: rows_axpy adds UT[c, k] x[c] for c = 0..d-1 in order, and the terms of the zero
    coordinates add +-0.0 to a sum that is never -0.0 (it starts at +0.0, and x + y is -0.0 only
    for x = y = -0.0), so they change nothing. Needs strictly ascending indices (a sparse row's
    order, the order of the dense sum) and finite values. Cost: nnz * len(p) entries generated,
    each column in a vectorised loop fused with its axpy; allocates 32 doubles (Gaussian, when 32
    does not divide len(p)).
    ValueError for unequal lengths, negative or unordered indices, a bad seed or kind."""
    _check(seed, kind)
    nnz = indices.shape[0]
    if values.shape[0] != nnz:
        raise ValueError("project_generated: indices and values must have the same length")
    D = p.shape[0]
    for k in range(D):
        p[k] = 0.0
    scratch = np.empty(_BLOCK if kind == GAUSSIAN and D % _BLOCK else 0)
    previous = -1
    for i in range(nnz):
        j = indices[i]
        if j <= previous:
            raise ValueError("project_generated: indices must be >= 0 and strictly ascending")
        previous = j
        key = column_key(seed, j)
        v = values[i]
        if kind == GAUSSIAN:
            gaussian_column(key, scale, v, p, True, scratch)
        else:
            for k in range(D):
                p[k] += (scale * cauchy_entry(key, k)) * v


#: columns a generated map keeps (:func:`project_generated_cached`; at most the input width)
CACHE_COLUMNS = 4096


@jit_vector
def project_generated_cached(seed, kind, scale, indices, values, p, cache, tags):
    """:func:`project_generated` with a direct-mapped cache of generated columns: column j is kept
    in slot j mod C (``cache``: C x len(p); ``tags[slot]``: j + 1 of the column it holds, 0 for none);
    a miss generates the column into its slot (:func:`fill_column`), a hit reads it. The numbers are
    project_generated's bit for bit (p[k] += (scale e_k) v either way). Why: a stream's columns
    recur (hashed text: a Zipf vocabulary), and reading a kept column costs a fraction of
    generating it (4-5 ns an entry, docs/results/generated-directions.md). Cost per non-zero: D
    reads on a hit, D entries generated on a miss; memory C D floats (at most the input width's
    columns: :data:`CACHE_COLUMNS`)."""
    _check(seed, kind)
    D = p.shape[0]
    C = cache.shape[0]
    for k in range(D):
        p[k] = 0.0
    previous = -1
    for i in range(indices.shape[0]):
        j = indices[i]
        if j <= previous:
            raise ValueError("project_generated_cached: indices must be >= 0 and strictly ascending")
        previous = j
        slot = j % C
        if tags[slot] != j + 1.0:
            fill_column(seed, kind, j, scale, cache[slot])
            tags[slot] = j + 1.0
        col = cache[slot]
        v = values[i]
        for k in range(D):
            p[k] += col[k] * v


@jit
def _fill_rows(seed, kind, scale, UT):
    for c in range(UT.shape[0]):
        fill_column(seed, kind, c, scale, UT[c])


def generated_directions(seed: int, kind: int, scale: float, d: int, D: int) -> np.ndarray:
    """UT (d x D, C-contiguous): row c is fill_column(seed, kind, c, scale), i.e. the transposed
    directions U^T that the stored-matrix path (``project_t`` / ``rows_axpy``) would use for the
    numbers :func:`project_generated` generates. O(d D) time and memory: for tests and small d.

    >>> UT = generated_directions(seed=7, kind=GAUSSIAN, scale=0.5, d=3, D=4)
    >>> UT.shape
    (3, 4)
    >>> col = np.empty(4); fill_column(7, GAUSSIAN, 2, 0.5, col); bool(np.array_equal(UT[2], col))
    True
    """
    for name, value, low in (("d", d, 0), ("D", D, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"generated_directions: {name} must be an integer >= {low}, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"generated_directions: seed must be an integer in [0, 2^63), got {seed!r}")
    if kind not in (GAUSSIAN, CAUCHY):
        raise ValueError(f"generated_directions: kind must be GAUSSIAN (0) or CAUCHY (1), got {kind!r}")
    if not (isinstance(scale, (int, float, np.integer, np.floating)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"generated_directions: scale must be a finite number > 0, got {scale!r}")
    UT = np.empty((int(d), int(D)))
    _fill_rows(int(seed), int(kind), float(scale), UT)
    return UT


__all__ = ["GAUSSIAN", "CAUCHY", "SEED_LIMIT", "mix64", "column_key", "column_word", "centred_uniform",
           "unit_uniform", "log_positive", "gaussian_pair", "gaussian_column", "cauchy_entry", "fill_column",
           "project_generated", "generated_directions"]

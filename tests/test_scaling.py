"""The per-feature input scale learned from the stream (okl.scaling): exactness, invariance, state."""

import numpy as np
import pytest

import okl
from okl.data.registry import load_dataset, permutation
from okl.runtime.base import ModelFileError, accepts
from okl.scaling import AFFINE_SLOPE, RULE_CODES, affine_from_symlog, check_scale, scale_rows, window_scale

SCALE_LEARNERS = ["nogd", "forks", "skegd", "fogd", "linear", "kogd", "rbp", "bogd", "auto"]


def german(n=300):
    X, y = load_dataset("german")
    p = permutation(len(y), 0)[:n]
    return np.ascontiguousarray(X[p]), y[p]


def with_late_features(X):
    """X plus a one-hot-like column absent from the width window that appears at row 80, and a
    column constant (7.0) in the window that later drops to 7 - 1e6 (a pending spread fixed by a
    negative deviation)."""
    n = X.shape[0]
    late = np.zeros(n)
    late[80::3] = 1.0
    drop = np.full(n, 7.0)
    drop[120::5] = 7.0 - 1e6
    return np.ascontiguousarray(np.column_stack([X, late, drop]))


def affine(X, seed=0):
    """x_j -> a_j x_j + b_j with a_j log-uniform in 1e-3 .. 1e4 and offsets up to 50 a_j."""
    rng = np.random.default_rng(seed)
    a = 10.0 ** rng.uniform(-3, 4, X.shape[1])
    b = a * rng.uniform(-50, 50, X.shape[1])
    return np.ascontiguousarray(X * a + b)


def test_window_scale_range_and_pending():
    X = np.array([[0.0, 5.0, 2.0], [4.0, 5.0, 2.0], [2.0, 5.0, 8.0]])
    c, s = window_scale(X, "range")
    np.testing.assert_array_equal(c, [0.0, 5.0, 2.0])
    np.testing.assert_array_equal(s, [4.0, 0.0, 6.0])
    # symlog: the same spreads, centred on the window's median (a constant column: its value)
    c, s = window_scale(X, "symlog")
    np.testing.assert_array_equal(c, [2.0, 5.0, 2.0])
    np.testing.assert_array_equal(s, [4.0, 0.0, 6.0])
    with pytest.raises(ValueError, match="unknown scale rule"):
        window_scale(X, "std")


def test_pending_spread_is_fixed_by_the_first_change_and_blocks_equal_rows():
    center, spread = np.array([0.0, 3.0]), np.array([2.0, 0.0])
    X = np.array([[1.0, 3.0], [2.0, 3.5], [4.0, 2.0], [0.0, 3.0]])
    out = np.empty_like(X)
    # without commit each row maps a change of a pending feature to +-1 and nothing is stored
    assert scale_rows(X, center, spread.copy(), False, 1e100, False, out) == 4
    np.testing.assert_array_equal(out[:, 1], [0.0, 1.0, -1.0, 0.0])
    # with commit the first change (3.5: 0.5 from the centre) fixes the spread for every later row
    s = spread.copy()
    scale_rows(X, center, s, True, 1e100, False, out)
    assert s[1] == 0.5
    np.testing.assert_array_equal(out[:, 0], [0.5, 1.0, 2.0, 0.0])
    assert out[0, 1] == 0.0 and out[1, 1] == 1.0 and out[3, 1] == 0.0
    # a value far outside the window's range is clipped one range beyond it
    far = np.empty((1, 2))
    scale_rows(np.array([[-50.0, 3.0 - 100.0]]), center, s.copy(), True, 1e100, False, far)
    np.testing.assert_array_equal(far, [[-1.0, -1.0]])
    scale_rows(np.array([[50.0, 3.0 + 100.0]]), center, s.copy(), True, 1e100, False, far)
    np.testing.assert_array_equal(far, [[2.0, 2.0]])
    # one row at a time gives the same values as the block
    s2, rows = spread.copy(), np.empty_like(X)
    for i in range(len(X)):
        scale_rows(X[i:i + 1], center, s2, True, 1e100, False, rows[i:i + 1])
    np.testing.assert_array_equal(rows, out)
    np.testing.assert_array_equal(s2, s)
    # a row that fails the value check stops the pass before anything of it is stored
    bad = np.array([[1.0, 9.0], [np.nan, 4.0]])
    s3 = spread.copy()
    assert scale_rows(bad[1:], center, s3, True, 1e100, False, np.empty((1, 2))) == 0
    assert s3[1] == 0.0


def test_symlog_is_linear_near_the_centre_logarithmic_beyond_and_odd():
    """phi(z) = sign(z) ln(1 + 2|z|) / ln 3 (knee half a window range from the median): +-1 at one
    window range, slope 2 / ln 3 at the centre, order kept far out (no clip), a pending spread
    fixed by the first change as with "range"."""
    center, spread = np.array([0.0, 3.0]), np.array([2.0, 0.0])
    X = np.array([[0.0, 3.0], [2.0, 3.5], [-2.0, 2.0], [1e-6, 3.0], [200.0, 3.0], [2e6, 3.0 + 5e5]])
    out, s = np.empty_like(X), spread.copy()
    assert scale_rows(X, center, s, True, 1e100, RULE_CODES["symlog"], out) == 6
    assert s[1] == 0.5
    np.testing.assert_allclose(out[:3], [[0.0, 0.0], [1.0, 1.0], [-1.0, -np.log(5.0) / np.log(3.0)]], rtol=0,
                               atol=1e-15)  # 2.0 is two fixed spreads (0.5) below the centre 3
    np.testing.assert_allclose(out[3, 0], 0.5e-6 * 2.0 / np.log(3.0), rtol=1e-6)
    np.testing.assert_allclose(out[4, 0], np.log(201.0) / np.log(3.0), rtol=1e-14)
    np.testing.assert_allclose(out[5], [np.log(2e6 + 1.0) / np.log(3.0), np.log(2e6 + 1.0) / np.log(3.0)], rtol=1e-14)


def test_affine_is_the_symlog_tangent_at_the_median_clipped_at_two_ranges():
    """phi(z) = T clip(z, -2, 2), T = 2 / ln 3 the symlog's slope at the centre; a pending spread
    fixed by the first change maps it to +-T; and auto's members recover it from the symlog value
    (affine_from_symlog) to a few ulp."""
    assert AFFINE_SLOPE == pytest.approx(2.0 / np.log(3.0), rel=1e-15)
    center, spread = np.array([0.0, 3.0]), np.array([2.0, 0.0])
    X = np.array([[0.0, 3.0], [1.0, 3.5], [-3.0, 2.0], [5.0, 3.0], [-1e6, 3.0]])
    out, s = np.empty_like(X), spread.copy()
    assert scale_rows(X, center, s, True, 1e100, RULE_CODES["affine"], out) == 5
    T = AFFINE_SLOPE
    np.testing.assert_allclose(out, [[0.0, 0.0], [0.5 * T, T], [-1.5 * T, -2.0 * T], [2.0 * T, 0.0], [-2.0 * T, 0.0]],
                               rtol=1e-15, atol=0)
    # without commit a pending spread's first change enters as phi(+-1) = +-T, nothing stored
    out1, s1 = np.empty((1, 2)), spread.copy()
    scale_rows(np.array([[0.0, 2.5]]), center, s1, False, 1e100, RULE_CODES["affine"], out1)
    assert out1[0, 1] == -T and s1[1] == 0.0
    # symlog, then undone: the affine value
    Z = np.linspace(-3.0, 3.0, 601)[:, None]
    sym, aff = np.empty_like(Z), np.empty_like(Z)
    scale_rows(Z, np.zeros(1), np.ones(1), False, 1e100, RULE_CODES["symlog"], sym)
    scale_rows(Z, np.zeros(1), np.ones(1), False, 1e100, RULE_CODES["affine"], aff)
    back = np.array([affine_from_symlog(v) for v in sym[:, 0]])
    np.testing.assert_allclose(back, aff[:, 0], rtol=1e-13, atol=1e-15)
    assert window_scale(np.array([[0.0], [1.0], [5.0]]), "affine")[0][0] == 1.0  # the median, as symlog


def test_affine_keeps_a_linear_concept_linear():
    """A linear learner on "affine" inputs equals one on the features as given, standardised by
    the same window statistics: the map is affine on the window's range (no curvature)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.0, (600, 4))
    y = np.where(X @ np.array([1.0, -2.0, 0.5, 1.5]) > 0.5, 1.0, -1.0)
    m = okl.make("linear", scale="affine", loss="logistic", eta=0.05)
    got = m.run(X, y).decisions
    c, s = m.scale_center_, m.scale_spread_
    ref = okl.make("linear", scale=None, loss="logistic", eta=0.05)  # the window predicts the label mean
    ref.inputs.ensure_started(ref, 4)
    mapped = AFFINE_SLOPE * np.clip((X - c) / s, -2.0, 2.0)
    ref.run(mapped[:50], y[:50])  # the window's rows replayed, mapped
    np.testing.assert_allclose(got[50:], ref.run(mapped[50:], y[50:]).decisions, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", SCALE_LEARNERS)
def test_late_features_run_equals_event_loop_blocks_and_resume(name, tmp_path):
    X, y = german()
    X = with_late_features(X)
    params = {"random_state": 0, **({"budget": 20} if accepts(name, "budget") else {})}
    trace = okl.make(name, **params).run(X, y)
    loop = okl.make(name, **params)
    dec = []
    for x, t in zip(X, y):
        dec.append(loop.predict_one(x))
        loop.learn_one(x, t)
    np.testing.assert_allclose(dec, trace.decisions, rtol=0, atol=1e-9)
    # okl stream's blocks (a block cut inside the rows that fix the pending spreads)
    blocks = okl.make(name, **params)
    got = np.concatenate([blocks.events.learn_events(blocks, X[a:b], y[a:b]) for a, b in ((0, 70), (70, 125), (125, len(y)))])
    np.testing.assert_allclose(got, trace.decisions, rtol=0, atol=1e-9)
    # the late column entered as 1 (its first change), the dropped one as -1, both fixed once
    m = okl.make(name, **params)
    m.run(X[:100], y[:100])
    assert m.scale_spread_[-2] == 1.0 and m.scale_spread_[-1] == 0.0
    assert m.chosen_scale() == {"input_scale": "symlog (first 50 rows)", "scale_pending": 1 + int(
        np.count_nonzero(np.ptp(X[:50, :-2], axis=0) == 0))}
    m.save(tmp_path / "m.npz")
    back = okl.Learner.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.scale_spread_, m.scale_spread_)
    np.testing.assert_allclose(back.run(X[100:], y[100:]).decisions, trace.decisions[100:], rtol=0, atol=1e-9)
    assert back.scale_spread_[-1] == 1e6


@pytest.mark.parametrize("name", SCALE_LEARNERS)
def test_a_late_feature_is_neither_ignored_nor_blown_up(name):
    """Rows that differ only in a column absent from the window: the model tells them apart
    after learning, and a 1e6 there enters as ln(2e6 + 1) / ln 3 = 13.2, not 1e6 (the decision
    stays bounded)."""
    X, y = german()
    X = with_late_features(X)
    m = okl.make(name, random_state=0, **({"budget": 20} if accepts(name, "budget") else {}))
    m.run(X, y)
    x = X[-1].copy()
    x[-2] = 0.0
    f0 = m.predict_one(x)
    x[-2] = 1.0
    f1 = m.predict_one(x)
    assert f0 != f1
    x[-2] = 1e6
    assert abs(m.predict_one(x)) < 50.0


def test_raw_and_rescaled_copies_give_the_same_decisions():
    X, y = german()
    Xa = affine(X, 1)
    for name in ("nogd", "linear", "auto"):
        a = okl.make(name, random_state=0).run(X, y).decisions
        b = okl.make(name, random_state=0).run(Xa, y).decisions
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-7)


def test_scale_none_and_a_given_kernel_use_features_as_given():
    X, y = german()
    Xa = affine(X, 2)
    # scale=None: the input is not transformed (a common factor still changes nothing, but not this)
    a = okl.make("nogd", random_state=0, scale=None).run(X, y).mistake_rate
    b = okl.make("nogd", random_state=0, scale=None).run(Xa, y).mistake_rate
    assert a != b
    m = okl.make("nogd", random_state=0, kernel=okl.RBF(sigma=1.0))
    m.run(X[:60], y[:60])
    assert m.scale_spread_ is None and m.chosen_scale() == {"input_scale": "off"}
    # scale="range" with a given kernel: the width is read in scaled units
    m = okl.make("nogd", random_state=0, kernel=okl.RBF(sigma=1.0), scale="range")
    m.run(X[:60], y[:60])
    assert m.scale_spread_ is not None
    # the paper tables pass scale=None
    assert okl.learner_class("nogd").paper_params(100)["scale"] is None


def test_diagnostics_show_the_scale():
    X, y = german()
    tr = okl.make("fogd", random_state=0).run(X, y)
    assert tr.diagnostics["input_scale"] == "symlog (first 50 rows)"
    # german's column constant in the first 50 rows changes later: nothing is pending at the end
    assert np.count_nonzero(np.ptp(X[:50], axis=0) == 0) == 1
    assert tr.diagnostics["scale_pending"] == int(np.count_nonzero(np.ptp(X, axis=0) == 0)) == 0
    assert okl.make("fogd").all_diagnostics()["input_scale"] == "pending"


def test_check_scale_names_the_allowed_values():
    assert check_scale("auto") == "auto" and check_scale(None) is None
    with pytest.raises(ValueError, match="scale must be one of 'auto', 'symlog', 'range', 'affine' or None"):
        okl.make("nogd", scale="minmax")


def test_forged_negative_spread_is_refused(tmp_path):
    X, y = german()
    m = okl.make("linear", random_state=0)
    m.run(X[:80], y[:80])
    m.scale_spread_[0] = -1.0
    with pytest.raises(Exception, match="scale_spread_"):
        m.check_state()
    m.scale_spread_[0] = 1.0
    m.scale_center_ = None
    with pytest.raises(Exception, match="scale_"):
        m.check_state()
    assert ModelFileError

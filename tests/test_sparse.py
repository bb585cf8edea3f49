"""Sparse rows end to end (okl._sparse): the CSR block type, its checks, the O(nnz) compiled
pieces against their dense counterparts, the input map that keeps zeros zero, and ``run()`` on a
CSR matrix against the same rows dense."""

import numpy as np
import pytest
import scipy.sparse as sp

import okl
from okl import _sparse
from okl._compiled import (column_norms_t, distances_t, distances_t_sparse, kernel_row_t, kernel_row_t_sparse,
                           kernel_value, kernel_value_sparse, row_norm, rows_axpy, sparse_axpy)
from okl._sparse import SparseRows
from okl._validation import check_matrix
from okl.kernels import RBF, Laplacian, Polynomial
from okl.scaling import RULE_CODES, scale_rows, scale_sparse_rows, window_scale


def _sparse_matrix(n, d, density, seed, binary=False):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr")
    if binary:
        X.data[:] = 1.0
    else:
        X.data = rng.standard_normal(X.nnz)
    return X


def test_sparse_rows_slices_and_rows_match_the_dense_matrix():
    X = _sparse_matrix(40, 30, 0.2, 0)
    X.data[3] = 0.0  # an explicit zero is dropped
    rows = check_matrix(X, None, sparse=True)
    assert isinstance(rows, SparseRows)
    dense = X.toarray()
    np.testing.assert_array_equal(rows.toarray(), dense)
    np.testing.assert_array_equal(rows[7:19].toarray(), dense[7:19])
    np.testing.assert_array_equal(rows[12], dense[12])
    np.testing.assert_array_equal(rows[-1], dense[-1])
    idx, val = rows.row(12)
    assert np.all(np.diff(idx) > 0) and np.all(val != 0.0)
    assert rows.nnz == np.count_nonzero(dense)
    assert isinstance(check_matrix(X, None), np.ndarray)  # the dense paths keep making it dense


def test_sparse_check_names_the_bad_value_by_row_and_column():
    X = _sparse_matrix(20, 10, 0.3, 1).tolil()
    X[13, 7] = np.nan
    with pytest.raises(ValueError, match="non-finite value nan at row 13, column 7"):
        check_matrix(X.tocsr(), None, sparse=True)
    X[13, 7] = 1e300
    with pytest.raises(ValueError, match="at row 13, column 7"):
        check_matrix(X.tocsr(), None, sparse=True)
    with pytest.raises(ValueError, match="has 10 features but the learner was started with 9"):
        check_matrix(_sparse_matrix(2, 10, 0.5, 2), 9, sparse=True)


@pytest.mark.parametrize("kernel", [RBF(sigma=1.3), Laplacian(sigma=2.0), Polynomial(degree=2)])
def test_sparse_kernel_values_equal_the_dense_ones(kernel):
    """The norm identities of kernel_value_sparse / distances_t_sparse against the direct sums,
    to 1e-12 relative (rounding of ||z||^2 + ||x||^2 - 2 <z, x>)."""
    kind, a, b, c = kernel.spec()
    S = _sparse_matrix(12, 25, 0.3, 3).toarray()
    X = _sparse_matrix(6, 25, 0.3, 4)
    LT = np.ascontiguousarray(S.T)
    norms = np.array([row_norm(kind, s) for s in S])
    col = np.empty(12)
    column_norms_t(kind, LT, 12, col)
    np.testing.assert_array_equal(col, norms)  # the same sums, in the same order
    for r in range(6):
        x = X[r].toarray()[0]
        xi, xv = X[r].indices.astype(np.int64), X[r].data
        xn = row_norm(kind, xv)
        assert xn == row_norm(kind, x)  # a sparse row's norm is its dense row's, bit for bit
        for i in range(12):
            assert kernel_value_sparse(kind, a, b, c, S[i], norms[i], xi, xv, xn) == pytest.approx(
                kernel_value(kind, a, b, c, S[i], x), rel=1e-12, abs=1e-14)
        dense, sparse = np.empty(12), np.empty(12)
        kernel_row_t(kind, a, b, c, LT, 12, x, dense)
        kernel_row_t_sparse(kind, a, b, c, LT, 12, norms, xi, xv, xn, sparse)
        np.testing.assert_allclose(sparse, dense, rtol=1e-12, atol=1e-14)
        if kind in (RBF(sigma=1).spec()[0], Laplacian(sigma=1).spec()[0]):
            distances_t(kind, LT, 12, x, dense)
            distances_t_sparse(kind, LT, 12, norms, xi, xv, xn, sparse)
            np.testing.assert_allclose(sparse, dense, rtol=1e-12, atol=1e-12)


def test_sparse_projection_is_bit_for_bit_the_dense_one():
    rng = np.random.default_rng(5)
    UT = rng.standard_normal((40, 17))
    X = _sparse_matrix(8, 40, 0.2, 6)
    for r in range(8):
        dense, sparse = np.empty(17), np.empty(17)
        rows_axpy(UT, X[r].toarray()[0], dense)
        sparse_axpy(UT, X[r].indices.astype(np.int64), X[r].data, sparse)
        np.testing.assert_array_equal(sparse, dense)


@pytest.mark.parametrize("rule", ["symlog", "range", "affine"])
def test_sparse_map_keeps_zeros_zero_and_equals_the_dense_map_with_centre_zero(rule):
    X = _sparse_matrix(60, 12, 0.25, 7)
    X = sp.csr_matrix(np.where(np.arange(12) == 11, 0.0, X.toarray()))  # column 11: zero in the window
    dense = X.toarray()
    center, spread = window_scale(dense[:50], rule, sparse=True)
    np.testing.assert_array_equal(center, 0.0)
    np.testing.assert_array_equal(spread, np.abs(dense[:50]).max(axis=0))
    assert spread[11] == 0.0  # pending
    later = dense[50:].copy()
    later[3, 11] = -4.0  # fixes the pending spread at 4: maps to -1 (affine: its slope)
    rows = check_matrix(sp.csr_matrix(later), None, sparse=True)
    s1, s2 = spread.copy(), spread.copy()
    out = np.empty_like(rows.data)
    assert scale_sparse_rows(rows.indptr, rows.indices, rows.data, s1, True, 1e12, RULE_CODES[rule], out) == 10
    ref = np.empty_like(later)
    assert scale_rows(later, center, s2, True, 1e12, RULE_CODES[rule], ref) == 10
    np.testing.assert_array_equal(rows.with_data(out).toarray(), ref)
    np.testing.assert_array_equal(s1, s2)
    assert s1[11] == 4.0


def test_auto_on_csr_rows_matches_the_dense_rows_without_an_input_map():
    """With a kernel given (no input map), auto's engine on CSR rows (O(nnz) input side) gives the
    dense path's decisions up to the rounding of the norm identities, and the same signs."""
    X = _sparse_matrix(400, 60, 0.15, 8, binary=True)
    w = np.random.default_rng(9).standard_normal(60)
    y = np.where(X @ w > 0.0, 1.0, -1.0)
    dense = okl.make("auto", kernel=RBF(sigma=2.0), budget=20, random_state=0).run(X.toarray(), y).decisions
    sparse = okl.make("auto", kernel=RBF(sigma=2.0), budget=20, random_state=0).run(X, y).decisions
    np.testing.assert_allclose(sparse, dense, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(np.sign(sparse), np.sign(dense))


def test_auto_on_csr_rows_is_the_same_in_blocks_and_keeps_zeros_zero():
    X = _sparse_matrix(500, 80, 0.1, 10, binary=True)
    y = np.where(np.asarray(X[:, :5].sum(axis=1)).ravel() > 0, 1.0, -1.0)
    whole = okl.make("auto", budget=20, random_state=0)
    f = whole.run(X, y).decisions
    parts = okl.make("auto", budget=20, random_state=0)
    g = np.concatenate([parts.run(X[:37], y[:37]).decisions, parts.run(X[37:260], y[37:260]).decisions,
                        parts.run(X[260:], y[260:]).decisions])
    np.testing.assert_array_equal(f, g)
    np.testing.assert_array_equal(whole.scale_center_, 0.0)  # the window came sparse: centre 0
    assert np.mean(np.where(f >= 0, 1.0, -1.0) != y) < np.mean(y != np.sign(y.mean()))  # beats the majority


def test_learners_without_a_sparse_path_take_csr_as_dense_chunks(monkeypatch):
    """A learner without a sparse path learns a CSR matrix as the dense blocks of at most
    DENSE_CHUNK_FLOATS floats one after the other: exactly run() on those dense blocks in turn."""
    X = _sparse_matrix(300, 40, 0.2, 11)
    y = np.where(np.asarray(X.sum(axis=1)).ravel() > 0, 1.0, -1.0)
    dense = X.toarray()
    ref = okl.make("nogd", kernel=RBF(sigma=1.0), budget=15, random_state=0)
    expected = np.concatenate([ref.run(dense[s:s + 7], y[s:s + 7]).decisions for s in range(0, 300, 7)])
    monkeypatch.setattr(_sparse, "DENSE_CHUNK_FLOATS", 40 * 7)  # chunks of 7 rows
    got = okl.make("nogd", kernel=RBF(sigma=1.0), budget=15, random_state=0).run(X, y).decisions
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", ["auto", "fogd", "linear"])
def test_per_event_sparse_rows_give_the_decisions_of_run_on_the_csr_matrix(name):
    """predict_one / learn_one on 1-row CSR matrices: the window maps them as run() maps a CSR block
    (centre 0) and auto's members take their non-zeros: the decisions equal run()'s bit for bit."""
    X = _sparse_matrix(300, 60, 0.1, 12, binary=True)
    y = np.where(np.asarray(X[:, :4].sum(axis=1)).ravel() > 0, 1.0, -1.0)
    kw = {} if name == "linear" else {"budget": 20}
    expected = okl.make(name, random_state=0, **kw).run(X, y).decisions
    m = okl.make(name, random_state=0, **kw)
    got = []
    for i in range(300):
        got.append(m.predict_one(X[i]))
        m.learn_one(X[i], y[i])
    np.testing.assert_array_equal(np.array(got), expected)
    assert not m.scale_center_.any()
    with pytest.raises(ValueError, match="one example"):
        m.predict_one(X[:2])


def _generated_case():
    X = _sparse_matrix(400, 50, 0.1, 13)
    y = np.where(np.asarray(X[:, :5].sum(axis=1)).ravel() > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("kernel", [RBF(sigma=1.5), Laplacian(sigma=3.0)])
def test_generated_directions_give_the_stored_matrix_decisions(kernel):
    """FOGD with generated directions (no U kept) and FOGD with U stored as the generator's own
    matrix (okl.features.generated.generated_directions) decide the same, bit for bit, on CSR rows
    and on dense rows; per event as run()."""
    from okl.features.generated import generated_directions

    X, y = _generated_case()
    gen = okl.make("fogd", budget=20, directions="generated", kernel=kernel, random_state=0)
    f = gen.run(X, y).decisions
    assert gen.U_ is None and gen.direction_seed_ is not None
    seed, kind, scale = gen.generator_
    for rows in (X, X.toarray()):
        stored = okl.make("fogd", budget=20, directions="stored", kernel=kernel, random_state=0)
        stored.inputs.ensure_started(stored, 50)
        stored.U_ = np.ascontiguousarray(generated_directions(seed, kind, scale, 50, 80).T)
        np.testing.assert_array_equal(stored.run(rows, y).decisions, f)
    m = okl.make("fogd", budget=20, directions="generated", kernel=kernel, random_state=0)
    events = []
    for i in range(400):
        events.append(m.predict_one(X[i]))
        m.learn_one(X[i], y[i])
    np.testing.assert_array_equal(np.array(events), f)
    drawn = okl.make("fogd", budget=20, directions="stored", kernel=kernel, random_state=0).run(X, y)
    assert abs(drawn.mistake_rate - 100.0 * np.mean(np.where(f >= 0, 1.0, -1.0) != y)) < 5.0  # another U, the same learner


def test_generated_directions_by_size_model_files_and_auto(tmp_path):
    from okl.components.columns import MAP, SRC
    from okl.learners.fogd import STORED_DIRECTIONS_MAX
    from okl.components import GENERATED_FOURIER

    wide = okl.make("fogd", budget=100, random_state=0, kernel=RBF(sigma=1.0))
    wide.inputs.ensure_started(wide, STORED_DIRECTIONS_MAX // 400 + 1)  # D x d just beyond the stored limit
    assert wide.U_ is None
    narrow = okl.make("fogd", budget=100, random_state=0, kernel=RBF(sigma=1.0))
    narrow.inputs.ensure_started(narrow, STORED_DIRECTIONS_MAX // 400)
    assert narrow.U_ is not None and narrow.direction_seed_ is None
    X, y = _generated_case()
    m = okl.make("fogd", budget=20, directions="generated", kernel=RBF(sigma=1.5), random_state=0)
    m.run(X[:200], y[:200])
    m.save(tmp_path / "g.okl")
    back = okl.Learner.load(tmp_path / "g.okl")
    assert back.U_ is None and back.direction_seed_ == m.direction_seed_
    np.testing.assert_array_equal(back.run(X[200:], y[200:]).decisions, m.run(X[200:], y[200:]).decisions)
    with pytest.raises(ValueError, match="not shift-invariant"):
        okl.make("fogd", directions="generated", kernel=Polynomial(degree=2))
    # auto's generated FOGD members share one seed: the narrower ones take the double angle
    members = [("fogd", w, {"directions": "generated"}) for w in (0.5, 1.0, 2.0)]
    a = okl.make("auto", budget=20, random_state=0, members=members)
    f = a.run(X, y).decisions
    eng = a._engine()
    assert list(eng.I[:, MAP]) == [GENERATED_FOURIER] * 3 and list(eng.I[:, SRC]) == [1, 2, 2]
    b = okl.make("auto", budget=20, random_state=0, members=members)
    events = []
    for i in range(400):
        events.append(b.predict_one(X[i]))
        b.learn_one(X[i], y[i])
    np.testing.assert_array_equal(np.array(events), f)


@pytest.mark.parametrize("loss", ["hinge", "squared"])
def test_linear_members_on_sparse_rows_are_the_dense_arithmetic_bit_for_bit(loss):
    """auto's linear members on CSR rows never write their O(d) features: their decision and step
    over the non-zeros and the bias sum in okl._compiled.dot's order, so they equal the dense path
    bit for bit (binary rows and steps of 0.2 put decisions exactly on the margin, where any other
    order of the sum would change the hinge's step)."""
    X = _sparse_matrix(400, 60, 0.15, 8, binary=True)
    y = np.where(X @ np.random.default_rng(9).standard_normal(60) > 0.0, 1.0, -1.0)
    members = [("linear", None, {"eta": 0.2}), ("linear", None, {"eta": 1.0})]
    kw = dict(kernel=RBF(sigma=2.0), budget=20, random_state=0, members=members, loss=loss)
    dense = okl.make("auto", **kw).run(X.toarray(), y).decisions
    np.testing.assert_array_equal(okl.make("auto", **kw).run(X, y).decisions, dense)


def test_auto_learns_a_hashed_stream_of_2_to_the_20_columns():
    """A hashed text stream (2^20 columns, 12 non-zeros a row from a vocabulary of 300 hashed ids):
    auto keeps no dense row of it (the members that store rows are left out, the linear ones step
    over the non-zeros) and learns the linear rule that labels it, per event as in run()."""
    rng = np.random.default_rng(14)
    vocabulary = rng.choice(2 ** 20, size=300, replace=False)
    weights = rng.standard_normal(300)
    n, nnz = 600, 12
    idx = np.array([np.sort(rng.choice(300, size=nnz, replace=False)) for _ in range(n)])
    cols = np.sort(vocabulary[idx], axis=1)
    X = sp.csr_matrix((np.ones(n * nnz), cols.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, 2 ** 20))
    y = np.where(weights[idx].sum(axis=1) > 0.0, 1.0, -1.0)
    m = okl.make("auto", random_state=0)
    f = m.run(X, y).decisions
    d = m.diagnostics()
    # (the pool for sparse rows; its NOGD and window members store rows: left out at 2^20 columns)
    assert m.sparse_pool_ and d["members"] == 3 and all(member.name == "linear" for member in m.pool_)
    assert sorted({label.split("(")[0] for label in d["left_out"]}) == ["nogd", "window"]
    assert not m.scale_center_.any()
    second_half = np.mean(np.where(f[300:] >= 0, 1.0, -1.0) != y[300:])
    assert second_half < 0.3 < np.mean(y != np.sign(y.mean()) if y.mean() else 0.5)
    events = okl.make("auto", random_state=0)
    got = []
    for i in range(100):
        got.append(events.predict_one(X[i]))
        events.learn_one(X[i], y[i])
    # (bit for bit but where a row fixes a pending spread: predict_one maps its value to exactly +-1,
    # run() to symlog(+-1) = +-(1 - 2^-52), as on dense rows; docs/sparse-inputs.md)
    np.testing.assert_allclose(np.array(got), f[:100], rtol=0, atol=1e-14)


def _one_hot_stream(n, fields, levels, seed, noise=0.1):
    """n rows of ``fields`` categorical fields with ``levels`` levels each, one-hot (CSR, one non-zero
    a field), labelled by a linear rule over the levels' weights (rare levels weigh as much), a
    share ``noise`` of the labels flipped."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, levels + 1)
    codes = np.stack([rng.choice(levels, size=n, p=p / p.sum()) for _ in range(fields)], axis=1)
    cols = codes + levels * np.arange(fields)
    X = sp.csr_matrix((np.ones(n * fields), cols.ravel(), np.arange(0, n * fields + 1, fields)),
                      shape=(n, fields * levels))
    weights = rng.standard_normal(fields * levels)
    y = np.where(weights[cols].sum(axis=1) > 0.0, 1.0, -1.0)
    flip = rng.random(n) < noise
    y[flip] = -y[flip]
    return X, y


def test_auto_takes_the_pool_for_sparse_rows_by_their_container_and_density(tmp_path):
    """The width window's rows as a sparse matrix with fewer than half their columns non-zero give
    the pool for sparse rows (okl.ensemble.pool.sparse_pool: NAG's linear member carries a
    one-hot linear concept, and it beats every OGD member); the same rows dense, or CSR rows of
    dense data, the default pool. The choice is kept in model files."""
    X, y = _one_hot_stream(3000, 8, 10, 15)
    m = okl.make("auto", random_state=0)
    f = m.run(X, y).decisions
    d = m.diagnostics()
    assert m.sparse_pool_ and d["members"] == 10 and "step=nag" in d["carried_by"]
    err = np.mean(np.where(f >= 0, 1.0, -1.0) != y)
    ogd = okl.make("linear").run(X, y).decisions
    assert err < 0.2 and np.mean(np.where(ogd >= 0, 1.0, -1.0) != y) > 0.22  # (10 % of the labels flipped)
    dense = okl.make("auto", random_state=0)
    dense.run(X[:300].toarray(), y[:300])
    assert not dense.sparse_pool_ and dense.diagnostics()["members"] == 19
    full = sp.csr_matrix(np.abs(np.random.default_rng(16).standard_normal((300, 6))) + 0.1)
    wide = okl.make("auto", random_state=0)
    wide.run(full, np.where(full[:, 0].toarray().ravel() > 0.9, 1.0, -1.0))
    assert not wide.sparse_pool_
    part = okl.make("auto", random_state=0)
    part.run(X[:1200], y[:1200])
    part.save(tmp_path / "a.okl")
    back = okl.Learner.load(tmp_path / "a.okl")
    assert back.sparse_pool_ and back.member_labels() == m.member_labels()
    np.testing.assert_array_equal(back.run(X[1200:], y[1200:]).decisions, f[1200:])


def test_the_sparse_plan_takes_csr_events_as_run_does_and_refuses_bad_rows():
    """auto's per-event calls on 1-row CSR matrices go through the sparse plan (one compiled call
    each on the row's non-zeros) once the pool runs: regression with real values (pending spreads,
    target centring, the stacking layer) gives run()'s decisions; a row with unsorted indices takes
    the generic path and the same numbers; a bad value or width is refused by name, nothing learned."""
    X = _sparse_matrix(400, 50, 0.1, 17)
    y = np.asarray(X[:, :5].sum(axis=1)).ravel() + 0.1 * np.random.default_rng(18).standard_normal(400)
    expected = okl.make("auto", loss="squared", budget=20, random_state=0).run(X, y).decisions
    m = okl.make("auto", loss="squared", budget=20, random_state=0)
    got = []
    for i in range(400):
        row = X[i]
        if i == 200:  # the same row with its indices reversed (a valid CSR matrix, not canonical)
            row = sp.csr_matrix((row.data[::-1], row.indices[::-1], row.indptr), shape=row.shape)
            assert not row.has_sorted_indices
        got.append(m.predict_one(row))
        m.learn_one(row, float(y[i]))
    assert m._event.plan.sparse
    # (bit for bit but where a row fixes a pending spread: predict_one maps it to exactly +-1, as on dense rows)
    np.testing.assert_allclose(np.array(got), expected, rtol=0, atol=1e-13)
    assert np.mean(np.array(got) == expected) > 0.9
    state = m.L_.copy()
    bad = X[0].copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="row 0, column"):
        m.learn_one(bad, 1.0)
    with pytest.raises(ValueError, match="50"):
        m.predict_one(sp.csr_matrix((1, 51)))
    np.testing.assert_array_equal(m.L_, state)
    assert m.n_seen_ == 400

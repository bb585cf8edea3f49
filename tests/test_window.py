"""The kernel smoother on a sliding window (okl.learners.window), alone and as auto's member."""

import numpy as np
import pytest

import okl
from okl.runtime.multiclass import MultiClass
from okl.learners.window import KernelWindow


def _nw(stored_X, stored_y, x, sigma):
    """Nadaraya-Watson by NumPy: the kernel-weighted mean of the stored labels."""
    k = np.exp(-((stored_X - x) ** 2).sum(axis=1) / (2 * sigma ** 2))
    return float(k @ stored_y / k.sum())


def test_the_decision_is_the_kernel_weighted_mean_of_the_last_budget_rows():
    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    y = np.where(X[:, 0] + 0.2 * rng.standard_normal(300) > 0.5, 1.0, -1.0)
    sigma = 0.3
    m = okl.make("window", budget=40, kernel=okl.RBF(sigma=sigma), scale=None)
    trace = m.run(X, y)
    # round t predicts from rows max(0, t - 40) .. t - 1 (the oldest forgotten), relative error 1e-12
    for t in (1, 2, 39, 40, 41, 150, 299):
        lo = max(0, t - 40)
        assert trace.decisions[t] == pytest.approx(_nw(X[lo:t], y[lo:t], X[t], sigma), rel=1e-12, abs=1e-15)
    assert trace.decisions[0] == 0.0 and m.m_ == 40 and m.pos_ == 300 % 40
    assert np.abs(trace.decisions).max() <= 1.0


def test_a_row_far_from_every_stored_one_takes_its_nearest_rows_label():
    # exp(-d^2 / 2 sigma^2) underflows to 0 for every stored row; the ratio to the nearest does not
    m = okl.make("window", budget=10, kernel=okl.RBF(sigma=0.01), scale=None)
    m.run(np.array([[0.0], [1.0], [5.0]]), np.array([1.0, -1.0, 1.0]))
    assert m.predict_one(np.array([40.0])) == 1.0 and m.predict_one(np.array([-40.0])) == 1.0
    assert m.predict_one(np.array([1.2])) == -1.0


def test_regression_smooths_the_targets_and_laplacian_is_a_distance_kernel():
    rng = np.random.default_rng(1)
    X = rng.random((200, 2))
    y = np.sin(6 * X[:, 0])
    m = okl.make("window", loss="squared", kernel=okl.Laplacian(sigma=0.05), center_targets=False, scale=None)
    f = m.run(X, y).decisions
    assert np.mean((f[100:] - y[100:]) ** 2) < 0.1 * np.var(y)
    with pytest.raises(ValueError, match="distance kernel"):
        okl.make("window", kernel=okl.Polynomial(degree=2))


def test_alone_and_as_autos_one_member_the_same_numbers():
    X, y = okl.load_dataset("german")
    alone = okl.make("window", random_state=0)
    a = alone.run(X, y).decisions
    core = okl.make("auto", members=[["window", 0.25, {}]], random_state=0)
    b = core.run(X, y).decisions
    np.testing.assert_array_equal(a[50:], b[50:])  # (the window rows: the running mean either way)
    assert alone.kernel_.sigma == core.pool_[0].kernel_.sigma == pytest.approx(core.kernel_.sigma / 4)
    events = okl.make("auto", members=[["window", 0.25, {}]], random_state=0)
    e = np.array([(events.predict_one(x), events.learn_one(x, t))[0] for x, t in zip(X[:300], y[:300])])
    np.testing.assert_array_equal(e, b[:300])


def test_k_classes_continue_a_binary_window_exactly():
    rng = np.random.default_rng(2)
    X = rng.random((400, 2))
    labels = np.where(X[:, 0] > 0.5, "b", "a")
    labels[300:][X[300:, 1] > 0.7] = "c"
    binary = okl.make("window", random_state=0)
    binary.run(X[:300], np.where(labels[:300] == "b", 1.0, -1.0))
    f = np.array([binary.predict_one(x) for x in X[300:310]])
    multi = MultiClass.from_binary(binary, "a", "b", random_state=0)
    assert multi.native and isinstance(multi.core_.pool_[0], KernelWindow)
    margins = np.array([multi.decision_one(x) for x in X[300:310]])
    np.testing.assert_allclose(margins[:, 1], f, rtol=0, atol=1e-15)  # output "b": the binary vote
    np.testing.assert_allclose(margins[:, 0], -f, rtol=0, atol=1e-15)  # output "a": its mirror
    multi.learn_many(X[300:], labels[300:])
    assert list(multi.classes_) == ["a", "b", "c"]
    # the new class's output: its stored rows' vote, highest where its rows are
    margins = multi.decision_many(X[300:])
    c = labels[300:] == "c"
    assert margins[c, 2].mean() > margins[~c, 2].mean() + 0.4
    assert np.mean(np.asarray(multi.predict_many(X[300:]))[~c] == labels[300:][~c]) > 0.9


def test_an_auto_model_file_from_before_the_window_member_loads_and_predicts_as_saved():
    """tests/data/auto-17-members-c6e7e54.npz: okl.make("auto", budget=4, random_state=0) after 120
    rows of german, saved by commit c6e7e54 (17 members, before the window). The window joined the
    end of the default pool, so the file's member indices still name its 17 members."""
    from pathlib import Path

    m = okl.learner_class("auto").load(Path(__file__).with_name("data") / "auto-17-members-c6e7e54.npz")
    X, y = okl.load_dataset("german")
    assert len(m.pool_) == 17 and "window" not in {mem.name for mem in m.pool_}
    saved = [-0.7611811528180582, -0.7390754358273997, -0.9757354517094852, -0.4027189723939728,
             -0.7728718481117791]
    # (auto's decisions move by at most 1e-9 between BLAS kernels: README, "Same numbers")
    np.testing.assert_allclose([m.predict_one(x) for x in X[120:125]], saved, rtol=0, atol=1e-8)
    m.run(X[120:200], y[120:200])
    assert m.n_seen_ == 200


def test_the_window_leaves_autos_pool_at_the_third_class_and_comes_back_if_it_is_refused():
    X, y = okl.load_dataset("german")
    binary = okl.make("auto", budget=10, random_state=0)
    binary.run(X[:120], y[:120])
    multi = MultiClass.from_binary(binary, -1.0, 1.0, random_state=0)
    core = multi.core_
    j = next(i for i, m in enumerate(core.pool_) if m.name == "window")
    assert core.alive_[j] == 1.0  # two mirrored outputs: the binary loss, the window stays
    core.heads.grow_outputs(core, 3)
    assert core.alive_[j] == 0.0
    core.heads.drop_last_output(core)  # a refused first event of the new class: as it was
    assert core.alive_[j] == 1.0 and core.n_outputs_ == 2
    multi.learn_many(X[120:130], [-1.0, 1.0, 2.0, -1.0, 1.0, 2.0, 1.0, 1.0, -1.0, 2.0])
    assert core.n_outputs_ == 3 and core.alive_[j] == 0.0

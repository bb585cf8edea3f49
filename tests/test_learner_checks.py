"""The generic check suite, run over every registered learner (River's style).

For each learner, on real data (german for classification, cpusmall for regression, a short
permuted prefix with a small budget so every stage and update round is exercised):

* ``run`` gives the same decisions as the per-instance ``predict_one``/``learn_one`` loop (1e-9);
* a model saved at round t, loaded and continued, equals an uninterrupted run (at two cut points,
  in the first stage and after it);
* the same ``random_state`` gives identical decisions; ``predict_one`` changes nothing;
* invalid hyperparameters raise ValueError naming the parameter;
* bad input (NaN, wrong width, labels outside {-1, +1}) raises ValueError and leaves the learner
  exactly as it was.
"""

from __future__ import annotations

import numpy as np
import pytest

import okl
from okl.data import permutation
from okl.learners.base import accepts, learner_class

N_CLASSIFICATION = 400
N_REGRESSION = 300
BUDGET = 20


def check_params(name: str, n: int, loss: str | None = None, width: str = "given") -> dict:
    """``width="chosen"`` passes no kernel: the learner fixes its width from its first rows
    (okl.kernels.WIDTH_WINDOW), so the checks also cross that boundary (save/load inside it)."""
    params = {"random_state": 0}
    if accepts(name, "budget"):
        params["budget"] = BUDGET
    if accepts(name, "horizon"):
        params["horizon"] = n
    if accepts(name, "kernel") and width == "given":
        params["kernel"] = okl.RBF(sigma=1.0)
    if loss is not None:
        params["loss"] = loss
    return params


@pytest.fixture(scope="module")
def german_prefix(data_dir):
    X, y = okl.load_dataset("german", data_dir)
    p = permutation(len(y), 0)[:N_CLASSIFICATION]
    return X[p], y[p]


@pytest.fixture(scope="module")
def cpusmall_prefix(data_dir):
    X, y = okl.load_dataset("cpusmall", data_dir)
    p = permutation(len(y), 0)[:N_REGRESSION]
    return X[p], y[p]


def _cases():
    cases = []
    for name in okl.learners():
        cases.append(pytest.param((name, None), id=f"{name}-classification"))
        if accepts(name, "kernel"):
            cases.append(pytest.param((name, None, "chosen"), id=f"{name}-classification-chosen-width"))
        if accepts(name, "loss"):
            try:
                okl.make(name, **check_params(name, 10, "squared"))
            except ValueError:
                continue
            cases.append(pytest.param((name, "squared"), id=f"{name}-regression"))
            if accepts(name, "kernel"):
                cases.append(pytest.param((name, "squared", "chosen"), id=f"{name}-regression-chosen-width"))
    return cases


CASES = _cases()


@pytest.fixture
def case(request, german_prefix, cpusmall_prefix):
    name, loss, *width = request.param
    X, y = cpusmall_prefix if loss == "squared" else german_prefix
    return name, check_params(name, len(y), loss, *width), X, y


def _loop(learner, X, y):
    out = np.empty(len(y))
    for t in range(len(y)):
        out[t] = learner.predict_one(X[t])
        learner.learn_one(X[t], y[t])
    return out


def _assert_close(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(1.0, float(np.abs(a).max(initial=0.0)))
    err = float(np.abs(a - b).max(initial=0.0))
    assert err <= 1e-9 * scale, f"{what}: max difference {err:.3g}"


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_run_equals_per_instance_loop(case):
    name, params, X, y = case
    trace = okl.make(name, **params).run(X, y)
    assert trace.decisions.shape == (len(y),)
    assert np.isfinite(trace.decisions).all()
    _assert_close(trace.decisions, _loop(okl.make(name, **params), X, y), f"{name}: run vs loop")


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_run_in_pieces_equals_one_run(case):
    name, params, X, y = case
    whole = okl.make(name, **params).run(X, y).decisions
    m = okl.make(name, **params)
    parts = [m.run(X[a:b], y[a:b]).decisions for a, b in ((0, 7), (7, 150), (150, len(y)))]
    _assert_close(whole, np.concatenate(parts), f"{name}: run in pieces")


@pytest.mark.parametrize("case", CASES, indirect=True)
@pytest.mark.parametrize("cut", [BUDGET // 2, 250])
def test_save_load_continues_identically(case, cut, tmp_path):
    name, params, X, y = case
    whole = okl.make(name, **params).run(X, y).decisions
    m = okl.make(name, **params)
    m.run(X[:cut], y[:cut])
    path = tmp_path / "model.npz"
    m.save(path)
    loaded = okl.Learner.load(path)
    assert type(loaded) is type(m) and loaded.get_params().keys() == m.get_params().keys()
    assert loaded.n_seen_ == cut
    _assert_close(whole[cut:], loaded.run(X[cut:], y[cut:]).decisions, f"{name}: save/load at {cut}")


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_same_random_state_same_numbers_and_predict_is_pure(case):
    name, params, X, y = case
    a = okl.make(name, **params)
    a.run(X[:200], y[:200])
    before = a.predict_one(X[200])
    assert a.predict_one(X[200]) == before
    rest_a = a.run(X[200:], y[200:]).decisions
    b = okl.make(name, **params)
    rest_b = np.concatenate([b.run(X[:200], y[:200]).decisions, b.run(X[200:], y[200:]).decisions])
    np.testing.assert_array_equal(rest_a, rest_b[200:])


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_bad_input_raises_and_keeps_state(case):
    name, params, X, y = case
    ref = okl.make(name, **params)
    ref_dec = ref.run(X, y).decisions
    m = okl.make(name, **params)
    m.run(X[:100], y[:100])
    bad_x = X[100].copy()
    bad_x[3] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        m.learn_one(bad_x, y[100])
    with pytest.raises(ValueError, match="features"):
        m.learn_one(X[100, :-1], y[100])
    with pytest.raises(ValueError, match="features"):
        m.run(X[100:110, :-1], y[100:110])
    if m.task == "classification":
        with pytest.raises(ValueError, match="-1 or \\+1"):
            m.learn_one(X[100], 0.5)
        with pytest.raises(ValueError, match="-1 or \\+1"):
            m.run(X[100:110], np.zeros(10))
    with pytest.raises(ValueError, match="non-finite"):
        m.learn_one(X[100], np.inf)
    _assert_close(ref_dec[100:], m.run(X[100:], y[100:]).decisions, f"{name}: state after bad input")


@pytest.mark.parametrize("name", okl.learners())
def test_invalid_hyperparameters_are_rejected(name):
    cls = learner_class(name)
    bad = {"budget": 0, "eta": -1.0, "k": 0, "alpha": -1.0, "C": 0.0, "loss": "nope", "kernel": "nope"}
    tried = 0
    for param, value in bad.items():
        if accepts(name, param):
            tried += 1
            with pytest.raises(ValueError, match=param if param not in ("loss", "kernel") else "must be|unknown"):
                okl.make(name, **{param: value})
    assert tried > 0 or not cls._param_names()

"""Categorical features in the River adapters: string values (always) and the keys named in
``categorical=`` enter one-hot, one column per level (okl.river's module docstring)."""

import numpy as np
import pytest

pytest.importorskip("river")

from okl.river import OKLRiverClassifier, OKLRiverRegressor  # noqa: E402

COLOURS = ("red", "green", "blue")


def _events(n, seed=0):
    r = np.random.default_rng(seed)
    for _ in range(n):
        c = COLOURS[int(r.integers(3))]
        u = float(r.random())
        yield c, u, (c == "red") != (u > 0.9)


def test_a_string_value_is_its_one_hot_indicator_exactly():
    native, explicit = OKLRiverClassifier(seed=0), OKLRiverClassifier(seed=0)
    right = 0
    for t, (c, u, y) in enumerate(_events(500)):
        a, b = {"colour": c, "u": u}, {("colour", c): 1.0, "u": u}
        assert native.predict_one(a) == explicit.predict_one(b)
        assert native.decision_function_one(a) == explicit.decision_function_one(b)
        right += t >= 250 and native.predict_one(a) == y
        native.learn_one(a, y)
        explicit.learn_one(b, y)
    assert native.columns == explicit.columns
    assert sorted(k for k in native.columns if isinstance(k, tuple)) == [("colour", c) for c in sorted(COLOURS)]
    # the label is the colour (10 % of it flipped by u): one column per level learns it
    assert right / 250 > 0.85


def test_named_keys_are_codes_and_none_is_a_missing_level():
    coded = OKLRiverRegressor(seed=0, categorical=["chick"], n_hashed=0)
    explicit = OKLRiverRegressor(seed=0, n_hashed=0)
    r = np.random.default_rng(1)
    for _ in range(200):
        chick, t = int(r.integers(5)), float(r.integers(12))
        y = 40.0 + (3 + chick) * t
        x = {"chick": chick, "time": t}
        e = {("chick", chick): 1.0, "time": t}
        assert coded.predict_one(x) == explicit.predict_one(e)
        coded.learn_one(x, y)
        explicit.learn_one(e, y)
    assert coded.predict_one({"chick": None, "time": 3.0}) == explicit.predict_one({"time": 3.0})
    # with no hashed columns a level first seen after the width is fixed has no column: it predicts
    # as if the key were absent; 2 and 2.0 are one level (Python equality)
    assert coded.predict_one({"chick": 99, "time": 3.0}) == explicit.predict_one({"time": 3.0})
    assert coded.predict_one({"chick": 2.0, "time": 3.0}) == explicit.predict_one({("chick", 2): 1.0, "time": 3.0})
    assert "chick" not in coded.columns


def test_categorical_parameter_and_values_are_checked():
    with pytest.raises(ValueError, match=r"categorical=\['colour'\]"):
        OKLRiverClassifier(categorical="colour")
    with pytest.raises(ValueError, match="hashable"):
        OKLRiverClassifier(categorical=[["a"]])
    m = OKLRiverClassifier(seed=0, categorical=["k"])
    with pytest.raises(ValueError, match="'k' has an unhashable value"):
        m.learn_one({"k": [1, 2]}, True)
    with pytest.raises(ValueError, match="'k' has a non-finite value inf"):
        m.learn_one({"k": float("inf")}, True)
    with pytest.raises(ValueError, match="'k' has a non-finite value nan"):
        m.learn_one({"k": float("nan")}, True)
    assert m.model is None  # nothing learned from a refused event
    for i in range(80):  # None is a missing level: as if the key were absent
        m.learn_one({"k": i % 3, "u": i / 80}, i % 3 == 1)
    assert m.predict_proba_one({"k": None, "u": 0.5}) == m.predict_proba_one({"u": 0.5})


def test_a_frame_with_a_string_column_learns_as_learn_one():
    pd = pytest.importorskip("pandas")
    rows = list(_events(160, seed=2))
    X = pd.DataFrame({"colour": [c for c, _, _ in rows], "u": [u for _, u, _ in rows]})
    y = pd.Series([lab for _, _, lab in rows])
    many, one = OKLRiverClassifier(seed=0), OKLRiverClassifier(seed=0)
    many.learn_many(X.iloc[:100], y.iloc[:100])
    many.learn_many(X.iloc[100:], y.iloc[100:])
    for (c, u, lab) in rows:
        one.learn_one({"colour": c, "u": u}, lab)
    probe = X.iloc[:20]
    want = [one.predict_one(x) for x in probe.to_dict(orient="records")]
    assert many.predict_many(probe).tolist() == want
    np.testing.assert_allclose(many.predict_proba_many(probe)[True].to_numpy(),
                               [one.predict_proba_one(x)[True] for x in probe.to_dict(orient="records")],
                               rtol=0, atol=1e-12)


def test_sklearn_categorical_columns_are_their_one_hot_columns_exactly():
    from okl.sklearn import OKLClassifier, OKLRegressor

    r = np.random.default_rng(0)
    colour, u = r.choice(list(COLOURS), 400), r.random(400)
    X = np.empty((400, 2), dtype=object)
    X[:, 0], X[:, 1] = u, colour
    y = np.where((colour == "red") != (u > 0.9), "yes", "no")
    native = OKLClassifier(random_state=0, categorical=[1]).fit(X, y)
    explicit = OKLClassifier(random_state=0).fit(
        np.column_stack([u] + [colour == c for c in sorted(COLOURS)]).astype(float), y)
    assert native.categories_ == {1: sorted(COLOURS)} and native.n_features_in_ == 2
    np.testing.assert_array_equal(native.decision_function(X), explicit.decision_function(
        np.column_stack([u] + [colour == c for c in sorted(COLOURS)]).astype(float)))
    assert np.mean(native.predict(X[300:]) == y[300:]) > 0.9
    # a level not seen when the levels were fixed enters as no level, counted when learned
    later = X[:3].copy()
    later[0, 1] = "purple"
    before = native.decision_function(later)
    assert native.n_unknown_levels_ == 0  # predict counts nothing
    with pytest.warns(RuntimeWarning, match="not seen when the levels were fixed"):
        native.partial_fit(later, y[:3])
    assert native.n_unknown_levels_ == 1 and np.isfinite(before).all()
    # integer codes, a boolean mask, a regressor; bad names and values are refused with the column
    codes = np.column_stack([u, r.integers(0, 4, 400)])
    reg = OKLRegressor(random_state=0, categorical=[False, True]).fit(codes, 3.0 * codes[:, 1] + u)
    assert reg.categories_ == {1: [0.0, 1.0, 2.0, 3.0]} and reg.learner_.dim_ == 5
    with pytest.raises(ValueError, match="column 5 is not an index"):
        OKLClassifier(categorical=[5]).fit(X, y)
    with pytest.raises(ValueError, match=r"row 0, column 1: 'red' is not a number|row \d+, column 1: '\w+' is not"):
        OKLClassifier(categorical=[0]).fit(X, y)

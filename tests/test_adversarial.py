"""Adversarial streams and stream-transform specs (SkeGD 6.4, FORKS 5.2; ALGORITHMS.md 8)."""

from __future__ import annotations

import numpy as np
import pytest

from okl.data import load_dataset, permutation
from okl.data.adversarial import (ADVERSARIAL_PRESETS, Adversarial, adversarial_stream, identity, parse_stream,
                                  preset_note, resolve_dataset, stream_label)


def by_definition(X, y, kb, kr, seed):
    """The stream written out round by round from the definition (1-based blocks, even ones flipped)."""
    p = permutation(len(y), seed)
    Xs, ys = [], []
    for block in range(1, kb + 1):  # block i (1-based) shows instance p[i - 1]
        sign = -1.0 if block % 2 == 0 else 1.0
        for _ in range(kr):
            Xs.append(X[p[block - 1]])
            ys.append(sign * y[p[block - 1]])
    return np.array(Xs), np.array(ys)


def test_hand_built_example():
    X = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    p = permutation(5, 7)
    Xa, ya = adversarial_stream(X, y, n_blocks=3, repeats=2, seed=7)
    # written out by hand: blocks 1, 2, 3 show rows p[0], p[1], p[2]; block 2 has its label flipped
    expected_rows = [p[0], p[0], p[1], p[1], p[2], p[2]]
    np.testing.assert_array_equal(Xa, X[expected_rows])
    np.testing.assert_array_equal(ya, [y[p[0]], y[p[0]], -y[p[1]], -y[p[1]], y[p[2]], y[p[2]]])
    assert len(set(p[:3])) == 3  # distinct instances


@pytest.mark.parametrize("kb,kr,seed", [(1, 1, 0), (4, 3, 1), (500, 10, 0), (500, 20, 19)])
def test_german_presets_equal_the_definition(kb, kr, seed):
    X, y = load_dataset("german")
    Xa, ya = parse_stream(f"adversarial:kb={kb},kr={kr}")(X, y, seed)
    Xd, yd = by_definition(X, y, kb, kr, seed)
    assert Xa.shape == (kb * kr, 24)
    np.testing.assert_array_equal(Xa, Xd)
    np.testing.assert_array_equal(ya, yd)


def test_presets_specs_and_options():
    assert parse_stream("adversarial:german-1") == Adversarial(None, 500, 10)
    assert parse_stream("adversarial:german-2").spec == "adversarial:kb=500,kr=20"
    assert {k: v[1:] for k, v in ADVERSARIAL_PRESETS.items()} == {
        "german-1": (500, 10), "german-2": (500, 20), "codrna-1": (500, 10), "codrna-2": (500, 20)}
    assert "our choice" in preset_note("codrna-1") and "our choice" not in preset_note("german-1")
    X, y = load_dataset("german")
    s = parse_stream("adversarial:kb=50,kr=4,drop_last=1,rows=150")
    assert s.spec == "adversarial:kb=50,kr=4,drop_last=1,rows=150" and parse_stream(s.spec) == s
    Xa, ya = s(X, y, 3)
    Xd, yd = by_definition(X, y, 50, 4, 3)
    np.testing.assert_array_equal(Xa, Xd[:150, :-1])  # the FORKS code's german: last column dropped
    np.testing.assert_array_equal(ya, yd[:150])
    assert s.length(1000) == 150
    # permutation / identity
    Xp, yp = parse_stream("permutation:rows=10")(X, y, 2)
    np.testing.assert_array_equal(Xp, X[permutation(1000, 2)[:10]])
    Xi, yi = identity(X, y, 5)
    np.testing.assert_array_equal(yi, y)
    assert parse_stream("file-order").spec == "identity"


def test_resolve_dataset_and_labels():
    base, s = resolve_dataset("german-2", "permutation:rows=77")
    assert base == "german" and s.spec == "adversarial:kb=500,kr=20,rows=77"
    assert resolve_dataset("codrna-1")[0] == "codrna"
    with pytest.raises(ValueError, match="adversarial preset"):
        resolve_dataset("german-1", "adversarial:kb=3,kr=2")
    assert stream_label("german", "adversarial:kb=500,kr=10") == "german-1"
    assert stream_label("german", "permutation") == "german"


@pytest.mark.parametrize("spec,match", [("adversarial:kb=3", "kb=K,kr=R"), ("adversarial:kb=x,kr=2", "integer"),
                                        ("adversarial:kb=0,kr=2", ">= 1"), ("shuffle", "unknown stream"),
                                        ("permutation:kb=3", "unknown option"), ("adversarial:kb=2,kr=2,foo=1",
                                                                                  "unknown option")])
def test_bad_specs(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_stream(spec)


def test_more_blocks_than_rows_is_an_error():
    X, y = np.zeros((3, 2)), np.ones(3)
    with pytest.raises(ValueError, match="kb must be in"):
        adversarial_stream(X, y, 4, 2, seed=0)


def test_a_cell_on_an_adversarial_stream_is_the_learner_run_on_it():
    from okl import make
    from okl.eval.sweep import build_cells, run_cell

    (cell,) = build_cells(["german-1"], ["nogd"], seeds=[3], stream="permutation:rows=400")
    res = run_cell(cell)
    X, y = load_dataset("german")
    Xa, ya = by_definition(X, y, 500, 10, 3)
    p = cell.param_dict
    assert "sigma" not in p  # (a cell with no width: the learner chooses it from its first rows, as okl run)
    trace = make("nogd", budget=p["budget"], loss="hinge", random_state=3).run(Xa[:400], ya[:400])
    assert res.n_rounds == 400
    assert res.mistake_rate == trace.mistake_rate and res.authors_rate == trace.authors_mistake_rate
    np.testing.assert_allclose(res.curve_values[-1], trace.mistake_rate, rtol=1e-12)

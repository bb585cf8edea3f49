"""OPFES Table 3's ablations (issue 27): the no-KOM cell on pol's fixed split is *better* than full
OPFES and than the paper's number, so these tests check that it is not a bug:

* the (i) configuration is ALGORITHMS.md 7's learner without KOM: uniform p2 and pl, no reuse
  (w2 starts at 0), the ideal-kernel model kept;
* its current-stage decisions equal a plain re-implementation of two from-scratch OGD models on
  x2 with Eq. 12's weights, and do not depend on the old space at all;
* no decision of any ablation sees its own round's label;
* the harness runs every ablation on the same stream and counts the CER over the T2 current rounds.

pol, fixed split (new space = columns 0..23, as ``opfes-ablation --protocol published``), a
1,600-row prefix, d1 = d2 = 40, T_M = 20.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import okl
from okl.evolvable import OPFES, make_evolvable_stream
from okl.evolvable.opfes import fourier_map

D = 40
PARAMS = {"n_old_features": D, "n_new_features": D, "kom_iterations": 20, "sigma": 0.25, "step_size": 10.0,
          "reg": 1e-4}
ABLATIONS = {"opfes": {}, "no-kom": {"use_kom": False}, "no-ideal": {"use_ideal_kernel": False},
             "no-reuse": {"reuse_model": False}}


@pytest.fixture(scope="module")
def pol_fixed(data_dir):
    X, y = okl.load_dataset("pol", data_dir)
    X, y = np.asarray(X, float)[:1600], np.asarray(y, float)[:1600]
    return X, y, make_evolvable_stream(X, y, seed=2, new_columns=range(24))


def _run(stream, seed=2, **switches):
    m = OPFES(random_state=seed, horizon=stream.n_rounds, **PARAMS, **switches)
    return m, m.run(stream)


def test_no_kom_is_the_documented_configuration(pol_fixed):
    _, _, s = pol_fixed
    m, r = _run(s, use_kom=False)
    np.testing.assert_array_equal(m.p2_, np.full(D, 1.0 / D))       # no KOM density for K2 ...
    np.testing.assert_array_equal(m.pl_, np.full(D, 1.0 / D))       # ... nor for K^l
    assert not np.any(m.w2_initial_)                                 # no reuse: w2 starts at 0
    assert not {"p2", "pl", "reused_rank"} & set(m.transition_)
    assert np.any(m.wl_) and m._mode() == 0                          # the K^l model is kept and trained
    # the full learner and the other ablations do switch on what (i) switches off
    full, _ = _run(s)
    assert not np.allclose(full.p2_, 1.0 / D) and not np.allclose(full.pl_, 1.0 / D)
    assert np.linalg.norm(full.w2_initial_) > 0
    noreuse, _ = _run(s, reuse_model=False)
    np.testing.assert_array_equal(noreuse.p2_, full.p2_)            # same KOM density, only w2 = 0
    assert not np.any(noreuse.w2_initial_)
    noideal, _ = _run(s, use_ideal_kernel=False)
    assert noideal._mode() == 1 and not np.any(noideal.wl_)


def _reference_current_stage(m, s):
    """The current stage of OPFES without KOM (ALGORITHMS.md 7, step 5) in plain Python: two OGD models
    from 0 on z = phi(x2)/sqrt(d2), h = omega f2 + (1 - omega) fl, then Eq. 12 and one OGD step each."""
    X2, Y = s.X2[s.Te:], s.y[s.T1 + s.Te:]
    Z2 = fourier_map(X2, m.u2_, m.b2_) / math.sqrt(D)
    ZL = fourier_map(X2, m.ul_, m.bl_) / math.sqrt(D)
    w2, wl = np.zeros(D), np.zeros(D)
    omega, c, lam, gamma = 0.5, PARAMS["step_size"], PARAMS["reg"], m.gamma_
    out = []
    for t, (z2, zl, y) in enumerate(zip(Z2, ZL, Y), start=1):
        f2, fl = float(w2 @ z2), float(wl @ zl)
        out.append(omega * f2 + (1 - omega) * fl)
        l2 = max(0.0, 1 - y * f2) + lam / 2 * float(w2 @ w2)
        ll = max(0.0, 1 - y * fl) + lam / 2 * float(wl @ wl)
        a, b = omega * math.exp(-gamma * l2), (1 - omega) * math.exp(-gamma * ll)
        omega = a / (a + b)
        tau = c / math.sqrt(t)
        w2 = (1 - tau * lam) * w2 + (tau * y * z2 if y * f2 < 1 else 0.0)
        wl = (1 - tau * lam) * wl + (tau * y * zl if y * fl < 1 else 0.0)
    return np.asarray(out)


def test_no_kom_equals_two_from_scratch_models_and_ignores_the_old_space(pol_fixed):
    _, _, s = pol_fixed
    m, r = _run(s, use_kom=False)
    assert m.gamma_ > 0
    start = s.T1 + s.Te
    np.testing.assert_allclose(r.decisions[start:], _reference_current_stage(m, s), rtol=0, atol=1e-9)
    # the old features carry nothing into (i)'s current stage: zero them and the decisions stay
    blank = okl.evolvable.EvolvableStream(np.zeros_like(s.X1), s.X2, s.y, s.T1, s.Te, s.T2)
    _, r0 = _run(blank, use_kom=False)
    np.testing.assert_array_equal(r0.decisions[start:], r.decisions[start:])
    # ... while full OPFES does use them (through KOM and the reused model)
    _, full = _run(s)
    _, full0 = _run(blank)
    assert not np.array_equal(full.decisions[start:], full0.decisions[start:])
    # CER = the mistakes of the T2 current rounds, nothing else
    assert r.T2 == s.T2 == len(s.y) - start
    assert r.current_error_rate == pytest.approx(np.mean(np.sign(r.decisions[start:] + (r.decisions[start:] == 0))
                                                         != s.y[start:]))


@pytest.mark.parametrize("label", list(ABLATIONS))
def test_no_ablation_decision_sees_its_own_label(pol_fixed, label):
    """Flip the label of round t: every decision up to and including t stays (the label is used only
    after its round's prediction), and the run replays round by round with predict_one / learn_one."""
    _, _, s = pol_fixed
    _, r = _run(s, **ABLATIONS[label])
    start = s.T1 + s.Te
    for t in (s.T1 - 1, s.T1 + 3, start, start + 1, start + 250):
        y = s.y.copy()
        y[t] = -y[t]
        flipped = okl.evolvable.EvolvableStream(s.X1, s.X2, y, s.T1, s.Te, s.T2)
        _, rf = _run(flipped, **ABLATIONS[label])
        np.testing.assert_array_equal(rf.decisions[:t + 1], r.decisions[:t + 1])
        later = not np.array_equal(rf.decisions[t + 1:], r.decisions[t + 1:])
        if s.T1 <= t < start:
            # an evolving label reaches the current stage only through the ideal kernel's KOM density
            # (w1 is frozen, K2's statistics hold no labels): (i) and (ii) ignore it, OPFES and (iii) use it
            assert later == (label in ("opfes", "no-reuse"))
        else:
            assert later                                                      # used after its round
    loop = OPFES(random_state=2, horizon=s.n_rounds, **PARAMS, **ABLATIONS[label])
    got = []
    for _, x1, x2, y in s.rows():
        got.append(loop.predict_one(x1=x1, x2=x2))
        loop.learn_one(x1=x1, x2=x2, y=y)
    np.testing.assert_allclose(got, r.decisions, rtol=0, atol=1e-9)


def test_the_ablation_harness_pairs_the_streams(pol_fixed):
    """okl.evolvable.harness.evaluate (what opfes-ablation calls): every label of a run sees the stream
    of its seed with the fixed split, and its CER is that learner's CER on that stream."""
    from okl.evolvable.harness import evaluate

    X, y, _ = pol_fixed
    tuned = {"sigma": PARAMS["sigma"], "step_size": PARAMS["step_size"], "linear_step_size": 1.0,
             "reg": PARAMS["reg"]}
    small = {k: PARAMS[k] for k in ("n_old_features", "n_new_features", "kom_iterations")}
    run = evaluate(X, y, [f"{k}=opfes" for k in ABLATIONS], runs=2, tuned=tuned, overrides=small,
                   per_learner=ABLATIONS, keep_curves=False, new_columns=range(24))
    for i, seed in enumerate((0, 1)):
        s = make_evolvable_stream(X, y, seed=seed, new_columns=range(24))
        assert list(s.new_columns) == list(range(24))
        for label, switches in ABLATIONS.items():
            _, r = _run(s, seed=seed, **switches)
            assert run.cer[label][i] == r.current_error_rate


@pytest.mark.parametrize("clock", ["model", "global"])
def test_run_gives_the_transition_the_rounds_already_seen(pol_fixed, clock):
    """run() and the round-by-round loop agree on everything the transition reads: Thm 4.4's gamma over
    T2 = horizon - (T1 + Te) (run() once passed the whole horizon, since it counted the rounds only at
    the end), and the global clock of the current stage."""
    from okl.evolvable.opfes import theory_gamma

    _, _, s = pol_fixed
    m, r = _run(s, clock=clock)
    assert m.gamma_ == pytest.approx(theory_gamma(2.0, PARAMS["reg"], s.T2), rel=1e-12)
    assert m.n_seen_ == s.n_rounds
    if clock == "global":
        assert m.clocks_[1] == s.n_rounds          # wl's clock started at T1 + Te and took T2 steps
    loop = OPFES(random_state=2, horizon=s.n_rounds, clock=clock, **PARAMS)
    got = []
    for _, x1, x2, y in s.rows():
        got.append(loop.predict_one(x1=x1, x2=x2))
        loop.learn_one(x1=x1, x2=x2, y=y)
    assert loop.gamma_ == m.gamma_
    np.testing.assert_allclose(got, r.decisions, rtol=0, atol=1e-9)

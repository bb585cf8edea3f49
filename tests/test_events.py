"""The per-event path (issue 17): predict_one + learn_one do a round's arithmetic once, agree with
run(), never save or pickle their cache, check their input; predict_many / learn_many; the block
path of ``okl stream`` (``EventPath.learn_events``) equals a learn_one loop bit for bit."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import okl
from okl.checks import assert_close, per_instance_decisions

FAST = ("forks", "nogd", "skegd", "fogd", "auto")
N = 700


@pytest.fixture(scope="module")
def rows(svmguide1_rows):
    return svmguide1_rows(N)


def _params(name):
    if name == "linear":
        return {"random_state": 0}
    # small budgets and a short update cycle: stage 2 and (sketched) update rounds within N rows
    kw = dict(budget=30, kernel=okl.RBF(sigma=0.25), random_state=0)
    if name in ("forks", "skegd"):
        kw["rho"] = 40
    if name == "auto":  # its FORKS members: rho = 0.3 x 134 = 40
        kw["horizon"] = 134
    return kw


@pytest.mark.parametrize("name", FAST)
def test_per_event_equals_run_and_learns_once(name, rows):
    X, y = rows
    ref = okl.make(name, **_params(name)).run(X, y).decisions
    m = okl.make(name, **_params(name))
    loop = per_instance_decisions(m, X, y)
    assert_close(ref, loop, f"{name}: per-event vs run")
    assert m.n_seen_ == N
    if name == "auto":  # every member past its transition, FORKS past update rounds, all in step
        assert all(p.n_seen_ == N for p in m.pool_)
        assert all(p.diagnostics().get("stage", 2) == 2 for p in m.pool_)
        assert all(p.update_rounds_ > 0 for p in m.pool_ if p.name == "forks")
        np.testing.assert_array_equal(ref, loop)  # one engine: the same arithmetic on both paths
    elif name != "fogd":
        assert m.diagnostics()["stage"] == 2


@pytest.mark.parametrize("name", FAST + ("kogd", "pros-n-kons", "linear", "bogd"))
def test_block_path_equals_learn_one_loop_bit_for_bit(name, rows):
    """okl stream learns blocks through _learn_events: the decisions must not depend on where the
    blocks were cut (exact resume), i.e. equal the learn_one loop exactly."""
    X, y = rows
    params = _params(name) if name in FAST else {"random_state": 0}
    m = okl.make(name, **params)
    loop = np.array([m.events.learn_event(m, X[t], y[t]) for t in range(N)])  # learn_one without predict_one
    if name in FAST:  # and predict_one then learn_one: the same arithmetic (cached features)
        np.testing.assert_array_equal(per_instance_decisions(okl.make(name, **params), X, y), loop)
    for cuts in ((0, 1, 2, 50, 51, 300, N), (0, 7, 333, 334, N), (0, N)):
        m = okl.make(name, **params)
        got = np.concatenate([m.events.learn_events(m, X[a:b], y[a:b]) for a, b in zip(cuts, cuts[1:])])
        np.testing.assert_array_equal(got, loop, err_msg=f"{name} {cuts}")


@pytest.mark.parametrize("name", FAST)
def test_cache_is_used_only_for_the_same_x_and_state(name, rows):
    X, y = rows
    a, b = okl.make(name, **_params(name)), okl.make(name, **_params(name))
    a.run(X[:400], y[:400])
    b.run(X[:400], y[:400])
    # predict x, then learn another x (and in-place change of the array): no stale features
    x = X[400].copy()
    a.predict_one(x)
    x[:] = X[401]
    a.learn_one(x, y[401])
    b.learn_one(X[401], y[401])
    assert a.predict_one(X[402]) == b.predict_one(X[402])
    # predict, learn something else, learn the predicted x: the state changed in between
    a.predict_one(X[403])
    a.learn_one(X[404], y[404])
    a.learn_one(X[403], y[403])
    b.learn_one(X[404], y[404])
    b.learn_one(X[403], y[403])
    np.testing.assert_array_equal(a.predict_many(X[:20]), b.predict_many(X[:20]))


@pytest.mark.parametrize("name", FAST)
def test_cache_is_never_saved_or_pickled(name, rows, tmp_path):
    X, y = rows
    m = okl.make(name, **_params(name))
    m.run(X[:400], y[:400])
    m.predict_one(X[400])
    state = pickle.dumps(m)
    m.predict_one(X[401])
    assert pickle.dumps(m) == state  # predict_one changes nothing a learner holds
    assert not any(k.startswith("_ev") for k in vars(pickle.loads(state)))
    m.save(tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as z:
        assert not any("_ev_" in key for key in z.files)
    loaded = okl.Learner.load(tmp_path / "m.npz")
    m.learn_one(X[400], y[400])
    loaded.learn_one(X[400], y[400])
    assert m.predict_one(X[401]) == loaded.predict_one(X[401])


@pytest.mark.parametrize("name", FAST)
def test_bad_inputs_are_refused_without_changing_state(name, rows):
    X, y = rows
    m = okl.make(name, **_params(name))
    m.run(X[:400], y[:400])
    before = m.predict_one(X[0])
    for bad in (np.array([np.nan, 0, 0, 0]), np.array([1e300, 0, 0, 0]), np.zeros(5), np.zeros((1, 4))):
        with pytest.raises(ValueError):
            m.predict_one(bad)
        with pytest.raises(ValueError):
            m.learn_one(bad, 1.0)
    with pytest.raises(ValueError, match="labels must be -1 or \\+1"):
        m.learn_one(X[0], 2.0)
    assert m.n_seen_ == 400 and m.predict_one(X[0]) == before
    # other input types take the full check and give the same answer
    assert m.predict_one(list(X[0])) == before
    assert m.predict_one(np.repeat(X[0], 2)[::2]) == before  # strided
    assert m.predict_one(np.asfortranarray(X[:2])[0]) == before


@pytest.mark.parametrize("name", FAST + ("kogd",))
def test_mini_batches(name, rows):
    X, y = rows
    params = _params(name) if name in FAST else {"random_state": 0}
    ref = okl.make(name, **params).run(X, y).decisions
    m = okl.make(name, **params)
    got = np.concatenate([m.learn_many(X[a:a + 64], y[a:a + 64]) for a in range(0, N, 64)])
    assert_close(ref, got, f"{name}: learn_many vs run")
    one = np.array([m.predict_one(x) for x in X[:30]])
    np.testing.assert_allclose(m.predict_many(X[:30]), one, rtol=0, atol=1e-12)
    assert m.learn_many(X[:0], y[:0]).shape == (0,)


def test_width_window_per_event(rows):
    """kernel=None: the first 50 rows are buffered (running mean), then the width is fixed."""
    X, y = rows
    ref = okl.make("nogd", budget=30, random_state=0).run(X, y).decisions
    m = okl.make("nogd", budget=30, random_state=0)
    assert_close(ref, per_instance_decisions(m, X, y), "nogd width window: per-event vs run")
    m2 = okl.make("nogd", budget=30, random_state=0)
    np.testing.assert_array_equal(m2.events.learn_events(m2, X, y), per_instance_decisions(okl.make("nogd", budget=30, random_state=0), X, y))
    np.testing.assert_array_equal(m2.learn_one(X[0], y[0]).n_seen_, N + 1)


# ---- the fast plan (issue 24: okl.engine.fastpath) -----------------------------------------

def _plan(learner):
    from okl.runtime.events import fast_plan_of
    return fast_plan_of(learner)


@pytest.mark.parametrize("name", ("forks", "nogd", "skegd", "fogd", "linear"))
def test_fast_plan_takes_the_common_case_in_both_stages(name, rows):
    X, y = rows
    m = okl.make(name, **_params(name))
    m.run(X[:60], y[:60])  # started, stage 1 (NOGD / FORKS / SkeGD)
    m.predict_one(X[60])
    assert _plan(m), "stage 1: no fast plan"
    m.run(X[60:400], y[60:400])
    assert m.diagnostics().get("stage", 2) == 2
    m.predict_one(X[400])
    plan = _plan(m)
    assert plan, "stage 2: no fast plan"
    # the learner's weights live in the plan's buffer (views; saved and pickled as arrays)
    assert m.w_.base is plan.F
    copy = pickle.loads(pickle.dumps(m))
    assert np.array_equal(copy.w_, m.w_)
    m.learn_one(X[400], y[400])
    copy.learn_one(X[400], y[400])
    assert m.predict_one(X[401]) == copy.predict_one(X[401])
    assert copy.w_.base is _plan(copy).F is not plan.F  # its own plan


@pytest.mark.parametrize("name", ("forks", "nogd", "skegd", "fogd", "linear", "auto"))
def test_fast_plan_other_inputs_give_the_same_answer(name, rows):
    X, y = rows
    m = okl.make(name, **_params(name))
    m.run(X[:400], y[:400])
    want = m.predict_one(X[400])
    ro = X[400].copy()
    ro.setflags(write=False)
    assert m.predict_one(ro) == want  # read-only rows take the plan too
    assert m.predict_one(list(X[400])) == want
    assert m.predict_one(X[400].astype(np.float32).astype(float)) == m.predict_one(X[400].astype(np.float32))
    a, b = okl.make(name, **_params(name)), okl.make(name, **_params(name))
    a.run(X[:400], y[:400])
    b.run(X[:400], y[:400])
    for t in range(400, 460):  # integer labels and list rows (generic path) learn the same rounds
        a.learn_one(X[t], float(y[t]))
        b.learn_one(list(X[t]), int(y[t]))
    np.testing.assert_array_equal(a.predict_many(X[:30]), b.predict_many(X[:30]))
    assert a.n_seen_ == b.n_seen_ == 460


def test_fast_plan_fixes_pending_spreads_as_run():
    """A feature constant in the width window has a pending spread: the row that first changes it
    fixes it (predict_one maps it to +-1 without storing, learn_one stores it), as run() does."""
    rng = np.random.default_rng(5)
    X = rng.random((500, 4))
    X[:150, 2] = 0.25  # fixed by row 150
    X[:300, 3] = 0.0   # fixed by row 300 (after the transition)
    y = np.where(X[:, 0] + X[:, 1] > 1.0, 1.0, -1.0)
    for name in ("nogd", "fogd", "forks", "skegd", "linear", "auto"):
        kw = {"budget": 20, "random_state": 0, **({"rho": 60} if name in ("forks", "skegd") else {}),
              **({"horizon": 200} if name == "auto" else {})} if name != "linear" else {}
        ref = okl.make(name, **kw)
        want = ref.run(X, y).decisions
        m = okl.make(name, **kw)
        got = per_instance_decisions(m, X, y)
        plan = _plan(m)
        assert plan and m.scale_spread_.base is (plan.T if name == "auto" else plan.F), name
        assert_close(want, got, f"{name}: pending spreads per event vs run")
        np.testing.assert_array_equal(m.scale_spread_, ref.scale_spread_)
        keep = np.ones(len(y), bool)
        keep[[150, 300]] = False
        if name in ("auto", "linear"):  # the same arithmetic: every round run() learns alike is equal
            np.testing.assert_array_equal(got[keep], want[keep])
            np.testing.assert_array_equal(m.calibration_, ref.calibration_)
            np.testing.assert_array_equal(m.w_ if name == "linear" else m.L_, ref.w_ if name == "linear" else ref.L_)
        # rows that are not arrays take the generic path: the row that fixes a spread is learned
        # as run() maps it there too (predict_one's features are not reused)
        lists = okl.make(name, **kw)
        slow = np.array([(lists.predict_one(list(X[t])), lists.learn_one(list(X[t]), y[t]))[0] for t in range(len(y))])
        np.testing.assert_array_equal(slow, got)
        # the generic path learns the same model, bit for bit (predict_one maps the fixing rows
        # 150 and 300 to exactly +-1, run() and learn_one to their stored spread: ~1 ulp apart)
        alone = okl.make(name, **kw)
        gen = np.array([alone.events.learn_event(alone, X[t], y[t]) for t in range(len(y))])
        np.testing.assert_array_equal(got[keep], gen[keep])
        np.testing.assert_array_equal(m.predict_many(X[:50]), alone.predict_many(X[:50]))


@pytest.mark.parametrize("name", ("forks", "nogd", "skegd", "fogd", "linear", "auto"))
def test_fast_plan_regression_centres_targets_as_run(name):
    rng = np.random.default_rng(6)
    X = rng.random((400, 3))
    y = 0.5 + 0.3 * np.sin(4 * X[:, 0]) + 0.1 * X[:, 1]
    kw = {"budget": 20, "loss": "squared", "random_state": 0, **({"rho": 60} if name in ("forks", "skegd") else {}),
          **({"horizon": 200} if name == "auto" else {})}
    if name == "linear":
        kw = {"loss": "squared"}
    want = okl.make(name, **kw).run(X, y).decisions
    m = okl.make(name, **kw)
    got = per_instance_decisions(m, X, y)
    assert _plan(m) and _plan(m).center
    assert_close(want, got, f"{name}: regression per event vs run")
    if name in ("auto", "linear"):
        np.testing.assert_array_equal(want, got)
    with pytest.raises(ValueError):
        m.learn_one(X[0], float("nan"))
    assert m.n_seen_ == len(y)


def test_fast_plan_leaves_auto_members_in_the_engine(rows):
    """auto's members hold views of its engine's buffer: a member's own predict_one must not move
    them (the plan refuses arrays that are views of someone else's memory)."""
    X, y = rows
    m = okl.make("auto", **_params("auto"))
    m.run(X[:400], y[:400])
    member = next(p for p in m.pool_ if p.name == "nogd" and p.M_ is not None)
    w = member.w_
    member.predict_one(X[400])
    assert member.w_ is w and not _plan(member)
    before = m.predict_one(X[401])
    m.learn_one(X[401], y[401])
    ref = okl.make("auto", **_params("auto"))
    ref.run(X[:400], y[:400])
    assert ref.predict_one(X[401]) == before
    ref.learn_one(X[401], y[401])
    assert ref.predict_one(X[402]) == m.predict_one(X[402])


def test_auto_fast_plan_runs_the_engine_and_holds_its_state_in_views(rows):
    """auto's plan: its engine's arrays and a tail holding the input scale and the calibration
    (auto's own attributes become views of it); the Python steps of members (transitions, FORKS's
    update rounds) drop it, and the next event builds it on the new engine."""
    from okl.engine.roots import AutoPlan
    from okl.runtime.events import event_state

    X, y = rows
    m = okl.make("auto", **_params("auto"))
    m.run(X[:60], y[:60])  # started; members in stage 1
    m.predict_one(X[60])
    plan = _plan(m)
    assert isinstance(plan, AutoPlan) and plan.eng is event_state(m).buf
    assert m.calibration_.base is plan.T and m.scale_spread_ is None  # (a kernel given: no input scale)
    engines = set()
    for t in range(60, 400):
        m.predict_one(X[t])
        m.learn_one(X[t], y[t])
        if _plan(m):
            engines.add(id(_plan(m).eng))
    assert len(engines) > 3  # rebuilt after the members' transitions and update rounds
    copy = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(copy.calibration_, m.calibration_)
    ref = okl.make("auto", **_params("auto"))
    ref.run(X[:400], y[:400])
    for t in range(400, 460):
        assert m.predict_one(X[t]) == copy.predict_one(X[t]) == ref.predict_one(X[t])
        m.learn_one(X[t], y[t])
        copy.learn_one(X[t], y[t])
        ref.learn_one(list(X[t]), int(y[t]))
    np.testing.assert_array_equal(m.predict_proba_many(X[:30]), ref.predict_proba_many(X[:30]))
    np.testing.assert_array_equal(m.calibration_, ref.calibration_)
    # K outputs (class indices; a binary learner turned into two mirrored outputs): the same
    # plan, equal to the generic path and to run(), bit for bit
    k = np.where(y > 0, 0.0, 1.0)
    fast, slow, batch = (okl.make("auto", **_params("auto")) for _ in range(3))
    for a in (fast, slow, batch):
        a.run(X[:60], y[:60])
        a.heads.set_outputs(a, [1.0, -1.0])
    got = np.array([(fast.predict_one(X[t]), fast.events.learn_round(fast, X[t], k[t]))[1] for t in range(60, 400)])
    assert isinstance(_plan(fast), AutoPlan) and _plan(fast).K == 2 and got.shape == (340, 2)
    gen = np.array([(slow.predict_one(list(X[t])), slow.events.learn_round(slow, list(X[t]), int(k[t])))[1] for t in range(60, 400)])
    np.testing.assert_array_equal(got, gen)
    np.testing.assert_array_equal(got, batch.events.learn_events(batch, X[60:400], k[60:400]))  # (MultiClass's block path)
    np.testing.assert_array_equal(fast.predict_one(X[400]), fast.predict_many(X[400:401])[0])
    with pytest.raises(ValueError, match="class indices"):
        fast.learn_one(X[400], 2.0)
    assert fast.n_seen_ == 400


@pytest.mark.parametrize("name", ("nogd", "fogd"))
def test_fast_plan_in_the_width_window(name, rows):
    """The window's rows are buffered by the plan too (their decision: the running label mean);
    end_width_window inside it drops the plan."""
    X, y = rows
    a, b = okl.make(name, budget=30, random_state=0), okl.make(name, budget=30, random_state=0)
    got = per_instance_decisions(a, X[:20], y[:20])
    assert _plan(a) and not a.started_
    np.testing.assert_array_equal(got, b.run(X[:20], y[:20]).decisions)
    np.testing.assert_array_equal(a.warmup_X_, b.warmup_X_)
    a.end_width_window()
    b.end_width_window()
    assert a.predict_one(X[20]) == b.predict_one(X[20])
    np.testing.assert_array_equal(per_instance_decisions(a, X[20:200], y[20:200]),
                                  per_instance_decisions(b, X[20:200], y[20:200]))


@pytest.mark.parametrize("name,seed", [("auto", 0), ("auto", 1), ("nogd", 2), ("forks", 3), ("linear", 4)])
def test_random_operations_keep_the_fast_plan_and_the_generic_path_equal(name, seed):
    """A random sequence of what a live stream does (predict then learn, learn alone, a row changed
    in place between predict and learn, run() and learn_many blocks, a pickle or model-file round
    trip) on arrays (the fast plan) and on lists (the generic path) gives the same decisions and
    the same state, bit for bit, through transitions, update rounds and spreads fixed late."""
    import tempfile

    rng = np.random.default_rng(seed)
    n = 900
    X = rng.random((n, 4))
    X[:120, 2] = 0.5  # a spread fixed at row 120, after the width window
    X[:400, 3] = 0.0  # and one fixed at row 400
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * X[:, 3] > 0.9, 1.0, -1.0)
    kw = {"budget": 12, "random_state": 0}
    if name == "auto":
        kw["horizon"] = 150
    elif name == "forks":
        kw["rho"] = 30
    elif name == "linear":
        kw = {"random_state": 0}
    fast, slow = okl.make(name, **kw), okl.make(name, **kw)
    t = 0
    while t < n:
        op = rng.integers(0, 10)
        if op < 5:  # predict, then learn the same row
            a = fast.predict_one(X[t])
            b = slow.predict_one(list(X[t]))
            assert a == b, (t, op)
            assert fast.events.learn_round(fast, X[t], float(y[t])) == slow.events.learn_round(slow, list(X[t]), float(y[t]))
            t += 1
        elif op == 5:  # learn without predicting
            assert fast.events.learn_round(fast, X[t], float(y[t])) == slow.events.learn_round(slow, list(X[t]), float(y[t]))
            t += 1
        elif op == 6:  # predict one row, change the array in place, learn the next row with it
            if t + 1 >= n:
                break
            x = X[t].copy()
            fast.predict_one(x)
            x[:] = X[t + 1]
            assert fast.events.learn_round(fast, x, float(y[t + 1])) == slow.events.learn_round(slow, list(X[t + 1]), float(y[t + 1]))
            t += 2
        elif op == 7:  # a block through run() / learn_many on both
            e = min(n, t + int(rng.integers(1, 40)))
            if rng.random() < 0.5:
                np.testing.assert_array_equal(fast.run(X[t:e], y[t:e]).decisions, slow.run(X[t:e], y[t:e]).decisions)
            else:
                np.testing.assert_array_equal(fast.learn_many(X[t:e], y[t:e]), slow.learn_many(X[t:e], y[t:e]))
            t = e
        elif op == 8:  # pickle round trip of the fast one
            fast = pickle.loads(pickle.dumps(fast))
        else:  # model file round trip
            with tempfile.TemporaryDirectory() as tmp:
                fast.save(f"{tmp}/m.npz")
                fast = okl.Learner.load(f"{tmp}/m.npz")
    np.testing.assert_array_equal(fast.predict_many(X[:50]), slow.predict_many(X[:50]))
    assert fast.n_seen_ == slow.n_seen_
    with tempfile.TemporaryDirectory() as tmp:
        fast.save(f"{tmp}/a.npz")
        slow.save(f"{tmp}/b.npz")
        assert open(f"{tmp}/a.npz", "rb").read() == open(f"{tmp}/b.npz", "rb").read()


def test_the_event_state_lives_in_the_learner_and_is_never_copied(rows):
    """The per-event cache and fast plan are in the learner's ``_event`` slot (no module table
    keyed by id()): not in vars(), not in a pickle or a deep copy, which make their own plan and
    predict the same."""
    import copy

    from okl.runtime.events import fast_plan_of

    X, y = rows
    m = okl.make("nogd", budget=30, random_state=0)
    m.run(X[:300], y[:300])
    f = m.predict_one(X[300])
    assert fast_plan_of(m) and "_event" not in vars(m)
    for twin in (copy.deepcopy(m), pickle.loads(pickle.dumps(m)), copy.copy(m)):
        assert fast_plan_of(twin) is None
        assert twin.predict_one(X[300]) == f and fast_plan_of(twin) and fast_plan_of(twin) is not fast_plan_of(m)

"""The component table (okl.components): a step's declared state against the compiled views
that read it, and a composed learner as a member of auto's engine against the same member learning
through its own Python path (the same decisions, bit for bit, and the same state)."""

import importlib

import numpy as np
import pytest

import okl
from okl.checks import friedman_regression
from okl.components import STEPS, Plan
from okl.components.steps import krlst as krlst_step
from okl.learners.bogd import BOGD
from okl.learners.bpas import BPAS
from okl.learners.bsgd import BSGD
from okl.learners.forgetron import Forgetron
from okl.learners.knlms import KAP, KNLMS
from okl.learners.kogd import KOGD
from okl.learners.projectron import Projectron, ProjectronPlusPlus
from okl.learners.raker import AdaRaker, Raker
from okl.learners.rbp import RBP
from okl.learners.krls import FBKRLS, KRLS, SWKRLS
from okl.learners.krlst import KRLST


def test_krlst_step_block_is_the_views_layout():
    """The block the layout sizes from the spec is the one krlst_member_round reads: a member
    round on a block holding a learner's state gives that learner's round (and its counters)."""
    M, d = 7, 3
    size = STEPS["krls-t"].block_size({"M": M, "d": d})
    assert size == 3 + 3 * M * M + M + 4 + M + 4 * (M + 1)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, d)), rng.normal(size=40)
    ref = okl.make("krls-t", budget=M, loss="squared", scale=None, center_targets=False, kernel=okl.RBF(sigma=1.0))
    ref.run(X[:30], y[:30])
    spec = ref.kernel_.spec()
    F = np.full(size + 5, np.nan)  # (a guard after the block: nothing past it is touched)
    F[:3] = (ref.forgetting, ref._noise(), ref.jitter)
    at = 3
    for f in STEPS["krls-t"].state:
        a = {"K_D": ref.K_D_, "Q": ref.Q_, "Sigma": ref.Sigma_, "mu": ref.mu_, "sums": ref.s02_sums_,
             "removals": ref.removals_}[f.name]
        F[at:at + a.size] = a.ravel()
        at += a.size
    SV, alpha, m = ref.SV_.copy(), ref.alpha_.copy(), ref.m_
    for x, t in zip(X[30:], y[30:]):
        m = krlst_step.krlst_member_round(F, 0, SV, alpha, m, *spec, x, t, 0.0, 0)
    ref.run(X[30:], y[30:])
    assert m == ref.m_ and np.array_equal(SV, ref.SV_) and np.array_equal(alpha, ref.alpha_)
    o = 3 + 3 * M * M
    assert np.array_equal(F[o:o + M], ref.mu_) and np.array_equal(F[o + M + 2:o + M + 4], ref.removals_)
    assert ref.removals_.sum() > 0  # (the rounds pruned: the counters are exercised)
    assert np.isnan(F[size:]).all()


def test_a_plan_names_every_declared_field():
    with pytest.raises(ValueError, match="declares the state"):
        Plan("expansion", "krls-t", SV="SV_", w="alpha_", counts="m_", budget=5, constants=(1.0, 0.1, 1e-6),
             state=(("Q", "Q_"),))


def _auto_with(name, X, y, n_run, loss="squared", **params):
    m = okl.make("auto", members=[(name, 1.0, {"budget": 40, **params}), ("nogd", 1.0, {}), ("linear", None, {})],
                 loss=loss, random_state=3)
    out = [m.run(X[:n_run], y[:n_run]).decisions]
    events = []
    for x, t in zip(X[n_run:], y[n_run:]):
        events.append(m.predict_one(x))
        m.learn_one(x, t)
    member = m.pool_[0]
    return m, np.concatenate(out + [np.array(events)]), member


@pytest.mark.parametrize("name, cls", [("krls-t", KRLST), ("krls", KRLS), ("sw-krls", SWKRLS), ("fb-krls", FBKRLS),
                                       ("kap", KAP), ("knlms", KNLMS), ("bsgd", BSGD), ("kogd", KOGD)])
def test_dictionary_steps_run_in_autos_engine_as_their_own_path_would(monkeypatch, name, cls):
    """auto with a member of the recursive least-squares family: the engine runs it (no member
    outside), and run() then predict_one / learn_one give the decisions and member state of the
    same pool with that member learning through its own Python path (its composition hidden), bit
    for bit, past a full dictionary."""
    X, y = friedman_regression(400)
    m, out, member = _auto_with(name, X, y, 250)
    assert m.diagnostics()["members_outside_engine"] == 0
    assert member.m_ >= 30 and member.n_seen_ == 400
    monkeypatch.setattr(cls, "composition", ())
    m2, out2, member2 = _auto_with(name, X, y, 250)
    assert m2.diagnostics()["members_outside_engine"] == 1
    assert np.array_equal(out, out2)
    for attr in cls._state_attrs:
        a, b = getattr(member, attr), getattr(member2, attr)
        assert np.array_equal(a, b), attr
    if name == "krls-t":
        assert member.removals_.dtype == np.int64 and member.removals_.sum() > 0


@pytest.mark.parametrize("name, cls, params", [
    ("bsgd", BSGD, {"maintenance": "merge"}), ("bsgd", BSGD, {"maintenance": "project"}),
    ("bsgd", BSGD, {"maintenance": "remove"}), ("projectron", Projectron, {}), ("projectron++", ProjectronPlusPlus, {}),
    ("bpa-s", BPAS, {}), ("forgetron", Forgetron, {}), ("rbp", RBP, {}), ("bogd", BOGD, {}),
    ("bogd", BOGD, {"decay": "horizon", "horizon": 600}), ("kogd", KOGD, {"budget": None, "decay": 0.01})])
def test_classifiers_run_in_autos_engine_as_their_own_path_would(monkeypatch, name, cls, params):
    """Members of the column expansion under the hinge loss (BSGD's step reads the loss
    derivative; the Projectron's its mistakes and margin errors): the engine's member equals the
    member on its own Python path, bit for bit."""
    X, y = okl.load_dataset("german")
    m, out, member = _auto_with(name, X[:400], y[:400], 250, loss="hinge", **params)
    assert m.diagnostics()["members_outside_engine"] == 0 and member.m_ >= 30
    monkeypatch.setattr(cls, "composition", ())
    m2, out2, member2 = _auto_with(name, X[:400], y[:400], 250, loss="hinge", **params)
    assert m2.diagnostics()["members_outside_engine"] == 1
    assert np.array_equal(out, out2)
    for attr in cls._state_attrs:
        assert np.array_equal(getattr(member, attr), getattr(member2, attr), equal_nan=True), attr


def test_a_failed_member_round_leaves_the_pool():
    """FB-KRLS on repeated rows at a ridge too small for floats (issue 59's case): its compiled
    round fails inside the engine; the member leaves the pool, auto goes on with the others."""
    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(30, 4)), 10, axis=0)
    m = okl.make("auto", members=[("fb-krls", 1.0, {"regularization": 1e-300}), ("linear", None, {})],
                 loss="squared")
    out = m.run(X, np.sin(X[:, 0])).decisions
    assert np.isfinite(out).all()
    d = m.diagnostics()
    assert d["members_alive"] == 1 and d["members_outside_engine"] == 0
    assert m.weights()[0] == 0.0


def test_auto_with_krlst_member_saves_and_continues(tmp_path):
    X, y = friedman_regression(400)
    m = okl.make("auto", members=[("krls-t", 1.0, {}), ("sw-krls", 1.0, {}), ("linear", None, {})], loss="squared",
                 random_state=1)
    m.run(X[:300], y[:300])
    m.save(tmp_path / "m.npz")
    back = okl.Learner.load(tmp_path / "m.npz")
    assert np.array_equal(back.run(X[300:], y[300:]).decisions, m.run(X[300:], y[300:]).decisions)
    assert back.pool_[0].removals_.tolist() == m.pool_[0].removals_.tolist()
    assert back.pool_[1].m_ == m.pool_[1].m_ == m.pool_[1].budget


def test_the_dispatch_is_generated_from_the_table():
    """okl/components/dispatch.py is what okl.components.generate renders from the table: a
    branch for every step that keeps its own dictionary, a call of every member function a
    component declares (in the branch of its code), and nothing else."""
    import pathlib

    from okl.components import MAPS, generate
    path = pathlib.Path(generate.__file__).with_name("dispatch.py")
    assert path.read_text() == generate.render()
    text = generate.render()
    for comp in STEPS.values():
        assert (f"step == {comp.code}:  # {comp.name}" in text) == bool(comp.member_round)
    for comp in (*MAPS.values(), *STEPS.values()):
        for site, target in comp.member:
            module, _, name = target.rpartition(".")
            # (a map of the second root only: its features are its step's, not the shared dispatch's)
            assert (f"{name}({generate.SITES[site]})" in text) != (comp.own_root and site == "features"), comp.name
            assert name in vars(importlib.import_module(module)), target


def test_map_and_step_codes_are_compared_in_the_dispatch_only():
    """No compiled path, layout or learner names a component by its code: outside the generated
    okl/components/dispatch.py no line compares a member's (or a per-event plan's) map or step
    column with a code, and none compares with a code constant of the table."""
    import pathlib
    import re

    import okl.components as components

    src = pathlib.Path(components.__file__).parent.parent
    maps = ("EXPANSION", "KERNEL_MAP", "FOURIER_MAP", "LINEAR_MAP", "WINDOW", "WARMUP", "GENERATED_FOURIER",
            "COLUMN_EXPANSION", "FOURIER_KERNELS")
    steps = ("SUPPORT", "OGD", "ADAGRAD", "ONS", "STORE", "NAG", "KRLST", "ALD_KRLS", "WINDOW_KRLS",
             "AFFINE_PROJECTION", "BUDGETED_SGD", "PROJECTION", "BUDGETED_PA", "FORGETRON", "EX_KRLS",
             "RANDOM_BUDGET_PERCEPTRON", "BOGD", "NORMA", "EXPONENTIAL_WEIGHTS")
    assert {getattr(components, n) for n in maps} == {c.code for c in components.MAPS.values()}
    assert {getattr(components, n) for n in steps} == {c.code for c in STEPS.values()} - {-1}
    codes = "|".join((*maps, *steps, "FIRST_DICTIONARY_STEP"))
    column = re.compile(r"\b(?:MAP|STEP)\]\s*(?:==|!=|>=|<=|<|>)(?!\s*I\[)")
    constant = re.compile(r"(?:(?:==|!=|>=|<=)\s*|\bin\s*\(\s*)(?:%s)\b" % codes)
    found = [f"{path.relative_to(src)}:{i}" for path in src.rglob("*.py") if path.name != "dispatch.py"
             for i, line in enumerate(path.read_text().splitlines(), 1)
             if column.search(line) or constant.search(line)]
    assert found == [], found
    # (the check sees a comparison: one written into a module is found)
    assert column.search("if I[j, MAP] == 3:") and constant.search("elif st == ADAGRAD:")
    assert constant.search("if mp in (WINDOW, KERNEL_MAP):") and not column.search("I[j, UNMAP] != 0")
    assert not column.search("if I[i, MAP] == I[j, MAP]:")  # (two members' maps: no code named)


@pytest.mark.parametrize("name, cls, loss, params", [
    ("raker", Raker, "squared", {}), ("raker", Raker, "hinge", {"reg": 1e-3}),
    ("adaraker", AdaRaker, "squared", {}),
    ("adaraker", AdaRaker, "hinge", {"restart_share": "interval", "step_schedule": "inverse sqrt"})])
def test_random_feature_multikernel_runs_in_autos_engine_as_its_own_path_would(monkeypatch, name, cls, loss, params):
    """Raker and AdaRaker (the "fourier kernels" map with the "exponential weights" step): the
    engine's member equals the member on its own Python path, bit for bit: decisions, weights,
    exponents and stats, AdaRaker's restarts included (instances restart every 8 x 2^k rounds)."""
    X, y = friedman_regression(400) if loss == "squared" else okl.load_dataset("german")
    X, y = X[:400], y[:400]
    m, out, member = _auto_with(name, X, y, 250, loss=loss, **params)
    assert m.diagnostics()["members_outside_engine"] == 0 and member.stats_[0] == 400
    monkeypatch.setattr(cls, "composition", ())
    m2, out2, member2 = _auto_with(name, X, y, 250, loss=loss, **params)
    assert m2.diagnostics()["members_outside_engine"] == 1
    assert np.array_equal(out, out2)
    for attr in cls._state_attrs:
        assert np.array_equal(getattr(member, attr), getattr(member2, attr)), attr
    assert not np.array_equal(member.theta_, 0.0 * member.theta_)

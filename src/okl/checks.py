"""Generic checks every registered learner must pass (River's ``check_estimator`` pattern).

:func:`check_learner` runs each check of :func:`yield_checks` (:func:`plan`, with data bound) on a learner and raises
``AssertionError`` naming the first that fails; the tests (``tests/test_learner_checks.py``) run
them over every registered learner, and a new learner can be run through them the same way::

    >>> from okl import checks
    >>> [(check.__name__, case.label, extra) for check, case, extra in checks.plan("linear")][:3]
    [('check_run_equals_per_instance_loop', 'linear-classification', ()), ('check_run_in_pieces_equals_one_run', 'linear-classification', ()), ('check_save_load_continues_identically', 'linear-classification', (10,))]
    >>> checks.check_learner("linear")   # doctest: +SKIP
    >>> from okl.learners import LinearOGD
    >>> checks.registered_names(LinearOGD)   # a registered class, or an instance, works too
    ['linear']

Streaming learners (``okl.learners(kind="streaming")``), on a short permuted prefix of real data
(german for classification, cpusmall for regression) with a small budget, so every stage and
update round is exercised:

* ``run`` gives the same decisions as the per-instance ``predict_one``/``learn_one`` loop (1e-9),
  and a run in pieces equals one run;
* a model saved at round t, loaded and continued, equals an uninterrupted run (at two cut points,
  in the first stage and after it);
* the same ``random_state`` gives identical decisions; ``predict_one`` changes nothing;
* bad input (NaN, wrong width, labels outside {-1, +1}) raises ValueError and leaves the learner
  exactly as it was;
* invalid hyperparameters raise ValueError naming the parameter;
* where the learner learns its input scale (:mod:`okl.scaling`: the library default unless a
  kernel is given), a per-feature positive affine map of the input (x_j -> a_j x_j + b_j, a_j
  log-uniform in 1e-3 .. 1e4, |b_j| up to 50 a_j) leaves every decision unchanged to 1e-7.

Feature-evolvable learners (``okl.learners(kind="evolvable")``), on an OPFES stream made from
german: ``run`` equals the per-instance loop, the same seed gives the same numbers, predicting
changes nothing, bad rounds raise ValueError and leave the state as it was, invalid
hyperparameters raise. They have no model files, so there is no save/load check for them.

Test parameters. Each configuration starts from generic ones (``random_state=0``, a small
budget, the horizon, a given RBF width or none so the learner chooses its own); a learner class
may declare its own as a classmethod ``_unit_test_params()`` yielding dicts of hyperparameters
(River's convention), each of which is then checked in addition, over the generic ones.
"""

from __future__ import annotations

import inspect
import tempfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from okl.data.registry import load_dataset, permutation
from okl.kernels import RBF
from okl.runtime.base import Learner, StateError, accepts, learner_class, learner_kind, learners, make
from okl.runtime.hyperparameters import param_names

#: rows of the classification (german) and regression (cpusmall) prefixes
N_CLASSIFICATION = 400
N_REGRESSION = 300
#: the budget of every budgeted learner in the checks
BUDGET = 20
#: save/load cut points: inside the first stage (half the budget) and after it
CUTS = (BUDGET // 2, 250)
#: generic small settings of the feature-evolvable learners (where accepted)
EVOLVABLE_SMALL = {"n_old_features": 20, "n_new_features": 20, "kom_iterations": 15, "budget": 12,
                   "sigma": 0.5, "step_size": 3.0}
#: rows of german for the feature-evolvable stream, and its evolving-stage length
N_EVOLVABLE, EVOLVING_LENGTH = 160, 16


@dataclass(frozen=True)
class Case:
    """One configuration of a learner to check: its hyperparameters and the data it runs on."""

    name: str
    task: str = "classification"  # or "regression"
    width: str = "given"  # "given": RBF(sigma=1); "chosen": no kernel, the learner picks its width
    extra: dict = field(default_factory=dict)  # from the class's _unit_test_params()

    @property
    def label(self) -> str:
        parts = [self.name, self.task] + (["chosen-width"] if self.width == "chosen" else [])
        parts += [f"{k}={v}" for k, v in sorted(self.extra.items())]
        return "-".join(parts)

    def params(self, n: int) -> dict[str, Any]:
        """The hyperparameters of this case for a stream of ``n`` rounds."""
        name = self.name
        if learner_kind(name) == "evolvable":
            accepted = inspect.signature(learner_class(name, kind=None).__init__).parameters
            params = {k: v for k, v in EVOLVABLE_SMALL.items() if k in accepted}
            params["random_state"] = 3
            return {**params, **self.extra}
        params: dict[str, Any] = {"random_state": 0}
        if accepts(name, "budget"):
            params["budget"] = BUDGET
        if accepts(name, "horizon"):
            params["horizon"] = n
        if accepts(name, "kernel") and self.width == "given":
            params["kernel"] = RBF(sigma=1.0)
        if self.task == "regression":
            params["loss"] = "squared"
        return {**params, **self.extra}


def _declared(name: str) -> list[dict]:
    hook = getattr(learner_class(name, kind=None), "_unit_test_params", None)
    return [dict(p) for p in hook()] if hook is not None else []


def cases(name: str) -> list[Case]:
    """The configurations :func:`check_learner` checks for registered learner ``name``."""
    extras = [{}] + _declared(name)
    if learner_kind(name) == "evolvable":
        return [Case(name, extra=e) for e in extras]
    out = []
    for extra in extras:
        out.append(Case(name, "classification", "given", extra))
        if accepts(name, "kernel"):
            out.append(Case(name, "classification", "chosen", extra))
        if accepts(name, "loss"):
            try:
                make(name, **Case(name, "regression", "given", extra).params(10))
            except ValueError:  # a classification-only learner
                continue
            out.append(Case(name, "regression", "given", extra))
            if accepts(name, "kernel"):
                out.append(Case(name, "regression", "chosen", extra))
    return out


# ---- data ------------------------------------------------------------------------------------

_DATA: dict = {}


def data_for(case: Case, data_dir=None):
    """The stream a case runs on: (X, y) prefixes of german / cpusmall in the order of
    permutation 0, or an OPFES stream made from german for a feature-evolvable learner."""
    key = (learner_kind(case.name), case.task, None if data_dir is None else str(data_dir))
    if key not in _DATA:
        if key[0] == "evolvable":
            from okl.evolvable.stream import make_evolvable_stream

            X, y = load_dataset("german", data_dir)
            _DATA[key] = make_evolvable_stream(X[:N_EVOLVABLE], y[:N_EVOLVABLE], seed=1,
                                               evolving_length=EVOLVING_LENGTH)
        elif case.task == "regression" and data_dir is None and not _found("cpusmall"):
            _DATA[key] = friedman_regression(N_REGRESSION)  # (no data directory: a generated stream)
        else:
            name, n = ("cpusmall", N_REGRESSION) if case.task == "regression" else ("german", N_CLASSIFICATION)
            X, y = load_dataset(name, data_dir)
            p = permutation(len(y), 0)[:n]
            _DATA[key] = (X[p], y[p])
    return _DATA[key]


def _found(name: str) -> bool:
    from okl.data.registry import find_files

    return bool(find_files(name, None))


def friedman_regression(n: int, seed: int = 0):
    """Friedman's regression stream #1 (Friedman 1991): x uniform on [0, 1]^10, y = 10 sin(pi x1 x2)
    + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5 + N(0, 1), scaled to [0, 1] as okl's registered targets are
    (by the function's range, -1..31, not by the sample). The regression checks' stream when
    cpusmall is not at hand (okl's bundled data is german only), so :func:`check_learner` runs
    anywhere."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 10))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    y = (y + rng.normal(size=n) + 1.0) / 32.0
    return X, y


# ---- helpers ---------------------------------------------------------------------------------

def per_instance_decisions(learner, X, y) -> np.ndarray:
    """The decisions of the per-instance loop: ``predict_one(x_t)`` then ``learn_one(x_t, y_t)``
    for every row, in order (what ``run`` must equal)."""
    out = np.empty(len(y))
    for t in range(len(y)):
        out[t] = learner.predict_one(X[t])
        learner.learn_one(X[t], y[t])
    return out


def _plan_constants(plan) -> dict[str, Any]:
    """A compiled plan's constants (numbers, names and tuples of them; not its arrays)."""
    import dataclasses

    def simple(v):
        return v is None or isinstance(v, (bool, int, float, str)) or (
            isinstance(v, tuple) and all(simple(u) for u in v))

    return {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan) if simple(getattr(plan, f.name))}


def overridden_methods(cls: type) -> list[str]:
    """The methods (and properties) that classes of ``cls``'s lineage written outside okl define
    over an okl base class that defines ``compiled_plan``, other than ``compiled_plan`` itself
    (empty when the subclass writes its own plan, or when okl's class is the learner)."""
    mro = cls.__mro__
    base = next((c for c in mro if c.__module__.split(".")[0] == "okl" and "compiled_plan" in vars(c)), None)
    if base is None:
        return []
    own = mro[:mro.index(base)]
    if any("compiled_plan" in vars(c) for c in own):
        return []
    return sorted({k for c in own for k, v in vars(c).items()
                   if not k.startswith("__") and (callable(v) or isinstance(v, property)) and hasattr(base, k)})


def frozen_plan_note(name: str, params: dict, X, y) -> str:
    """Why ``run`` and the per-event loop may differ for a learner with a compiled plan: the
    constants of :meth:`compiled_plan` that change over the stream (a plan is built once per stage
    and keeps them, so a value that moves with the state is frozen there) and the methods a subclass
    overrides under an inherited plan. Empty when there is nothing to say."""
    learner = make(name, **params)
    if not hasattr(learner, "compiled_plan"):
        return ""
    first = last = None
    first_round = 0
    for t in range(len(y)):
        learner.predict_one(X[t])
        learner.learn_one(X[t], y[t])
        if learner.started_:
            try:
                plan = learner.compiled_plan()
            except Exception:  # noqa: BLE001  (a plan that cannot be built now: nothing to compare)
                plan = None
            if plan is None:
                continue
            constants = _plan_constants(plan)
            if first is None:
                first, first_round = constants, t + 1
            last = constants
    changed = [k for k in first or {} if k in last and first[k] != last[k]] if first else []
    parts = []
    if changed:
        def short(v):
            return f"{v:.4g}" if isinstance(v, float) else repr(v)

        shown = ", ".join(f"{k}: {short(first[k])} at round {first_round}, {short(last[k])} at round {len(y)}"
                          for k in changed)
        parts.append(f"the compiled plan of {type(learner).__name__} freezes {', '.join(changed)} ({shown}): "
                     "the per-event path builds the plan once per stage and keeps its constants")
    overrides = overridden_methods(type(learner))
    if overrides:
        parts.append(f"{type(learner).__name__} overrides {', '.join(overrides)} but inherits compiled_plan "
                     "(which the per-event path and auto's engine run): override compiled_plan to follow it, or "
                     "keep the value fixed over the stream")
    return "; ".join(parts)


def assert_close(a, b, what: str, tol: float = 1e-9) -> None:
    """``a`` and ``b`` agree to ``tol`` relative to the largest |a| (at least 1)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{what}: shapes {a.shape} and {b.shape}"
    scale = max(1.0, float(np.abs(a).max(initial=0.0)))
    err = float(np.abs(a - b).max(initial=0.0))
    assert err <= tol * scale, f"{what}: max difference {err:.3g}"


def _raises(exc: type[BaseException], match: str, func: Callable, *args, **kwargs) -> None:
    import re

    try:
        func(*args, **kwargs)
    except exc as e:
        assert re.search(match, str(e)), f"{func.__name__}: {exc.__name__} {str(e)!r} does not match {match!r}"
    else:
        raise AssertionError(f"{func.__name__} did not raise {exc.__name__} (expected one matching {match!r})")


# ---- streaming learners ----------------------------------------------------------------------

def check_run_equals_per_instance_loop(name: str, params: dict, X, y) -> None:
    trace = make(name, **params).run(X, y)
    assert trace.decisions.shape == (len(y),), f"{name}: decisions of shape {trace.decisions.shape}"
    assert np.isfinite(trace.decisions).all(), f"{name}: non-finite decisions"
    loop = per_instance_decisions(make(name, **params), X, y)
    try:
        assert_close(trace.decisions, loop, f"{name}: run vs loop")
    except AssertionError as exc:
        note = frozen_plan_note(name, params, X, y)
        raise AssertionError(f"{exc}{'; ' + note if note else ''}") from None


def check_run_in_pieces_equals_one_run(name: str, params: dict, X, y) -> None:
    whole = make(name, **params).run(X, y).decisions
    m = make(name, **params)
    parts = [m.run(X[a:b], y[a:b]).decisions for a, b in ((0, 7), (7, 150), (150, len(y)))]
    assert_close(whole, np.concatenate(parts), f"{name}: run in pieces")


def check_save_load_continues_identically(name: str, params: dict, X, y, cut: int = CUTS[0],
                                          directory=None) -> None:
    whole = make(name, **params).run(X, y).decisions
    m = make(name, **params)
    m.run(X[:cut], y[:cut])
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        path = Path(tmp) / "model.npz"
        try:
            m.save(path)
        except StateError as exc:  # state the learner's spec does not declare (named by save)
            raise AssertionError(f"{name}: save() refused: {exc}") from None
        loaded = Learner.load(path)
    assert type(loaded) is type(m), f"{name}: loaded a {type(loaded).__name__}"
    assert loaded.get_params().keys() == m.get_params().keys(), f"{name}: hyperparameters differ after load"
    assert loaded.n_seen_ == cut, f"{name}: n_seen_ {loaded.n_seen_} after load, saved at {cut}"
    assert_close(whole[cut:], loaded.run(X[cut:], y[cut:]).decisions, f"{name}: save/load at {cut}")


def check_affine_input_map_keeps_decisions(name: str, params: dict, X, y) -> None:
    """A per-feature positive affine map of the input changes no decision (up to rounding): the
    input scale learned from the first rows follows the map (:mod:`okl.scaling`)."""
    rng = np.random.default_rng(7)
    a = 10.0 ** rng.uniform(-3.0, 4.0, X.shape[1])
    b = a * rng.uniform(-50.0, 50.0, X.shape[1])
    m = make(name, **params)
    assert m.inputs.scales_input(m), f"{name}: does not learn its input scale with {params}"
    plain = m.run(X, y).decisions
    mapped = make(name, **params).run(np.ascontiguousarray(X * a + b), y).decisions
    assert_close(plain, mapped, f"{name}: decisions after x_j -> a_j x_j + b_j", tol=1e-7)


def check_same_random_state_same_numbers(name: str, params: dict, X, y) -> None:
    """Same ``random_state``, same decisions; ``predict_one`` changes nothing."""
    a = make(name, **params)
    a.run(X[:200], y[:200])
    before = a.predict_one(X[200])
    assert a.predict_one(X[200]) == before, f"{name}: predict_one changed the learner"
    rest_a = a.run(X[200:], y[200:]).decisions
    b = make(name, **params)
    rest_b = np.concatenate([b.run(X[:200], y[:200]).decisions, b.run(X[200:], y[200:]).decisions])
    assert np.array_equal(rest_a, rest_b[200:]), f"{name}: the same random_state gave other numbers"


def check_bad_input_keeps_state(name: str, params: dict, X, y) -> None:
    ref_dec = make(name, **params).run(X, y).decisions
    m = make(name, **params)
    m.run(X[:100], y[:100])
    bad_x = X[100].copy()
    bad_x[3] = np.nan
    _raises(ValueError, "non-finite", m.learn_one, bad_x, y[100])
    _raises(ValueError, "features", m.learn_one, X[100, :-1], y[100])
    _raises(ValueError, "features", m.run, X[100:110, :-1], y[100:110])
    if m.task == "classification":
        _raises(ValueError, "-1 or \\+1", m.learn_one, X[100], 0.5)
        _raises(ValueError, "-1 or \\+1", m.run, X[100:110], np.zeros(10))
    _raises(ValueError, "non-finite", m.learn_one, X[100], np.inf)
    assert_close(ref_dec[100:], m.run(X[100:], y[100:]).decisions, f"{name}: state after bad input")


#: an invalid value per common hyperparameter, and what the error must name
BAD_HYPERPARAMETERS = {"budget": 0, "eta": -1.0, "k": 0, "alpha": -1.0, "C": 0.0, "loss": "nope", "kernel": "nope",
                       "categorical": [-1]}


def check_invalid_hyperparameters(name: str) -> None:
    """Each invalid common hyperparameter the learner takes raises ValueError naming it."""
    if learner_kind(name) == "evolvable":
        cls = learner_class(name, kind=None)
        for param, value, match in (("step_size", -1.0, "step_size"), ("reg", float("nan"), "reg"),
                                    ("random_state", -3, "random_state")):
            _raises(ValueError, match, cls, **{param: value})
        return
    cls = learner_class(name)
    declared = {h.name: h for h in cls.hyperparameters}
    if declared:  # every declared hyperparameter (okl.runtime.hyperparameters), and no undeclared one
        missing = set(param_names(cls)) - set(declared)
        assert not missing, (f"{name}: hyperparameters {sorted(missing)} are not declared in "
                             f"{cls.__name__}.hyperparameters")
        bad = {h.name: h.invalid() for h in declared.values() if h.invalid() is not None}
    else:  # a learner without declarations: the common names it takes
        bad = {p: v for p, v in BAD_HYPERPARAMETERS.items() if accepts(name, p)}
    for param, value in bad.items():
        _raises(ValueError, param if param not in ("loss", "kernel") else "must be|unknown", make, name,
                **{param: value})
    assert bad or not param_names(cls), f"{name}: no hyperparameter checked"


# ---- feature-evolvable learners --------------------------------------------------------------

def check_evolvable_run_equals_per_instance_loop(name: str, params: dict, stream) -> None:
    """``run`` equals the per-instance loop; ``predict_one`` changes nothing; same seed, same numbers."""
    ref = make(name, **params).run(stream)
    loop = make(name, **params)
    decisions = []
    for _, x1, x2, y in stream.rows():
        f = loop.predict_one(x1=x1, x2=x2)
        assert loop.predict_one(x1=x1, x2=x2) == f, f"{name}: predict_one changed the learner"
        decisions.append(f)
        loop.learn_one(x1=x1, x2=x2, y=y)
    assert_close(decisions, ref.decisions, f"{name}: run vs loop")
    again = make(name, **params).run(stream)
    assert np.array_equal(again.decisions, ref.decisions), f"{name}: the same random_state gave other numbers"


def check_evolvable_bad_rounds_keep_state(name: str, params: dict, stream) -> None:
    rows = list(stream.rows())
    m, cut = make(name, **params), stream.T1 + 3
    for _, x1, x2, y in rows[:cut]:
        m.learn_one(x1=x1, x2=x2, y=y)
    x1, x2 = rows[0][1], rows[stream.T1][2]
    _raises(ValueError, "went back", m.learn_one, x1=x1, y=1.0)
    _raises(ValueError, "dimension may change only", m.learn_one, x1=x1, x2=np.append(x2, 0.5), y=1.0)
    _raises(ValueError, "non-finite", m.learn_one, x1=np.where(np.arange(x1.size) == 0, np.inf, x1), x2=x2, y=1.0)
    _raises(ValueError, "-1 or \\+1", m.learn_one, x1=x1, x2=x2, y=0.0)
    _raises(ValueError, "needs x1", m.learn_one, y=1.0)
    fresh = make(name, **params)
    for _, x1, x2, y in rows[:cut]:
        fresh.learn_one(x1=x1, x2=x2, y=y)
    got = [(m.predict_one(x1=a, x2=b), m.learn_one(x1=a, x2=b, y=c))[0] for _, a, b, c in rows[cut:]]
    want = [(fresh.predict_one(x1=a, x2=b), fresh.learn_one(x1=a, x2=b, y=c))[0] for _, a, b, c in rows[cut:]]
    assert_close(want, got, f"{name}: state after bad rounds")


# ---- the suite -------------------------------------------------------------------------------

STREAMING_CHECKS = (check_run_equals_per_instance_loop, check_run_in_pieces_equals_one_run,
                    check_save_load_continues_identically, check_same_random_state_same_numbers,
                    check_bad_input_keeps_state, check_affine_input_map_keeps_decisions)
EVOLVABLE_CHECKS = (check_evolvable_run_equals_per_instance_loop, check_evolvable_bad_rounds_keep_state)


def plan(name: str) -> list[tuple[Callable[..., None], Case, tuple]]:
    """(check, case, extra arguments) for registered learner ``name``, before any data is loaded
    (the save/load check once per cut of :data:`CUTS`); :func:`check_invalid_hyperparameters`
    comes on top, once per learner."""
    out = []
    for case in cases(name):
        for check in (EVOLVABLE_CHECKS if learner_kind(name) == "evolvable" else STREAMING_CHECKS):
            if check is check_save_load_continues_identically:
                out += [(check, case, (cut,)) for cut in CUTS]
            elif check is check_affine_input_map_keeps_decisions:
                # the cases whose learner learns its input scale (no kernel given, or none taken)
                probe = make(name, **case.params(10))
                if probe.inputs.scales_input(probe):
                    out.append((check, case, ()))
            else:
                out.append((check, case, ()))
    return out


def bind(check: Callable[..., None], case: Case, extra: tuple = (), data_dir=None) -> Callable[[], None]:
    """``check`` with its learner, the case's hyperparameters and data bound (call it to run it)."""
    data = data_for(case, data_dir)
    if isinstance(data, tuple):
        X, y = data
        return _bound(check, case.name, case.params(len(y)), X, y, *extra)
    return _bound(check, case.name, case.params(data.n_rounds), data, *extra)


def yield_checks(name: str, data_dir=None) -> Iterator[tuple[Callable[[], None], Case | None]]:
    """(check, case) pairs for registered learner ``name``: call ``check()`` to run one (each is a
    ``functools.partial`` with its learner, hyperparameters and data bound)."""
    for check, case, extra in plan(name):
        yield bind(check, case, extra, data_dir), case
    yield _bound(check_invalid_hyperparameters, name), None


def _bound(check, *args):
    bound = partial(check, *args)
    bound.__name__ = check.__name__
    return bound


def registered_names(learner) -> list[str]:
    """The registered names of ``learner``: a name, a learner class (every name it is registered
    under: a class may back several variants) or an instance (the name it was made under, else its
    class's). ValueError for a class that is not registered: the checks build learners by name, and
    a model file names its learner, so :func:`okl.register` comes first."""
    if isinstance(learner, str):
        learner_class(learner, kind=None)  # (an unknown name fails here, listing the registered ones)
        return [learner]
    own = getattr(learner, "name", None) if not isinstance(learner, type) else None
    cls = learner if isinstance(learner, type) else type(learner)
    names = [n for n in learners() if learner_class(n, kind=None) is cls]
    if isinstance(own, str) and own in names:
        return [own]
    if not names:
        raise ValueError(f"{cls.__name__} is not a registered learner; register it first "
                         f"(@okl.register('name') on the class): the checks make it by name and "
                         "its model files name it")
    return names


def check_learner(learner, data_dir=None) -> None:
    """Run every check of :func:`yield_checks` on a learner: a registered name, a registered class
    (each name it is registered under) or an instance of one (AssertionError, naming the check
    and the configuration, at the first that fails). Runs with no data directory: german is
    bundled, and the regression checks take :func:`friedman_regression` where cpusmall is not
    found."""
    for name in registered_names(learner):
        for check, case in yield_checks(name, data_dir):
            try:
                check()
            except Exception as exc:  # (any error of a broken learner fails the check, named)
                where = f" [{case.label}]" if case is not None else ""
                what = "" if isinstance(exc, AssertionError) else f"{type(exc).__name__}: "
                raise AssertionError(f"{name}: {check.__name__}{where}: {what}{exc}") from exc


__all__ = ["BAD_HYPERPARAMETERS", "BUDGET", "CUTS", "Case", "EVOLVABLE_CHECKS", "STREAMING_CHECKS",
           "assert_close", "per_instance_decisions", "bind", "cases", "plan", "check_bad_input_keeps_state",
           "check_evolvable_bad_rounds_keep_state", "check_evolvable_run_equals_per_instance_loop",
           "check_invalid_hyperparameters", "check_learner", "check_affine_input_map_keeps_decisions", "check_run_equals_per_instance_loop",
           "check_run_in_pieces_equals_one_run", "check_same_random_state_same_numbers", "frozen_plan_note",
           "overridden_methods",
           "check_save_load_continues_identically", "data_for", "friedman_regression", "registered_names",
           "yield_checks"]

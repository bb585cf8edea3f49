"""A learner written outside okl's package from its component table (docs/adding-a-learner.md): once
registered it passes the generic checks, takes the compiled per-event plan, joins auto's engine as a
member (one output and K outputs) and round-trips through a model file, with no edit in okl."""

import numpy as np
import pytest

import okl
from okl.checks import check_learner
from okl.ensemble.auto import default_pool
from okl.components.maps.expansion import expansion_decision
from okl.runtime.base import Arr, Learner, Num, StateSpec, register
from okl.components import Plan
from okl.runtime.events import fast_plan_of
from okl.runtime.hyperparameters import BUDGET, KERNEL_LEARNER, accept
from okl.runtime.multiclass import MultiClass


@register("test-sliding-perceptron")
class SlidingPerceptron(Learner):
    """A kernel perceptron on the last ``budget`` margin errors (a contributor's learner).

    Parameters
    ----------
    budget : int, default 50
        Margin errors kept.
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Unused.
    """

    hyperparameters = (BUDGET, *KERNEL_LEARNER)
    _state_attrs = ("SV_", "alpha_", "added_", "n_outputs_")
    _output_attrs = {"alpha_": -1.0}

    def __init__(self, *, budget: int = 50, loss="hinge", kernel=None, center_targets: bool = True,
                 scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())

    def _state_spec(self):
        return StateSpec(fields={"SV_": Arr((self.budget, "dim")), "alpha_": Arr(self.heads.out_shape(self, self.budget)),
                                 "added_": Num(int, 0, "n_seen"), "n_outputs_": Num(int, 0, 1000)})

    def _start(self, dim):
        self.SV_ = np.zeros((self.budget, dim))
        self.alpha_ = np.zeros(self.heads.out_shape(self, self.budget))
        self.added_ = 0

    @classmethod
    def runs_in_engine(cls, params):
        return True

    def compiled_plan(self):
        return Plan("expansion", "support", SV="SV_", w="alpha_", counts="added_", budget=self.budget,
                    budget_rule="replace oldest", kernel=self.kernel_.spec(), eta=1.0)

    def _decision(self, x):
        return expansion_decision(*self.kernel_.spec(), self.SV_, self.alpha_, min(self.added_, self.budget), x)

    def _process(self, X, y):
        out = np.empty(X.shape[0])
        for i in range(X.shape[0]):  # (Python: the plan is what makes it fast per event)
            f = out[i] = self._decision(X[i])
            g = self.loss_.derivative(f, y[i])
            if g != 0.0:
                slot = self.added_ % self.budget
                self.SV_[slot] = X[i]
                self.alpha_[slot] = -1.0 * g
                self.added_ += 1
        return out


def test_contributed_learner_passes_the_checks_and_runs_compiled_everywhere(tmp_path):
    check_learner(SlidingPerceptron)
    X, y = okl.load_dataset("german")
    ref = okl.make("test-sliding-perceptron").run(X, y)
    m = okl.make("test-sliding-perceptron")
    d = []
    for i in range(len(y)):
        d.append(m.predict_one(X[i]))
        m.learn_one(X[i], float(y[i]))
    assert type(fast_plan_of(m)).__name__ == "FastPlan"  # the compiled per-event plan took it
    np.testing.assert_allclose(d, ref.decisions, rtol=0, atol=1e-12)
    assert ref.mistake_rate < 35.0
    m.save(tmp_path / "p.npz")
    assert np.array_equal(Learner.load(tmp_path / "p.npz").run(X[:100], y[:100]).decisions,
                          m.run(X[:100], y[:100]).decisions)
    a = okl.make("auto", members=[*default_pool("classification"), ("test-sliding-perceptron", 1.0, {})],
                 random_state=0)
    a.run(X, y)
    assert a._engine().py == []  # an engine member, not a Python one
    k = np.digitize(X[:, 1], np.quantile(X[:, 1], [1 / 3, 2 / 3])).astype(float)
    multi = MultiClass("test-sliding-perceptron", random_state=0).run(X, k)
    assert multi.mistake_rate < 100.0 * (1.0 - np.bincount(k.astype(int)).max() / len(k))


def test_a_plan_names_what_it_lacks():
    with pytest.raises(ValueError, match=r"the 'kernel' map with the 'adagrad' step needs \['LT', 'P', 'A'\]"):
        Plan("kernel", "adagrad", w="w_")
    with pytest.raises(ValueError, match="map must be one of"):
        Plan("nope", "ogd", w="w_")
    with pytest.raises(ValueError, match=r"merge_above must be a kernel value in \(0, 1\]"):
        Plan("expansion", "support", SV="SV_", w="a", counts="m_", budget=3, merge_above=1.5)

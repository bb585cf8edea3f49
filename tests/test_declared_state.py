"""Declared state enforced: save() refuses a learner holding learned state (a trailing-underscore
attribute) that its spec does not declare, naming it, and okl.checks.check_learner fails on it;
a subclass whose inherited compiled plan freezes a value it overrides is named by the check."""

import os

import numpy as np
import pytest

import okl
from okl.checks import check_learner, frozen_plan_note, overridden_methods
from okl.learners.klms import KLMS
from okl.runtime import registry
from okl.runtime.base import Learner, StateError, register


class CountingKLMS(KLMS):
    """KLMS that counts its blocks in an attribute it does not declare (a contributor's slip)."""

    def _process(self, X, y):
        self.blocks_ = getattr(self, "blocks_", 0) + 1
        return super()._process(X, y)


class DecayKLMS(KLMS):
    """KLMS whose step decays with the rounds seen, under KLMS's plan (which builds eta once)."""

    def _step(self):
        return super()._step() / (1.0 + self.n_seen_ / 100.0)


@pytest.fixture
def faulty():
    """The two faulty learners, registered for one test only (so the suite's loops over
    okl.learners() never meet them)."""
    names = {"test-klms-counting": CountingKLMS, "test-klms-decay": DecayKLMS}
    for name, cls in names.items():
        register(name)(cls)
    yield
    for name in names:
        registry._BY_KIND["streaming"].pop(name)


def test_save_refuses_undeclared_state_and_names_it(tmp_path):
    X, y = okl.load_dataset("german")
    m = okl.make("klms", random_state=0)
    m.run(X[:100], y[:100])
    path = tmp_path / "m.okl"
    m.save(path)  # declared state only: written, and loads
    before = Learner.load(path).predict_one(X[200])
    m.hidden_state_ = np.ones(3)
    m.other_ = 1
    os.remove(path)
    with pytest.raises(StateError, match=r"state hidden_state_: is state that KLMS does not declare.*"
                                         r"also undeclared: other_") as info:
        m.save(path)
    assert info.value.field == "hidden_state_"
    assert not path.exists() and os.listdir(tmp_path) == []  # nothing half-written
    del m.hidden_state_, m.other_
    m._private_cache_ = 3  # private names and untrailed names are not state
    m.note = "x"
    m.save(path)
    assert Learner.load(path).predict_one(X[200]) == before


def test_check_learner_names_the_undeclared_attribute(faulty):
    with pytest.raises(AssertionError, match=r"check_save_load_continues_identically.*save\(\) refused: "
                                             r"state blocks_: is state that CountingKLMS does not declare"):
        check_learner("test-klms-counting")


def test_check_learner_names_a_frozen_plan_constant_and_the_override(faulty):
    with pytest.raises(AssertionError) as info:
        check_learner("test-klms-decay")
    text = str(info.value)
    assert "run vs loop: max difference" in text
    assert "the compiled plan of DecayKLMS freezes eta (eta: 0.495 at round 1, 0.1 at round 400)" in text
    assert "DecayKLMS overrides _step but inherits compiled_plan" in text
    assert overridden_methods(DecayKLMS) == ["_step"]
    assert overridden_methods(KLMS) == []  # okl's own learner: nothing to say
    X, y = okl.load_dataset("german")
    assert frozen_plan_note("klms", {"random_state": 0}, X[:200], y[:200]) == ""

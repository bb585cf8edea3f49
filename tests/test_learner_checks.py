"""The generic check suite (:mod:`okl.checks`, River's ``check_estimator`` pattern), run over every
registered learner, streaming and feature-evolvable: one test per learner, configuration and check.

What each check asserts is in :mod:`okl.checks`: run == per-instance loop, a run in pieces ==
one run, save/load continues identically (streaming learners), same seed same numbers and a
pure ``predict_one``, bad input raises and keeps the state, invalid hyperparameters raise.
"""

from __future__ import annotations

import numpy as np
import pytest

import okl
from okl import checks


def _collect():
    out = []
    for name in okl.learners():
        for check, case, extra in checks.plan(name):
            out.append(pytest.param(check, case, extra, id="-".join([case.label, check.__name__, *map(str, extra)])))
    return out


@pytest.mark.parametrize("check,case,extra", _collect())
def test_generic_check(check, case, extra, data_dir_if_present):
    """On german and cpusmall prefixes; without the benchmark files, Friedman's stream #1 for regression."""
    checks.bind(check, case, extra, data_dir_if_present)()


@pytest.mark.parametrize("name", okl.learners())
def test_invalid_hyperparameters_are_rejected(name):
    checks.check_invalid_hyperparameters(name)


def test_every_registered_learner_has_checks():
    assert "opfes" in okl.learners() and set(okl.learners()) == set(okl.learners(kind="streaming")) | set(
        okl.learners(kind="evolvable"))
    for name in okl.learners():
        assert checks.cases(name), name


def test_a_failing_check_names_the_check_and_the_case(monkeypatch):
    def check_broken(*args):
        raise AssertionError("boom")

    monkeypatch.setattr(checks, "STREAMING_CHECKS", (check_broken,))
    with pytest.raises(AssertionError, match="check_broken \\[linear-classification\\]: boom"):
        checks.check_learner("linear")


def test_check_learner_takes_a_class_or_an_instance_and_runs_without_a_data_directory(monkeypatch):
    """A registered class (or an instance of one) is checked under its registered names; with no
    data directory the regression checks take Friedman's stream #1 (german is bundled); an
    unregistered class is refused naming okl.register. A broken learner still fails by name."""
    from okl.learners import LinearOGD

    assert checks.registered_names(LinearOGD) == ["linear"]
    assert checks.registered_names(okl.make("linear")) == ["linear"]
    assert checks.registered_names("nogd") == ["nogd"]

    class Unregistered(LinearOGD):
        pass

    with pytest.raises(ValueError, match=r"Unregistered is not a registered learner.*okl.register"):
        checks.check_learner(Unregistered)
    monkeypatch.setenv("OKL_DATA", "/nonexistent")  # (no cpusmall anywhere: the generated stream)
    monkeypatch.setattr(checks, "_DATA", {})
    X, y = checks.data_for(checks.Case("linear", "regression"))
    assert X.shape == (checks.N_REGRESSION, 10) and 0.0 < y.min() < y.max() < 1.0
    X2, y2 = checks.friedman_regression(checks.N_REGRESSION)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    checks.check_learner(LinearOGD)  # every check of every case, classification and regression

    def check_broken(*args):
        raise AssertionError("boom")

    monkeypatch.setattr(checks, "STREAMING_CHECKS", (check_broken,))
    with pytest.raises(AssertionError, match="linear: check_broken \\[linear-classification\\]: boom"):
        checks.check_learner(okl.make("linear"))


@pytest.mark.parametrize("name", okl.learners(kind="streaming"))
def test_help_documents_every_parameter_of_the_constructor(name):
    """Every constructor parameter of a streaming learner is documented in its class docstring,
    the parameters several learners share included (written once, okl.runtime.base.
    SHARED_PARAMETER_DOCS, and filled in where a docstring names them)."""
    import inspect
    import re

    cls = type(okl.make(name))
    doc = cls.__doc__ or ""
    assert not re.search(r"^\s*\[\[[a-z_, ]+\]\]\s*$", doc, re.M)  # every shared-parameter line filled in
    for param in inspect.signature(cls.__init__).parameters:
        if param not in ("self", "kwargs", "args"):
            assert re.search(rf"\b{param}\b", doc), f"{name}: {param} not in help({cls.__name__})"
    if "center_targets" in inspect.signature(cls.__init__).parameters:
        assert "Regression: " in doc.split("center_targets", 1)[1][:200]  # its text, not only its name

"""Hyperparameters declared once (okl.runtime.hyperparameters): every stream learner declares each
of its constructor's parameters, the declaration validates, documents and feeds the generic checks,
select_params and the command line."""

import re

import numpy as np
import pytest

import okl
from okl.runtime.hyperparameters import BUDGET, ETA, Hyper, describe
from okl.runtime.registry import learner_class, select_params
from okl.runtime.hyperparameters import param_names


@pytest.mark.parametrize("name", okl.learners(kind="streaming"))
def test_every_parameter_is_declared_and_documented(name):
    cls = learner_class(name)
    declared = [h.name for h in cls.hyperparameters]
    assert sorted(declared) == sorted(param_names(cls)), name
    assert len(set(declared)) == len(declared), name
    for h in cls.hyperparameters:
        assert re.search(rf"\b{re.escape(h.name)}\b", cls.__doc__ or ""), f"{name}: {h.name} not in its docstring"
    lines = describe(cls)
    assert len(lines) == len(declared) and all(line.startswith(h) for line, h in zip(lines, declared))


@pytest.mark.parametrize("name", okl.learners(kind="streaming"))
def test_each_declared_range_is_what_the_constructor_refuses(name):
    for h in learner_class(name).hyperparameters:
        bad = h.invalid()
        if bad is None:
            continue
        with pytest.raises(ValueError, match=h.name if h.kind not in ("loss", "kernel") else "must be|unknown"):
            okl.make(name, **{h.name: bad})


def test_declaration_checks_and_texts():
    assert BUDGET.check(3) == 3 and BUDGET.check(3.0) == 3
    with pytest.raises(ValueError, match=r"budget must be an integer in \[1, inf\], got 0"):
        BUDGET.check(0)
    assert BUDGET.range_text() == "an integer in [1, inf)"
    with pytest.raises(ValueError, match=r"eta must be in \(0.0, inf\), got 0.0"):
        ETA.check(0.0)
    assert ETA.invalid() == 0.0 and np.isnan(Hyper("x", "real", "").invalid())
    theta = Hyper("theta", "real", "", low=0.0, high=1.0, low_open=True, symbol="theta")
    assert theta.range_text() == "a real in (0, 1]" and theta.invalid() == 0.0 and theta.check(1.0) == 1.0
    opt = ETA.but(optional=True, none_means="the loss's default")
    assert opt.check(None) is None and opt.range_text().endswith("or None (the loss's default)")
    # FORKS's d is the SJLT's blocks, declared with its paper symbol and said not to be the input dimension
    d = {h.name: h for h in learner_class("forks").hyperparameters}["d"]
    assert d.symbol == "d" and "not the input dimension" in d.doc


def test_select_params_checks_the_declared_range_before_any_work():
    with pytest.raises(ValueError, match=r"eta must be in \(0.0, inf\), got -1"):
        select_params("nogd", {"eta": -1})
    with pytest.raises(ValueError, match="has no hyperparameter 'nope'"):
        select_params("nogd", {"nope": 1})
    assert select_params("nogd", {"eta": 0.5}, budget=20) == {"budget": 20, "eta": 0.5}

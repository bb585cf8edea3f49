"""The members of auto's engine whose step keeps its own dictionary and declares its state
(:mod:`okl.components.spec`: the KRLS family, KNLMS / KAP, BSGD, the budgeted expansions, KOGD,
EX-KRLS): their round through the generated dispatch (:mod:`okl.components.dispatch`), and the
one-output orchestration with them, which the engine's root for such pools compiles
(:func:`okl.engine.roots.engine_dictionaries`; the default pools' root does not)."""

from __future__ import annotations

from okl._compiled import jit, row_norm
from okl._jit import jit_inline
from okl.components import COLUMN_EXPANSION, EXPANSION, FIRST_DICTIONARY_STEP
from okl.components.dispatch import dictionary_round
from okl.components.spec import ROUND_IN_PYTHON
from okl.engine.columns import BUDGET, FAILED, KA, KB_, KC, KIND, LOSS, M, MAP, NOTHING, NSEEN, O_A, O_G, O_NRM, O_W, \
    STEP, UPDATE
from okl.engine.core import _learn_all, learn_one_output


@jit
def _dictionary_learn(F, I, R, j, x, y, f):
    """A member's step that keeps its own dictionary and declares its state
    (:mod:`okl.components.spec`) on row x with label / target y and decision f: the generated
    dispatch over those steps (:func:`okl.components.dispatch.dictionary_round`) on the rows of its
    map, then, for the expansion map, the stored rows' norms (a removal moves rows up; sparse rows'
    kernel values read them). Returns NOTHING, FAILED (no usable state) or UPDATE (the learner's
    Python takes the round: its ``_update_round``)."""
    B, d = I[j, BUDGET], x.shape[0]
    kind = int(R[j, KIND])
    o = I[j, O_A]
    rows = F[o:o + B * d].reshape((d, B) if I[j, MAP] == COLUMN_EXPANSION else (B, d))
    m = dictionary_round(I[j, STEP], F, I[j, O_G], rows, F[I[j, O_W]:I[j, O_W] + B], I[j, M], kind, R[j, KA],
                         R[j, KB_], R[j, KC], x, y, f, I[j, LOSS])
    if m == ROUND_IN_PYTHON:
        return UPDATE
    if m < 0:
        return FAILED
    I[j, NSEEN] += 1
    if I[j, MAP] == EXPANSION:
        for i in range(m):
            F[I[j, O_NRM] + i] = row_norm(kind, rows[i])
    I[j, M] = m
    return NOTHING


@jit_inline
def learn_one_output_or_dictionary(F, I, R, j, x, xi, xv, y, out, q, nk, g):
    """:func:`learn_one_output`, or the step of a member that keeps its own dictionary
    (:func:`_dictionary_learn`)."""
    if I[j, STEP] >= FIRST_DICTIONARY_STEP:
        return _dictionary_learn(F, I, R, j, x, y, out[0])
    return learn_one_output(F, I, R, j, x, xi, xv, y, out, q, nk, g)


@jit
def learn_all_dictionaries(F, I, R, x, xi, xv, y, d, alive, todo, q, g):
    """:func:`_learn_all` with one output per member, some of them steps that keep their own
    dictionary (a root of their own, :func:`okl.engine.roots.engine_dictionaries`: the default
    pools' root does not compile those steps)."""
    return _learn_all(F, I, R, x, xi, xv, y, d, alive, todo, q, g, learn_one_output_or_dictionary)

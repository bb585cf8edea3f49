"""The component table: the feature maps and steps that okl's compiled paths are made from.

A learner's compiled state is a **feature map** (how a row becomes the features of a decision)
and a **step** (how a round changes the weights), which it declares, in its current state, as a
:class:`Plan` from :meth:`okl.runtime.events.EventPath.compiled_plan`. Every compiled path reads
that one declaration and dispatches on these components, never on the learner's type:

* the single learners' per-event plans (:mod:`okl.engine.fastpath`: ``predict_one`` /
  ``learn_one`` as one compiled call each);
* ``auto``'s engine (:mod:`okl.engine.core`, one output or K one-vs-rest outputs), which lays
  every member's plan out in its buffers and runs each member's round through the dispatch
  generated from this table (:mod:`okl.components.dispatch`: each component's ``member``
  functions, in its own module).

So a learner assembled from components in this table runs per event and joins ``auto``'s pool
with no edit in ``engine/`` or ``runtime/`` (``docs/adding-a-learner.md``). A map or step is a
closed, compiled set: Numba compiles the dispatch over these codes into each path, so a *new*
map or step is its module (its member functions for the sites it runs, its layout: see
:mod:`okl.components.generate`) and one entry here, from which ``python -m
okl.components.generate`` renders the dispatch of every compiled path
(:mod:`okl.components.dispatch`, the one module that compares map and step codes); a new
*learner* built from them is none.

Maps (``Plan.map``):

* ``"expansion"``: f(x) = sum_{i < m} alpha_i kappa(sv_i, x) over the stored rows (``SV``: budget x
  d, ``w``: the coefficients alpha, ``counts``: the learner's counter of rows added; m = min(that,
  budget)). Per round O(m d).
* ``"kernel"``: z = P^T kappa_L(x) (Nystrom / sketched maps: ``LT`` the m landmarks transposed,
  d x m; ``P`` the m x k projection), f = w^T z. O(m d + m k).
* ``"fourier"``: z = [cos U x, sin U x] / sqrt(D) (random Fourier features: ``UT``, d x D), f = w^T z.
  O(d D).
* ``"generated fourier"``: the ``"fourier"`` map with U's columns generated, not stored
  (``generator``: (seed, kind, scale) of :mod:`okl.features.generated`; ``features``: 2D): the
  columns of a row's non-zeros, O(nnz D) a round and O(D) memory (FOGD's ``directions``).
* ``"linear"``: z = [x, 1] (or, degree 2, [x, products, 1]; ``features``: k; ``unmap``: undo
  ``auto``'s symlog input map first), f = w^T z. O(k).
* ``"column expansion"``: the expansion with the stored rows as the columns of ``SV`` (d x B;
  :mod:`okl.components.maps.columns`: the budgeted expansions' layout, whose Gaussian kernel row
  vectorises). O(m d).
* ``"fourier kernels"``: P Fourier maps of the widths s_p, z = [z_1(x), ..., z_P(x)] (``UT``: their
  directions transposed, d x P D; ``options["kernels"]``: P): Raker's and AdaRaker's map, whose
  decision is its step's. O(P D d).
* ``"window"``: the kernel smoother over the last ``budget`` rows (``SV``: the rows transposed,
  d x B; ``w``: their labels; :mod:`okl.components.maps.window`). O(B d).
* ``"warmup"``: the width window's buffered rows, predicted by the running label mean (the
  runtime's, before any learner state exists; per-event plans only).

Steps (``Plan.step``), with the loss derivative g = l'(f, y):

* ``"support"``: on g != 0 the row joins the expansion with alpha = -eta g (the kernel perceptron
  / NORMA without decay / KLMS); a full expansion follows ``budget_rule``: ``"stop"`` hands the
  round to the learner's own transition (Python: NOGD's and FORKS's second stage), ``"replace
  oldest"`` overwrites the oldest stored row (a sliding expansion, O(d)), ``"merge nearest"`` adds
  the row's coefficient to its most similar stored row (nothing learned is dropped: on a correlated
  stream a dropped row's coefficient is an error that KLMS's step amplifies, docs/results/klms.md;
  O(B d)). With ``merge_above``
  (a kernel value in (0, 1]), a row whose most similar stored row has kappa >= merge_above merges
  into it instead, alpha_j* += -eta g (QKLMS's quantisation: for a distance kernel the most
  similar row is the nearest, and the threshold a distance; one more O(m d) pass).
* ``"ogd"``: w <- w - eta g z. O(k).
* ``"adagrad"``: diagonal AdaGrad, G += (g z)^2, w <- w - lr g z / sqrt(G) (``A``: G). O(k).
* ``"ons"``: the FORKS code's Online Newton Step on the sketched features (``A``: A^{-1}; ``C``
  the projection bound; update rounds every ``rho`` counted rounds, the learner's
  ``_update_round``). O(k^2).
* ``"store"``: the window stores the row and its label. O(d).
* ``"nag"``: the normalised adaptive gradient (Ross, Mineiro & Langford 2013; Vowpal Wabbit's
  update) of the linear map, :func:`okl.components.steps.nag.nag_step` (``A``: the per-feature sums and
  scales and the normaliser, 2k + 1; the decision rescales on the fly). O(nnz) on the non-zero
  features. Not in the single learners' per-event plan: ``linear(step="nag")`` per event takes the
  generic path.
* ``"krls-t"``: KRLS-T's Gaussian-process posterior over the expansion's dictionary, with
  back-to-prior forgetting and pruning (:mod:`okl.components.steps.krlst`; the loss derivative
  is not used: it learns the label or target itself). Its state is declared
  (:mod:`okl.components.spec`: ``Plan.state`` names the learner's arrays for it, ``Plan.constants``
  gives its constants). O(M^2 + M d). Run by ``auto``'s engine with one output; a single KRLS-T
  learner's events and K classes keep its own compiled calls.
* ``"ald-krls"``, ``"window-krls"``: kernel recursive least squares over the expansion's
  dictionary, with ALD admission (KRLS), or a sliding / fixed-budget window (SW-KRLS, FB-KRLS:
  the window's constants choose the element removed and the label update;
  :mod:`okl.components.steps.krls`). Declared state, paths and cost as ``"krls-t"``'s.
* ``"affine projection"``: KAP's and KNLMS's coherence admission and affine projection of order
  p over the column expansion (:mod:`okl.components.steps.kap`). Declared state, paths as
  ``"krls-t"``'s. O(m d + p^2 m + p^3).
* ``"budgeted sgd"``: BSGD's Pegasos step with merging, removal or projection of the (B + 1)-th
  support vector (:mod:`okl.components.steps.bsgd`; it reads the loss derivative). Declared
  state, paths as ``"krls-t"``'s. O(B d), a maintenance O(B d) or O(B^2) more.
* ``"projection"``: the Projectron's and Projectron++'s growth or projection onto the support
  set's span (:mod:`okl.components.steps.projectron`). Declared state, paths as ``"krls-t"``'s.
  O(B d), O(B^2) more on update rounds.
* ``"budgeted pa"``, ``"forgetron"``: BPA-S's passive-aggressive step with the cheapest
  replacement, and the self-tuned Forgetron's shrink and removal of the oldest
  (:mod:`okl.components.steps.bpas`, :mod:`okl.components.steps.forgetron`). Declared state,
  paths as ``"krls-t"``'s. O(B d).
* ``"ex-krls"``: extended KRLS, the tracking model's Kalman step over the expansion's dictionary
  (:mod:`okl.components.steps.exkrls`). Declared state, paths as ``"krls-t"``'s. O(m d + m^2).
* ``"random budget perceptron"``, ``"bogd"``: RBP's and BOGD's updates with removal of a uniform
  draw from a buffer of pre-drawn indices, which the learner's Python refills (the engine hands
  it that round; :mod:`okl.components.steps.removals`). Declared state, paths as ``"krls-t"``'s.
  O(B d).
* ``"norma"``: KOGD's step, NORMA's decay and a new row on a nonzero loss derivative, over an
  expansion that grows by doubling in the learner's Python (:mod:`okl.components.steps.kogd`).
  Paths as ``"krls-t"``'s. O(m d).
* ``"exponential weights"``: Raker's and AdaRaker's step over the ``"fourier kernels"`` map: each
  kernel's OGD step, the kernels' (and instances') exponential weights, and the decision, their
  mixture (:mod:`okl.components.steps.raker`; the learner's state shared, its constants and restart
  schedule in ``options``). Run by ``auto``'s engine with one output, in its second root. O(K P D).

``shrink`` (SkeGD's weight decay 1 - eta lambda) and update rounds (``rho``) apply to the
stage-2 steps that declare them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from okl.components.spec import Field, block_size
from okl.components.maps import columns, expansion, fourier, kernel, linear, warmup, window
from okl.components.steps import (adagrad, bpas, bsgd, exkrls, forgetron, kap, kogd, krls, krlst, nag, ons,
                                  projectron, raker, removals)
from okl.components.steps.support import MERGE_NEAREST, REPLACE_OLDEST, STOP  # (the budget rules' codes)

#: map codes (the compiled paths' dispatch)
(EXPANSION, KERNEL_MAP, FOURIER_MAP, LINEAR_MAP, WINDOW, WARMUP, GENERATED_FOURIER, COLUMN_EXPANSION,
 FOURIER_KERNELS) = range(9)
#: step codes
(SUPPORT, OGD, ADAGRAD, ONS, STORE, NAG, KRLST, ALD_KRLS, WINDOW_KRLS, AFFINE_PROJECTION, BUDGETED_SGD,
 PROJECTION, BUDGETED_PA, FORGETRON, EX_KRLS, RANDOM_BUDGET_PERCEPTRON, BOGD, NORMA, EXPONENTIAL_WEIGHTS) = range(19)
#: the first code of the steps that keep their own dictionary and declare their state (every code
#: from it to NORMA; each takes one map, ``Component.takes``)
FIRST_DICTIONARY_STEP = KRLST

#: the paths that run a component: the single learners' per-event plan, auto's engine with one
#: output, with K outputs
EVENT, ENGINE, K_OUTPUTS = "event", "engine", "k-outputs"


@dataclass(frozen=True)
class Component:
    """One feature map or step: its code, the :class:`Plan` fields it reads (besides ``w``), the
    compiled paths that run it, and what it computes; a step may declare its constants, state and
    work space (:mod:`okl.components.spec`), laid out in that order as one block."""

    name: str
    code: int
    reads: tuple[str, ...]
    paths: tuple[str, ...]
    doc: str
    constants: tuple[str, ...] = ()
    state: tuple[Field, ...] = ()
    work: tuple[Field, ...] = ()
    #: a step that keeps its own dictionary: its compiled round, "module.function"
    #: (:mod:`okl.components.dispatch`, generated from these entries, calls it)
    member_round: str = ""
    #: a step that takes one map only (it reads and writes that map's arrays): its name
    takes: str = ""
    #: a step whose own update rounds the engines run (``Plan.rho``: the learner's Python takes them)
    update_rounds: bool = False
    #: a map or step whose functions auto's engine compiles in its second root only, for the pools
    #: that have it (:func:`okl.engine.roots.engine_dictionaries`: the default pools' root does not
    #: compile them); every step with a ``member_round`` is such a step
    own_root: bool = False

    @property
    def in_second_root(self) -> bool:
        """Whether auto's engine runs a member with this map or step in its second root (see
        :attr:`own_root`)."""
        return self.own_root or bool(self.member_round)
    #: its member functions in auto's engine, (site, "module.function") for the sites of
    #: :data:`okl.components.generate.SITES` (the generated dispatch calls them)
    member: tuple[tuple[str, str], ...] = ()
    #: its layout in auto's engine (Python, :class:`okl.engine.layout.Engine`): ``layout(plan,
    #: learner, I row, R row)`` -> a map's (parts, work size) or a step's parts; ``norms(F, I, R,
    #: j, dim)`` its stored rows' norms; ``sync(plan, learner, I row, F)`` what a step writes back
    layout: Any = None
    norms: Any = None
    sync: Any = None
    #: in the single learners' per-event plan (Python, :mod:`okl.engine.fastpath`): a map's
    #: ``event_layout(plan)`` -> (m, k, fixed parts by name), a step's ``event_state(k)`` -> the
    #: shape its state ``A`` must have (None: it keeps none)
    event_layout: Any = None
    event_state: Any = None
    #: shared work in auto's engine (Python): ``share_parameters(I, R, j)`` before the layout (from
    #: the members' parameters; returns the columns whose parts member j no longer needs) and
    #: ``share_arrays(F, I, R, j, dim)`` after it: member j reads (``I[j, SRC]``) or derives its
    #: features from another member's
    share_parameters: Any = None
    share_arrays: Any = None

    @property
    def has_features(self) -> bool:
        """Whether this map computes features z (its decision w^T z: the engine lays out the
        weights, the step's arrays and the features' slots after its parts)."""
        return any(site == "features" for site, _ in self.member)

    def sizes(self, plan: "Plan", dim: int) -> dict:
        """The size symbols of this step's shapes for ``plan`` on inputs of width ``dim``
        (:mod:`okl.components.spec`): the budget, the width, its constants by name."""
        return {"M": plan.budget, "d": dim, **dict(zip(self.constants, plan.constants))}

    def block_size(self, sizes: dict) -> int:
        """The length of this step's declared block at ``sizes`` (0: none declared)."""
        return block_size(self.constants, self.state, self.work, sizes) if self.constants or self.state else 0


def _member(module: str, **sites: str) -> tuple[tuple[str, str], ...]:
    """A component's member functions in auto's engine: (site, "okl.components.{module}.function")
    for each ``site=function`` (a site's name with spaces as underscores)."""
    return tuple((site.replace("_", " "), f"okl.components.{module}.{name}") for site, name in sites.items())


def _dictionary_step(name: str, code: int, module, member_round: str, doc: str, prefix: str = "",
                     takes: str = "column expansion") -> Component:
    """A step that keeps its own dictionary over the map it ``takes``: it reads the budget, kernel
    and counter of its map, runs in auto's engine, and its spec is its module's
    (``{prefix}CONSTANTS``, ``{prefix}STATE`` or the module's ``STATE``, ``WORK``;
    :mod:`okl.components.spec`), its compiled round ``member_round`` there."""
    state = getattr(module, prefix + "STATE", module.STATE if hasattr(module, "STATE") else None)
    return Component(name, code, ("budget", "kernel", "counts"), (ENGINE,), doc, getattr(module, prefix + "CONSTANTS"),
                     state, module.WORK, f"{module.__name__}.{member_round}", takes=takes)


MAPS = {c.name: c for c in (
    Component("expansion", EXPANSION, ("SV", "budget", "kernel", "counts"), (EVENT, ENGINE, K_OUTPUTS),
              "f = sum_{i<m} alpha_i kappa(sv_i, x)",
              member=_member("maps.expansion", outputs_one="expansion_outputs_one",
                             outputs_k="expansion_outputs_k", event_decision="expansion_event_decision"),
              layout=expansion.expansion_layout, norms=expansion.expansion_norms,
              event_layout=expansion.expansion_event_layout),
    Component("kernel", KERNEL_MAP, ("LT", "P", "kernel"), (EVENT, ENGINE, K_OUTPUTS), "z = P^T kappa_L(x)",
              member=_member("maps.kernel", features="kernel_member_features",
                             block_features="kernel_block_features", event_features="kernel_event_features"),
              layout=kernel.kernel_layout, norms=kernel.kernel_norms, event_layout=kernel.kernel_event_layout,
              share_arrays=kernel.kernel_shares),
    Component("fourier", FOURIER_MAP, ("UT",), (EVENT, ENGINE, K_OUTPUTS), "z = [cos Ux, sin Ux] / sqrt(D)",
              member=_member("maps.fourier", features="fourier_member_features",
                             event_features="fourier_event_features"),
              layout=fourier.fourier_layout, event_layout=fourier.fourier_event_layout,
              share_arrays=fourier.fourier_shares),
    Component("linear", LINEAR_MAP, ("features",), (EVENT, ENGINE, K_OUTPUTS), "z = [x, 1]",
              member=_member("maps.linear", features="linear_member_features",
                             sparse_outputs_one="linear_sparse_outputs_one",
                             sparse_outputs_k="linear_sparse_outputs_k", sparse_learn_one="linear_sparse_learn_one",
                             sparse_learn_k="linear_sparse_learn_k", event_features="linear_event_features"),
              layout=linear.linear_layout, event_layout=linear.linear_event_layout),
    Component("window", WINDOW, ("SV", "budget", "kernel"), (ENGINE, K_OUTPUTS), "the kernel smoother",
              member=_member("maps.window", outputs_one="window_outputs_one", outputs_k="window_outputs_k"),
              layout=window.window_layout, norms=window.window_norms),
    Component("warmup", WARMUP, ("SV",), (EVENT,), "the running label mean of the width window",
              member=_member("maps.warmup", event_window_decision="warmup_event_decision",
                             event_window_learn="warmup_event_learn"),
              event_layout=warmup.warmup_event_layout),
    Component("generated fourier", GENERATED_FOURIER, ("generator", "features"), (ENGINE, K_OUTPUTS),
              "z = [cos Ux, sin Ux] / sqrt(D), U's columns generated",
              member=_member("maps.fourier", features="generated_member_features"),
              layout=fourier.generated_layout, share_parameters=fourier.generated_shares),
    Component("column expansion", COLUMN_EXPANSION, ("SV", "budget", "kernel", "counts"), (ENGINE,),
              "f = sum_{j<m} alpha_j kappa(s_j, x), the rows as columns",
              member=_member("maps.columns", outputs_one="columns_outputs_one"), layout=columns.columns_layout,
              own_root=True),
    Component("fourier kernels", FOURIER_KERNELS, ("UT",), (ENGINE,),
              "z = [z_1(x), ..., z_P(x)], P Fourier maps of the widths s_p",
              member=_member("maps.fourier", features="kernels_member_features"), layout=fourier.kernels_layout,
              own_root=True),
)}
STEPS = {c.name: c for c in (
    Component("support", SUPPORT, ("eta",), (EVENT, ENGINE, K_OUTPUTS), "alpha_new = -eta g",
              member=_member("steps.support", learn_one="support_learn_one", learn_k="support_learn_k",
                             event_rows_step="support_event_step")),
    Component("ogd", OGD, ("eta",), (EVENT, ENGINE, K_OUTPUTS), "w -= eta g z",
              member=_member("steps.ogd", learn_one="ogd_learn_one", learn_k="ogd_learn_k",
                             event_step="ogd_event_step")),
    Component("adagrad", ADAGRAD, ("A", "lr"), (EVENT, ENGINE, K_OUTPUTS), "w -= lr g z / sqrt(G)",
              member=_member("steps.adagrad", learn_one="adagrad_learn_one", learn_k="adagrad_learn_k",
                             event_step="adagrad_event_step"),
              layout=adagrad.adagrad_layout, event_state=adagrad.adagrad_event_state),
    Component("ons", ONS, ("A", "eta", "C"), (EVENT, ENGINE, K_OUTPUTS), "the code's ONS on sketched features",
              member=_member("steps.ons", learn_one="ons_learn_one", learn_k="ons_learn_k",
                             event_step="ons_event_step"),
              layout=ons.ons_layout, sync=ons.ons_sync, event_state=ons.ons_event_state, update_rounds=True),
    Component("store", STORE, (), (ENGINE, K_OUTPUTS), "store the row and its label",
              member=_member("maps.window", learn_one="store_learn_one", learn_k="store_learn_k")),
    Component("nag", NAG, ("A", "eta"), (ENGINE, K_OUTPUTS), "w_i -= eta sqrt(t / N) g z_i / (s_i sqrt(G_i))",
              takes="linear", member=_member("steps.nag", outputs_one="nag_outputs_one", outputs_k="nag_outputs_k",
                             learn_one="nag_learn_one", learn_k="nag_learn_k"),
              layout=nag.nag_layout),
    Component("none", -1, (), (EVENT,), "nothing learned (the width window buffers the row)"),
    _dictionary_step("krls-t", KRLST, krlst, "krlst_member_round", "the GP posterior over the dictionary",
                     takes="expansion"),
    _dictionary_step("ald-krls", ALD_KRLS, krls, "ald_member_round", "recursive least squares, ALD admission",
                     "ALD_", takes="expansion"),
    _dictionary_step("window-krls", WINDOW_KRLS, krls, "window_member_round",
                     "recursive least squares on a sliding or fixed-budget window", "WINDOW_", takes="expansion"),
    _dictionary_step("affine projection", AFFINE_PROJECTION, kap, "kap_member_round",
                     "coherence admission, affine projection of order p"),
    _dictionary_step("budgeted sgd", BUDGETED_SGD, bsgd, "bsgd_member_round",
                     "Pegasos on a budget: merge, remove or project"),
    _dictionary_step("projection", PROJECTION, projectron, "projectron_member_round",
                     "the Projectron(++): grow or project onto the span"),
    _dictionary_step("budgeted pa", BUDGETED_PA, bpas, "bpas_member_round",
                     "BPA-S: a passive-aggressive step, the cheapest replacement"),
    _dictionary_step("forgetron", FORGETRON, forgetron, "forgetron_member_round",
                     "the self-tuned Forgetron: shrink, drop the oldest"),
    _dictionary_step("ex-krls", EX_KRLS, exkrls, "exkrls_member_round",
                     "extended KRLS: the tracking model's Kalman step", takes="expansion"),
    _dictionary_step("random budget perceptron", RANDOM_BUDGET_PERCEPTRON, removals, "rbp_member_round",
                     "RBP: on a mistake add the row, past the budget remove a uniform draw", "RBP_"),
    _dictionary_step("bogd", BOGD, removals, "bogd_member_round",
                     "BOGD: a gradient step, past the budget remove a uniform draw and rescale", "BOGD_"),
    Component("exponential weights", EXPONENTIAL_WEIGHTS, ("eta",), (ENGINE,),
              "theta_p -= eta l'(f_p) z_p; the kernels' (and instances') exponential weights", takes="fourier kernels",
              member=_member("steps.raker", outputs_one="raker_outputs_one", learn_one="raker_learn_one"),
              layout=raker.raker_layout, own_root=True),
    _dictionary_step("norma", NORMA, kogd, "norma_member_round",
                     "KOGD / NORMA: decay, add the row on a nonzero loss derivative", takes="expansion"),
)}
BUDGET_RULES = {"stop": STOP, "replace oldest": REPLACE_OLDEST, "merge nearest": MERGE_NEAREST}


@dataclass(frozen=True, eq=False)
class Plan:
    """A learner's compiled state in its current stage: a map and a step from the table, the
    names of its mutable arrays (the paths move them into their buffers: the learner's attributes
    become views, so model files and Python see the same memory), copies of its fixed arrays, and
    the constants (a step that declares its state: ``state`` maps each of its fields to the
    learner's attribute, ``constants`` gives its constants in order). Built by
    :meth:`~okl.runtime.events.EventPath.compiled_plan`; never saved.

    ``w`` names the weights (an expansion's coefficients, the window's labels), ``A`` the step's
    state (AdaGrad sums, ONS inverse), ``SV`` the stored rows, ``counts`` the learner's counter
    that the step advances (rows added, update-round counter) and ``extra_counts`` further
    (name, role) counters a map keeps (the window's write position, ``"pos"``)."""

    map: str
    step: str
    w: str | None = None
    A: str | None = None
    SV: str | None = None
    counts: str | None = None
    extra_counts: tuple[tuple[str, str], ...] = ()
    kernel: tuple = (0, 0.0, 0.0, 0.0)
    LT: np.ndarray | None = None
    P: np.ndarray | None = None
    UT: np.ndarray | None = None
    generator: tuple | None = None
    features: int = 0
    budget: int = 0
    budget_rule: str = "stop"
    eta: float = 0.0
    lr: float = 0.0
    C: float = 0.0
    shrink: float = 1.0
    rho: int | None = None
    margin: bool = False
    unmap: bool = False
    merge_above: float | None = None
    state: tuple[tuple[str, str], ...] = ()
    constants: tuple[float, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.map not in MAPS:
            raise ValueError(f"Plan: map must be one of {sorted(MAPS)}, got {self.map!r}")
        if self.step not in STEPS:
            raise ValueError(f"Plan: step must be one of {sorted(STEPS)}, got {self.step!r}")
        if self.budget_rule not in BUDGET_RULES:
            raise ValueError(f"Plan: budget_rule must be one of {sorted(BUDGET_RULES)}, got {self.budget_rule!r}")
        if self.merge_above is not None and not 0.0 < self.merge_above <= 1.0:
            raise ValueError(f"Plan: merge_above must be a kernel value in (0, 1], got {self.merge_above!r}")
        step = STEPS[self.step]
        if step.takes and self.map != step.takes:
            raise ValueError(f"Plan: the {self.step!r} step takes the {step.takes!r} map, got {self.map!r}")
        if {name for name, _ in self.state} != {f.name for f in step.state} or len(self.constants) != len(
                step.constants):
            raise ValueError(f"Plan: the {self.step!r} step declares the state {[f.name for f in step.state]} and "
                             f"the constants {list(step.constants)}, got {[n for n, _ in self.state]} and "
                             f"{len(self.constants)} constants")
        unset = [name for name in MAPS[self.map].reads + STEPS[self.step].reads if _unset(self, name)]
        if unset:
            raise ValueError(f"Plan: the {self.map!r} map with the {self.step!r} step needs {unset}")

    @property
    def map_code(self) -> int:
        return MAPS[self.map].code

    @property
    def step_code(self) -> int:
        return STEPS[self.step].code

    @property
    def rule_code(self) -> int:
        return BUDGET_RULES[self.budget_rule]

    @property
    def merge_threshold(self) -> float:
        """``merge_above``, or 2.0 (above any kernel value: no row merges) without it."""
        return 2.0 if self.merge_above is None else float(self.merge_above)

    def runs_on(self, path: str) -> bool:
        """Whether the compiled ``path`` (:data:`EVENT`, :data:`ENGINE`, :data:`K_OUTPUTS`) runs
        this map with this step: each component runs there, and the engines' steps take neither
        a shrink nor update rounds but the ONS step's, nor a linear map with ``unmap`` per event."""
        if path not in MAPS[self.map].paths or path not in STEPS[self.step].paths:
            return False
        if path == EVENT:
            return not self.unmap
        return self.shrink == 1.0 and (self.rho is None or STEPS[self.step].update_rounds)


def runs_everywhere(composition, path: str) -> bool:
    """Whether every map and step named in ``composition`` (a learner's declared components) runs
    on the compiled ``path``."""
    return all(path in (MAPS.get(name) or STEPS[name]).paths for name in composition)


def _unset(plan: Plan, name: str) -> bool:
    """Whether a field a component reads is missing: None, or a size that is not positive."""
    value = getattr(plan, name)
    if name in ("budget", "features"):
        return value <= 0
    return value is None

"""The engine's memory (:class:`Engine`): a pool's members laid out in the compiled driver's
buffers, ``F`` (floats), ``I`` (ints) and ``R`` (reals), one row per member (the columns of
:mod:`okl.engine.columns`), from each member's plan (:class:`okl.components.Plan`); the
aggregation's state in ``S``. The compiled rounds that read them are :mod:`okl.engine.core`'s."""

from __future__ import annotations

import numpy as np

from okl._compiled import column_norms_t, row_norm
from okl.components import (ADAGRAD, COLUMN_EXPANSION, EXPANSION, FOURIER_MAP, GENERATED_FOURIER, K_OUTPUTS,
                            KERNEL_MAP, NAG, ONS, STEPS, WINDOW)
from okl.components.steps.ons import apply_pending, pending_size
from okl.engine.columns import (BUDGET, CB, COUNTER, ETA, GKIND, GSCALE, GSEED, I_COLS, K, KA, KB_, KC, KIND, LOSS, LR,
                                M, MAP, MARGIN_COUNTER, MERGE, NL, NOUT, NSEEN, ORDER, O_A, O_G, O_KB, O_NRM, O_P, O_U,
                                O_W, O_Z, PY, RHO, RULE, R_COLS, SRC, STEP, UNMAP)
from okl.engine.aggregation import AGG_HEAD
from okl.engine.core import state_size, state_views
from okl.features.generated import CACHE_COLUMNS
class Engine:
    """The compiled layout of a pool: ``F`` (floats), ``I`` (ints), ``R`` (reals), one row per
    member, and ``S``: the aggregation's state L, alive, agg (given; the learner re-points its
    attributes to the views ``self.L``, ``self.alive``, ``self.agg``) and work. The members' mutable arrays (support vectors and coefficients in stage 1, output
    weights, AdaGrad sums, ONS inverse) are re-pointed to views of F, so the engine and the member
    objects share them; the counters the engine advances (support vectors ``m_``, FORKS's
    ``counter_``, ``n_seen_``) are written back to the members by :meth:`sync`. Work spaces (the
    features of the last row, kernel rows) and transposed copies of fixed maps live in F too."""

    def __init__(self, pool, dim: int, L: np.ndarray, alive: np.ndarray, agg: np.ndarray):
        N = len(pool)
        self.pool = pool
        self.I = I = np.zeros((N, I_COLS), dtype=np.int64)
        self.R = R = np.zeros((N, R_COLS))
        #: each member's plan (okl.components), None for a Python member
        self.plans = [m.engine_plan() for m in pool]
        parts: list[tuple[int, int, np.ndarray | int, str | None]] = []  # (member, column, array or size, attr)
        for j, (m, plan) in enumerate(zip(pool, self.plans)):
            I[j, SRC] = j
            I[j, NOUT] = m.n_outputs_
            I[j, NSEEN] = m.n_seen_
            I[j, LOSS] = m.loss_.kind
            I[j, MAP] = PY
            if plan is not None:
                parts += [(j, col, p, attr) for col, p, attr in _lay_out(plan, m, I[j], R[j])]
        # generated Fourier members with the seed and kind of another at half their scale: the double
        # angle of its features (auto draws them so), and no column cache of their own
        for j in range(N):
            for i in range(N):
                if i != j and I[i, MAP] == I[j, MAP] == GENERATED_FOURIER and I[i, K] == I[j, K] \
                        and I[i, GSEED] == I[j, GSEED] and I[i, GKIND] == I[j, GKIND] \
                        and R[j, GSCALE] != 0.0 and R[j, GSCALE] == 2.0 * R[i, GSCALE]:
                    I[j, SRC] = i
                    break
        for j in range(N):
            if I[j, MAP] == GENERATED_FOURIER and I[j, SRC] != j:
                I[j, NL] = 0  # (should its source leave the pool, it generates its columns uncached)
        parts = [part for part in parts if not (I[part[0], MAP] == GENERATED_FOURIER and part[1] == O_A
                                                and I[part[0], SRC] != part[0])]
        size = sum(p if isinstance(p, int) else p.size for _, _, p, _ in parts)
        self.F = F = np.zeros(max(size, 1))
        pos = 0
        for j, col, p, attr in parts:  # (a part without a column follows the one before it)
            n = p if isinstance(p, int) else p.size
            if col is not None:
                I[j, col] = pos
            if not isinstance(p, int):
                F[pos:pos + n] = p.ravel()
                if attr is not None:
                    setattr(pool[j], attr, F[pos:pos + n].reshape(p.shape))
            pos += n
        for j in range(N):  # the stored rows' norms (sparse rows' kernel values: okl._compiled.row_norm)
            _stored_norms(F, I, R, j, dim)
        # members with the same features read the first one's (NOGD's two steps at one width)
        for j in range(N):
            for i in range(j):
                if I[i, MAP] == I[j, MAP] == KERNEL_MAP and I[i, SRC] == i and I[i, K] == I[j, K] \
                        and I[i, NL] == I[j, NL] and (R[i, :4] == R[j, :4]).all() \
                        and np.array_equal(self._block(i, O_A, dim * I[i, NL]), self._block(j, O_A, dim * I[j, NL])) \
                        and np.array_equal(self._block(i, O_P, I[i, NL] * I[i, K]), self._block(j, O_P, I[j, NL] * I[j, K])):
                    I[j, SRC], I[j, O_Z] = i, I[i, O_Z]
                    break
        # FOGD members whose directions are twice another's (auto draws them so): the double angle
        # of that member's features (the ratio doubles a non-zero norm: no cycle)
        for j in range(N):
            for i in range(N):
                if i != j and I[i, MAP] == I[j, MAP] == FOURIER_MAP and I[i, K] == I[j, K]:
                    Uj = self._block(j, O_A, dim * (I[j, K] // 2))
                    if Uj.any() and np.array_equal(2.0 * self._block(i, O_A, dim * (I[i, K] // 2)), Uj):
                        I[j, SRC] = i
                        break
        order, placed = [], set()
        while len(order) < N:  # sources first (a member reading a source placed before it)
            for j in range(N):
                if j not in placed and (I[j, SRC] == j or int(I[j, SRC]) in placed):
                    order.append(j)
                    placed.add(j)
        I[:, ORDER] = order
        self.py = [j for j in range(N) if I[j, MAP] == PY]
        #: whether a member's step keeps its own dictionary (the engine's root with those steps)
        self.dictionaries = any(p is not None and bool(STEPS[p.step].member_round) for p in self.plans)
        # the aggregation's state (copied in; the learner takes the views back) and work spaces
        if len({int(k) for k in I[:, NOUT]}) > 1:
            raise ValueError("auto's members must all have the same number of outputs")
        self.K, self.nout = (int(I[0, NOUT]), max(int(I[0, NOUT]), 1)) if N else (0, 1)
        if self.K and (self.py or not all(p.runs_on(K_OUTPUTS) for p in self.plans)):
            raise ValueError("K outputs need every member in the engine (a compiled plan of the component "
                             "table, okl.components); "
                             f"{[m.name for m, p in zip(pool, self.plans) if p is None]} have none")
        self.S = np.full(state_size(N, self.nout, agg.shape[0]), np.nan)
        (self.L, self.alive, self.agg, self.d, self.w, self.c, self.loss, self.p,
         self.g) = state_views(self.S, N, self.nout)
        self.L[:], self.alive[:], self.agg[:] = L, alive, agg
        self.todo = np.zeros(N, dtype=np.int64)
        self.classification = pool[0].task == "classification" if pool else True
        #: regression's stacking layer's state (a view of agg; None without it): run beside the
        #: engine, on the mixture it returns (okl.engine.aggregation.stack_predict)
        self.stack = self.agg[AGG_HEAD:] if self.agg.shape[0] > AGG_HEAD and not self.classification else None
        self.stale = False

    def _block(self, j, col, n):
        return self.F[self.I[j, col]:self.I[j, col] + n]

    def sync(self) -> None:
        """Write the counters the engine advanced back to the member objects (a stale layout was
        synced when it went stale: the members have moved on since)."""
        if self.stale:
            return
        I = self.I
        for j, (m, plan) in enumerate(zip(self.pool, self.plans)):
            if plan is None:
                continue
            m.n_seen_ = int(I[j, NSEEN])
            st = plan.step_code
            if plan.counts is not None:
                setattr(m, plan.counts, int(I[j, COUNTER if st == ONS else M]))
            for attr, role in plan.extra_counts:  # (the window's write position)
                setattr(m, attr, int(I[j, COUNTER]))
            if st == ONS:
                k, o = int(I[j, K]), int(I[j, O_U])
                apply_pending(getattr(m, plan.A), self.F[o + k:o + k + pending_size(k)])  # (a view of F)
            _write_back_counters(plan, m, self.F, int(I[j, O_G]))


def _stored_norms(F, I, R, j, dim: int) -> None:
    """Member j's stored rows' norms into its ``O_NRM`` block (an expansion's rows added so far, a
    window's, a kernel map's landmarks), by the function that keeps them as rows are stored."""
    mp, kind = I[j, MAP], int(R[j, KIND])
    if mp == EXPANSION:
        B = int(I[j, BUDGET])
        SV = F[I[j, O_A]:I[j, O_A] + B * dim].reshape((B, dim))
        for i in range(min(int(I[j, M]), B)):
            F[I[j, O_NRM] + i] = row_norm(kind, SV[i])
    elif mp in (WINDOW, KERNEL_MAP):
        m = int(I[j, BUDGET] if mp == WINDOW else I[j, NL])
        column_norms_t(kind, F[I[j, O_A]:I[j, O_A] + dim * m].reshape((dim, m)), m,
                       F[I[j, O_NRM]:I[j, O_NRM] + m])


def _step_block(plan, m) -> list:
    """The parts of a step that declares its state (:mod:`okl.components.spec`): its constants
    (at ``O_G``), then each state field (a float array the member's, shared as a view; an int
    array or a scalar copied and written back by :meth:`Engine.sync`), then its work space,
    contiguous and in the spec's order."""
    step = STEPS[plan.step]
    sizes = step.sizes(plan, m.dim_)
    if not step.block_size(sizes):
        return []
    attrs = dict(plan.state)
    parts = [(O_G, np.asarray(plan.constants, dtype=np.float64), None)]
    for f in step.state:
        a = np.asarray(getattr(m, attrs[f.name]))
        if a.shape != f.dims(sizes):
            raise ValueError(f"{m.name}: its {attrs[f.name]} has shape {a.shape}, the {plan.step!r} step declares "
                             f"{f.dims(sizes)}")
        parts.append((None, a, attrs[f.name]) if f.shared else (None, a.astype(np.float64), None))
    return parts + [(None, f.size(sizes), None) for f in step.work]


def _write_back_counters(plan, m, F, at: int) -> None:
    """Write the fields of a declared step state that are copies (int arrays, scalars), laid out
    from ``at`` (:func:`_step_block`), back to the member's attributes."""
    step = STEPS[plan.step]
    if not step.state:
        return
    sizes = step.sizes(plan, m.dim_)
    at += len(step.constants)
    attrs = dict(plan.state)
    for f in step.state:
        n = f.size(sizes)
        if not f.shared:
            if f.shape:
                getattr(m, attrs[f.name])[...] = F[at:at + n].reshape(f.dims(sizes))
            else:
                setattr(m, attrs[f.name], (int if f.dtype == "int" else float)(F[at]))
        at += n


def _lay_out(plan, m, I, R) -> list:
    """A member's plan (:class:`okl.components.Plan`) into its row of I and R; returns its
    parts of F: (column, array to copy in or size of a work space, the member's attribute that
    becomes a view of it, or None). The map's parts, then the step's."""
    I[MAP], I[STEP], I[RULE] = plan.map_code, plan.step_code, plan.rule_code
    R[KIND], R[KA], R[KB_], R[KC] = plan.kernel
    R[ETA], R[LR], R[CB], R[MERGE] = plan.eta, plan.lr, plan.C, plan.merge_threshold
    mp, st = plan.map_code, plan.step_code
    state = lambda attr: (getattr(m, attr), attr)  # noqa: E731  (an array the member shares)
    if mp == EXPANSION:
        I[M], I[BUDGET] = getattr(m, plan.counts), plan.budget
        return [(O_A, *state(plan.SV)), (O_W, *state(plan.w)), (O_NRM, plan.budget, None)] + _step_block(plan, m)
    if mp == COLUMN_EXPANSION:
        I[M], I[BUDGET] = getattr(m, plan.counts), plan.budget
        return [(O_A, *state(plan.SV)), (O_W, *state(plan.w)), (O_KB, plan.budget, None)] + _step_block(plan, m)
    if mp == WINDOW:
        I[BUDGET], I[M] = plan.budget, getattr(m, plan.counts)
        for attr, _ in plan.extra_counts:
            I[COUNTER] = getattr(m, attr)
        return [(O_A, *state(plan.SV)), (O_W, *state(plan.w)), (O_KB, plan.budget, None), (O_NRM, plan.budget, None)]
    parts = []
    if mp == KERNEL_MAP:
        nl, k = plan.P.shape
        I[NL] = nl
        parts += [(O_A, np.ascontiguousarray(plan.LT), None), (O_P, np.ascontiguousarray(plan.P), None),
                  (O_NRM, nl, None)]
        kb = 4 * nl
    elif mp == FOURIER_MAP:
        kb = plan.UT.shape[1]
        k = 2 * kb
        parts += [(O_A, np.ascontiguousarray(plan.UT), None)]
    elif mp == GENERATED_FOURIER:  # (O_A: the column cache, C x D, then its C tags)
        k = plan.features
        kb = k // 2
        I[GSEED], I[GKIND], R[GSCALE] = plan.generator
        I[NL] = max(1, min(CACHE_COLUMNS, m.dim_))
        parts += [(O_A, int(I[NL]) * (kb + 1), None)]
    else:  # LINEAR_MAP
        k, kb = plan.features, 0
        I[UNMAP] = plan.unmap
    I[K] = k
    parts += [(O_W, *state(plan.w))]
    if st in (ADAGRAD, ONS, NAG):
        parts += [(O_G, *state(plan.A))]
    parts += [(O_Z, 4 * k, None)] + ([(O_KB, kb, None)] if kb else [])
    if st == ONS:
        I[COUNTER], I[RHO], I[MARGIN_COUNTER] = getattr(m, plan.counts), plan.rho, plan.margin
        parts += [(O_U, k + pending_size(k), None)]  # work space, then a deferred update
    return parts

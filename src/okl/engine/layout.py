"""The engine's memory (:class:`Engine`): a pool's members laid out in the compiled driver's
buffers, ``F`` (floats), ``I`` (ints) and ``R`` (reals), one row per member (the columns of
:mod:`okl.components.columns`), from each member's plan (:class:`okl.components.Plan`); the
aggregation's state in ``S``. The compiled rounds that read them are :mod:`okl.engine.core`'s."""

from __future__ import annotations

import numpy as np

from okl.components import K_OUTPUTS, MAPS, STEPS
from okl.components.columns import (CB, COUNTER, ETA, I_COLS, K, KA, KB_, KC, KIND, LOSS, LR, M, MAP, MERGE, NOUT,
                                    NSEEN, ORDER, O_G, O_KB, O_W, O_Z, PY, RULE, R_COLS, SRC, STEP)
from okl.engine.aggregation import AGG_HEAD
from okl.engine.core import state_size, state_views


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
        # shared work its map finds from the members' parameters (generated Fourier directions)
        dropped = set()
        for j, plan in enumerate(self.plans):
            if plan is not None and MAPS[plan.map].share_parameters is not None:
                dropped.update((j, col) for col in MAPS[plan.map].share_parameters(I, R, j))
        parts = [part for part in parts if (part[0], part[1]) not in dropped]
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
        for j, plan in enumerate(self.plans):  # the stored rows' norms (sparse rows' kernel values)
            if plan is not None and MAPS[plan.map].norms is not None:
                MAPS[plan.map].norms(F, I, R, j, dim)
        # shared work its map finds from the arrays: members with the same kernel map read the first
        # one's features (NOGD's two steps at one width), Fourier members whose directions are twice
        # another's take the double angle of its features
        for j, plan in enumerate(self.plans):
            if plan is not None and MAPS[plan.map].share_arrays is not None:
                MAPS[plan.map].share_arrays(F, I, R, j, dim)
        order, placed = [], set()
        while len(order) < N:  # sources first (a member reading a source placed before it)
            for j in range(N):
                if j not in placed and (I[j, SRC] == j or int(I[j, SRC]) in placed):
                    order.append(j)
                    placed.add(j)
        I[:, ORDER] = order
        self.py = [j for j, plan in enumerate(self.plans) if plan is None]  # (PY members)
        #: whether a member runs in the engine's second root (Component.in_second_root: its map's or step's)
        self.dictionaries = any(p is not None and (MAPS[p.map].in_second_root or STEPS[p.step].in_second_root)
                                for p in self.plans)
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
            step = STEPS[plan.step]
            if step.sync is not None:  # (its own counter, a deferred update)
                step.sync(plan, m, I[j], self.F)
            elif plan.counts is not None:
                setattr(m, plan.counts, int(I[j, M]))
            for attr, role in plan.extra_counts:  # (the window's write position)
                setattr(m, attr, int(I[j, COUNTER]))
            _write_back_counters(plan, m, self.F, int(I[j, O_G]))


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
    becomes a view of it, or None). The map's parts (its ``layout``); a map with features then
    its weights, the step's arrays (its ``layout``) and the features' slots (four rows) and work;
    then a declared step state (:func:`_step_block`)."""
    I[MAP], I[STEP], I[RULE] = plan.map_code, plan.step_code, plan.rule_code
    R[KIND], R[KA], R[KB_], R[KC] = plan.kernel
    R[ETA], R[LR], R[CB], R[MERGE] = plan.eta, plan.lr, plan.C, plan.merge_threshold
    mp, st = MAPS[plan.map], STEPS[plan.step]
    parts, kb = mp.layout(plan, m, I, R)
    if mp.has_features:
        k = int(I[K])
        parts += [(O_W, getattr(m, plan.w), plan.w)] + (st.layout(plan, m, I, R) if st.layout else [])
        parts += [(O_Z, 4 * k, None)] + ([(O_KB, kb, None)] if kb else [])
    return parts + _step_block(plan, m)

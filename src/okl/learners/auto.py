"""``auto``: one learner that runs a pool of widths, steps and learner families and mixes them online.

A user with a new stream does not know which learner, kernel width or step to use. ``auto`` runs a
fixed *pool* of okl learners side by side and predicts with an online aggregation of their
decisions (the Raker / AdaRaker idea of Shen, Chen & Giannakis, JMLR 2019 — a dictionary of
kernels, one learner per kernel, exponentially updated weights — extended to several learner
families and steps, with a learning rate that needs no tuning and a share step that follows a
changing best member; in regression, a stacking layer beside the mixture).

Pool (built from the stream's own scale; every member predicts before the label and learns every
round, as it would alone: see "Shared work" for the one draw its FOGD members share)
    The centre width sigma_0 is chosen like every okl learner's (no kernel given: from the first
    :data:`~okl.kernels.WIDTH_WINDOW` rows, :func:`okl.kernels.scale_sigma`, the running label mean
    predicting those rows, which are then replayed; a kernel given: its width). Around it, a grid of
    widths sigma_0 x {1/2, 1, 2} (a factor 2 either way: the kernel's length scale is only known to
    this order from unlabelled rows), and for each family its library step plus one faster step:

    ==============  =======================================  =========================================
    family          classification (hinge)                   regression (squared loss)
    ==============  =======================================  =========================================
    NOGD (Nystrom)  3 widths x AdaGrad rate lr in {1, 3}      3 widths x eta in {0.2, 0.5}
    FORKS (sketch)  3 widths (second-order, its own step)     3 widths
    FOGD (random    3 widths, eta = 1 (the fast step)         3 widths, eta = 0.5 (the fast step)
    features)
    FOGD, L1        3 L1 widths, eta = 1, D = 12B directions  3 L1 widths, eta = 0.5, D = 12B
    (Laplacian)
    linear          eta in {0.2, 1}                           eta in {0.02, 0.2}
    window          the last 2B rows, width sigma_0 / 4       the same (targets)
    (smoother)
    affine          linear on scale="affine" inputs,          the same, degree 2 (every pairwise
    (linear, the    logistic loss, eta = 0.05                 product, while d (d + 1) / 2 <= 8B),
    curvature                                                 eta = 0.2
    undone)
    ==============  =======================================  =========================================

    The L1 family: FOGD on the Laplacian kernel exp(-||x - x'||_1 / sigma_1) (random Fourier
    features with Cauchy directions, :meth:`okl.kernels.Laplacian.sample_frequencies`), at the
    widths sigma_1 x {1/2, 1, 2}, where the centre width sigma_1 = E||x - x'||_1 / 2 is chosen from
    the same window as sigma_0 (:func:`okl.kernels.scale_sigma_l1`: the kernel is exp(-2) at the
    mean pairwise L1 distance, as the Gaussian's sigma_0 gives exp(-2) at the root-mean-square
    distance). Why it is in the pool: the Gaussian kernel sees the Euclidean distance, in which a
    row that differs from another by a lot in one feature is as far as one that differs a little
    in many; rule-structured streams (thresholds on single features, categorical codes: River's
    Agrawal, RandomTree, Phishing; splice's one-hot nucleotides) are what the L1 distance and
    axis-aligned structure fit. Measured with docs/results/scripts/auto_pool.py
    (docs/results/auto-pool.md, 42 River stream configurations and 16 staged sets): Agrawal +4.6
    / +3.8 points, RandomTree +4.0 / +9.2 (+3.5, +0.5, +1.3 on three other settings), Phishing +1.3,
    splice 21.98 -> 11.91 % mistakes (first 20,000 rows), cpusmall -22 %, parkinson -11 %,
    Friedman and Mv -10 % loss; nothing worse by more than 0.03 points or 0.1 %. Only when auto chooses its width (no ``kernel`` given): with a kernel
    given the L1 members leave the pool (its width is a length of that kernel, not of the L1
    distance). Capacity: the L1 family draws D = 4 x 3B = 12B directions (budget scale
    :data:`~okl.learners._autopool.L1_BUDGET_SCALE`; the Gaussian family 4B). The Laplacian
    kernel is not smooth (its spectrum, the Cauchy density, decays polynomially), so its random
    features approximate it more slowly than the Gaussian's, and the rule-structured streams it
    is for need the detail: River's RandomTree gap to SRP(10) -3.62 / -1.38 / -0.68 / -0.53
    points (mean of seeds 1 and 2) at D = 400 / 800 / 1000 / 1200, Agrawal +0.9 to +2.0,
    Mv -10 to -14 %, splice -2.6 to -4.7 points (docs/results/auto-pool.md). 12B costs 5-9 %
    of auto's per-event time against 8B. Cheaper rounds elsewhere pay it back: the River adapters'
    learn_one reuses predict_one's row, the NOGD pair shares its transition, and FORKS's ONS update
    is deferred into the next product (Engine.sync). Interleaved with River's ARF(10) on Agrawal,
    auto was then 1 % faster than the 8B pool before them (8.98, 8.42, 8.35x against 8.87, 8.32,
    8.25x); the window phase's smoother below costs about 3 % of that (8.33, 8.44, 8.25x against
    8.61, 8.73, 8.45x without it). run() on codrna pays the 12B family in full: 6 % slower. Cost:
    one draw shared by the three widths (below).

    Inside the width window (the first rows, before the pool exists) auto predicts by the window
    member's rule over the rows buffered so far, not by the running label mean
    (:meth:`Auto._window_estimate`; River's Phishing +1.0 point, all of it in its first 50 rows).

    The window member (:mod:`okl.learners.window`): the Nadaraya-Watson smoother over the last
    2 B rows, f(x) = sum_i kappa(x_i, x) y_i / sum_i kappa(x_i, x) at the width sigma_0 / 4 (a
    neighbourhood, not a length scale). Why it is in the pool: every other member fits a function
    of bounded complexity (B support vectors, landmarks or 4B directions) with steps, so a stream
    whose classes sit in many small regions that move (River's RandomRBFDrift: 50 moving
    centroids) outruns them, where a nearest-neighbour vote over recent rows follows it at once;
    it fits nothing, so it cannot diverge. Measured (docs/results/window.md, the same three
    suites): RandomRBFDrift 88.91 / 87.48 -> 92.77 / 91.52 (River's KNN 92.49 / 91.08; held-out
    seed 3 +4.0), ChickWeights MAE 22.65 -> 21.40; the other River streams and staged sets within
    0.1 points. Cost: one kernel row over the window, O(2 B d) a round: 3-6 % of auto's run() on
    codrna (d = 8; 300 rows cost 5-10 %, 500 rows 10-13 %). With three or more classes it
    leaves the pool (:meth:`Auto._retire_windows`: the K-output loss credits its -1 votes on the
    absent classes; digits 86.14 % with it, 97.38 % without).

    The affine member (:mod:`okl.scaling`, ``scale="affine"``; appended last): the linear learner
    on the window's affine coordinates, u_j = T clip((x_j - c_j) / s_j, -2, 2) with symlog's
    centre and spread and T = 2 / ln 3 its slope at the median (auto maps the input once, with
    symlog; this member undoes the map, :func:`okl.scaling.affine_from_symlog`). Why it is in the
    pool: the symlog map is curved, so on symlog inputs a linear model fits a bent boundary to a
    linear concept, and a kernel member needs many rows to straighten it; River's Hyperplane
    (a drifting linear concept, where River's logistic regression on standardised inputs is the
    best model) loses 1.7 points to that curvature (the linear learner alone: 90.2 % on symlog,
    92.4 % on affine inputs). Classification takes the logistic loss at eta = 0.05 (the least
    regret of eta in {0.02, ..., 0.5} alone on Hyperplane; on inputs of spread about 1 the hinge
    at a small step updates on almost every row and its decision hardly grows). Regression takes
    the degree-2 features [u, (u_i u_j)_{i <= j}, 1] with the NLMS step eta = 0.2: what a
    polynomial kernel of degree 2 spans, explicitly (River's Planes2D is a plane gated by a
    +-1 feature, a product; Friedman's target holds x_1 x_2 and (x_3 - 1/2)^2), in d (d + 3) / 2
    + 1 weights; while the products number at most 8B (one FOGD member's 2D features, 780 at
    d = 39 with B = 100) and degree 1 beyond, so the member never costs more than a FOGD member.
    Measured (docs/results/auto-pool.md): Hyperplane 90.69 / 91.24 -> 91.47 / 92.74 (with the
    0-1 half of the loss below: 92.23 / 93.13), Planes2D MAE 1.048 -> 0.951, Friedman 1.642 ->
    1.501, FriedmanDrift 1.92 -> 1.69; the other River streams within 0.06 points. Cost: O(d)
    (classification) or O(d^2) (regression) a round; in classification about 0.4 us an event,
    as a linear member (four on codrna: 2.04 against 1.89 us a round for four plain ones). Only under
    auto's symlog or affine map: with a kernel given or ``scale=None`` it leaves the pool.

    Why these steps: FOGD's features have ||z|| = 1, so eta = 1 is the step at which one hinge
    update moves f(x_t) by the whole margin (the passive-aggressive step: a stream that changes
    fast, e.g. the adversarial streams, needs it); for the squared loss eta = 0.5 is the
    normalised-LMS step that fits the current target in one update (2 eta ||z||^2 = 1, inside
    the stability bound 2). FOGD is the pool's fast-tracking member and runs only this step: the
    library step on the same kernel is covered by NOGD and FORKS, and a FOGD member costs as much
    as two widths of NOGD (2D = 800 sines and cosines per round, shared as below). NOGD's AdaGrad rate lr is the largest move of one coordinate in one
    round; lr = 3 lets a coordinate cross the margin in one step. The linear learner's inputs are
    not normalised, so its regression steps are the library step and one ten times smaller.
    Every member takes ``budget`` (memory O(budget d) each) and ``random_state`` (derived from
    auto's generator, so one seed fixes every member).

Aggregation (every round; no hindsight)
    Member decisions are *clipped* to the range where the loss is informative — [-1, 1] for
    labels (the hinge margin: beyond it a member is not more right), the range [min y, max y] of
    the targets seen so far for regression (a prediction outside the observed range is never
    closer to a target inside it) — giving c_i. The prediction is the weighted mean
    f = sum_i w_i c_i, and each member pays

    * classification: l_i = (1 - y c_i) / 4 + [sign(c_i) != y] / 2 in [0, 1]: half the clipped
      hinge loss, half the member's 0-1 loss (sign(0) = +1, as auto predicts;
      :data:`okl.engine.aggregation.ZERO_ONE_SHARE`). On a mistake of sign(f), y f <= 0, so the
      hinge half of the members' weighted loss is (1 - y f) / 4 >= 1/4: mistakes(auto) <=
      4 sum_t sum_i w_ti l_ti, bounded by 4 (the best member's loss plus the aggregation
      regret). Why half 0-1: under the clipped hinge alone a member that is right with a small
      margin (a logistic member near a linear boundary) pays almost as much as one that is
      wrong (margin 0.3: 0.35 a round against 0.2 for a member saying +-1 that errs 20 % of the
      time), and lost its weight to confident members that err more; the 0-1 half credits the
      sign it got right. Measured (docs/results/auto-pool.md): River's Hyperplane 91.47 /
      92.74 -> 92.23 / 93.13, Sine +0.23, LED +0.32, Mixed +0.10, held-out SEA, Sine and
      Hyperplane settings +0.2 to +0.4, the staged sets within +0.15 points or better; the 0-1
      loss alone (no mistake bound) gained a little more on some streams and lost 0.16 points
      on Phishing and 0.10 on Agrawal s2;
    * regression: l_i = (c_i - y)^2, the squared loss of the clipped member; the mixture's loss is
      at most sum_i w_i l_i (convexity).

    Regression's stacking layer (:func:`okl.engine.aggregation._stack_round`): the mixture f is
    a convex combination, so it is never better than the best convex mixture of the members in
    hindsight. Where members err in different directions (one lags a trend, another overshoots
    it) an affine combination beats every convex one. The layer fits it online, as a ridge
    regression of the mixture's residual y - f on the members' deviations r_i = c_i - f:
    v minimises lambda ||v||^2 + sum_s (y_s - f_s - v . r_s)^2 over the rounds so far
    (recursive least squares, O(N^2) a round). The ridge pulls v towards 0, i.e. towards the
    mixture itself. lambda = :data:`~okl.engine.aggregation.STACK_RIDGE` (1) x the variance of
    the first :data:`~okl.kernels.WIDTH_WINDOW` targets, so the layer is invariant to the
    targets' units; it starts learning once lambda is fixed. The stack's prediction
    s = f + v . r is clipped to the target range as the members are. A second AdaHedge with
    fixed share (the same rule as above, two experts) weighs f and s by their squared losses,
    and auto predicts (1 - u) f + u s with u the stack's weight, or u = 0 while the stack's
    cumulative squared loss is not below the mixture's (the gate). Why the gate: under spiky
    targets AdaHedge's rate follows the spikes' losses, so its weights move slowly. River's
    WaterFlow (a flow level with abrupt drops) kept the stack at a 16-37 % share after its first
    100 rows, while it was worse than the mixture in every 100-row segment: MAE +19 % without
    the gate, +3.9 % with it. ``diagnostics()["stack_share"]`` is u. Measured
    (docs/results/auto-pool.md: every regression stream and set we have, MAE or mean squared
    loss, the mixture alone -> with the layer):

    * River: ChickWeights 21.41 -> 19.84 (River's best, AMF, 19.86), Friedman 1.451 -> 1.340,
      FriedmanDrift 1.668 -> 1.596, Mv 3.930 -> 3.772, Planes2D 0.948 -> 0.946,
      TrumpApproval 0.2151 -> 0.2144;
    * held out: Friedman s2 1.415 -> 1.308, FriedmanDrift 1.859 -> 1.716, Planes2D s2
      0.9897 -> 0.9903, Mv s2 3.717 -> 3.488; six more generator settings -0.3 to -9 %;
      River's AirlinePassengers 27.5 -> 24.2; WaterFlow 0.768 -> 0.798 (+3.9 %, the one loss);
    * staged (first 20,000 rows, permutation 0): cpusmall 0.00238 -> 0.00209, cadata
      0.0167 -> 0.0153, parkinson 0.0138 -> 0.0113.

    The layer runs beside the engine (:func:`okl.engine.aggregation.stack_predict`,
    ``stack_learn``, ``stack_rows``), on the mixture the engine returns and the member decisions
    it leaves. Inside the engine it cost every cold start, classification's too, about 1.5 s of
    compiling (``firstcontact.py --quick``: auto's first run() 12.4-13.2 s against 11.3-11.4 s);
    beside it, 12.1 s against 12.2-12.5 s in runs that alternated. Replayed offline on the
    members' decisions (before the gate), lambda at 0.1 and 10 times this gave the same results
    within 1 %. Classification keeps the mixture alone: agg holds
    the layer's state only in regression with two or more members. A model file from before the
    layer (a four-entry agg) runs the mixture alone.

    Weights: exponential weights w_i ~ exp(-eta_t Lbar_i) with the AdaHedge learning rate
    (de Rooij, van Erven, Grunwald & Koolen, JMLR 2014) eta_t = ln N / Delta_{t-1}, Delta the
    cumulative mixability gap: no tuning, invariant to the scale of the losses (so targets in
    any units work), regret O(sqrt(L* ln N) + ln N) against the best member. To follow a stream
    whose best member changes, every round ends with a *fixed share* step (Herbster & Warmuth
    1998) with the decreasing switching rate alpha_t = 1 / (t + 1) (Koolen & de Rooij 2013; no
    parameter): w <- (1 - alpha_t) w + alpha_t / N. The share is applied to the weights the next
    round uses and stored back as effective cumulative losses Lbar (Lbar_i = -ln w_i / eta), so
    that when eta later shrinks the weights spread as AdaHedge's do.

    K classes (:class:`~okl.runtime.multiclass.MultiClass`): every member has K one-vs-rest
    outputs c_ik (clipped to [-1, 1]), the mixture's outputs are f_k = sum_i w_i c_ik with one
    weight per member, and a member pays half the mean of its outputs' clipped hinge losses,
    (1 / 2K) sum_k (1 - y_k c_ik) / 2 (y_k = +1 for the label's class, -1 else), plus half its
    0-1 loss (its argmax class, the last of a tie, is not y). The hinge half is linear in c, and
    a wrong argmax of the mixture (some k != y with f_k >= f_y) costs (1 - f_y) / 2 + (1 + f_k)
    / 2 >= 1 on those two outputs, so the weighted loss is at least 1 / 2K: mistakes(auto) <=
    2K sum_t sum_i w_ti l_ti, bounded by 2K (the best member's loss plus the same aggregation
    regret). Two mirrored outputs (a binary learner turned multi-class) pay exactly the binary
    loss (the tie at c = 0 goes to the +1 class, as sign(0) = +1).

    A member whose decision becomes non-finite (its step diverged on this stream) is dropped from
    the pool from that round on (weight 0, no more updates); ``auto`` only fails if every member
    does.

Shared work (what the members share, and what that changes)
    * NOGD's two steps at one width (classification): their stage 1 is the same KOGD (same eta,
      kernel, budget), so their support vectors and Nystrom map are equal, and the engine
      computes the map's features once a round for both (detected from the maps themselves, so
      nothing changes: each is exactly NOGD alone; in regression the steps are stage-1 steps too,
      the maps differ and nothing is shared).
    * The FOGD members draw their directions once per kernel family (Gaussian, Laplacian; the
      Cauchy scale doubles as the Gaussian's does): the widest member's U (sigma_0 x 2) is drawn
      from its own seed and the others take U x 2 (sigma_0) and U x 4 (sigma_0 / 2), exact
      multiples, so a round computes one set of projections and sines / cosines and the two
      narrower members' features by the double angle (cos 2p = (cos p - sin p)(cos p + sin p),
      sin 2p = 2 sin p cos p; within a few ulp of sin / cos). What that changes: the three FOGD
      members are no longer independent draws (their random-feature errors are correlated
      across widths); each is still an exact FOGD with a valid draw for its width. auto's
      quality before -> after on 11 staged sets (within +0.05 points or better, regression
      -5 % to 0 %): docs/results/per-event-speed.md.
    * Landmarks are not shared across widths: NOGD's and FORKS's landmarks are the support
      vectors of their own stage 1, which depends on the width; the kernel row is the smallest
      part of a kernel member's round (the projection on the map is ~4x it).

Cost: one round of ``auto`` is one round of every member plus an O(N) aggregation (in regression
O(N^2) more for the stacking layer: 1.6 against 1.0 us a round at N = 19, in a compiled call of its
own beside the engine's, so that classification's cold start compiles none of it; regression's
first run compiles it, about 2 s on a cold cache), all in one
compiled call per event (:mod:`okl.engine.core`: predict_one one call for every member's
features and the mixture, learn_one one call for every member's step and the weights, on the
features predict_one left; the row check, input scale and calibration's step in the same calls,
:class:`okl.engine.roots.AutoPlan`); transitions and FORKS's update rounds run in the members'
own Python. ``run``, ``learn_many`` and ``okl stream`` take the same per-row arithmetic, so
per-event decisions equal run()'s bit for bit. N = 19 members by default (14 before the L1 family, whose
three members add about 15-20 % to an event; 17 before the window member, 18 before the affine
one); on codrna (d = 8, B = 100)
a round in stage 2 costs about 11-12 us in run() (NOGD, FORKS with 3 ONS steps on 100 x 100
inverses, FOGD, linear and the aggregation) and an event about 16 us (the kernel maps' features one
row a pass over the map, against four in run(); docs/results/per-event-speed.md). Memory is the
members' (bounded by the budget) plus O(N) (O(N^2) in regression) and one block of N decisions.
benchmarks/auto.py measures the rounds per second beside each member's, benchmarks/events.py per
event beside River's models.

Transparency: ``diagnostics()`` (and so ``Trace.diagnostics``) holds the final weight of every
member (``weight[<member>]``), the member that carries the most weight (``carried_by``), the
learning rate and the number of members alive.

Model files: the members are saved as complete okl model files of their own, concatenated in one
byte array (``members_blob_``; each is checked against its own state declaration when loaded).
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from okl._threads import one_blas_thread
from okl._validation import check_bool, check_int
from okl.kernels import RBF, Laplacian, check_kernel, scale_sigma, scale_sigma_l1
from okl.engine.aggregation import (  # noqa: F401 (aggregate_predict, aggregate_rounds, _weights: re-exported)
    AGG_HEAD, HI, LO, STACK_HEAD, _weights, agg_size, aggregate_predict, aggregate_rounds, new_agg, stack_share)
from okl.engine.roots import EnginePaths, prepare_engine
from okl.learners._autopool import (WIDTHS, WINDOW_WIDTH, _check_members, _label,  # noqa: F401 (re-exported)
                                   _share_directions, default_pool)
from okl.engine.core import TRANSITION, Engine
from okl.learners.nogd import NOGD
from okl.runtime.base import Arr, Learner, Num, Seq, StateSpec, _event_state, learner_class, make, register
from okl.runtime.events import _drop_event_cache
from okl.runtime.state import MAX_CLASSES
from okl.losses import get_loss
from okl.scaling import RULE_CODES, check_scale, scale_rows, window_scale


@register("auto")
class Auto(EnginePaths, Learner):
    """A pool of okl learners (widths x steps x families) mixed online; see the module docstring.

    Parameters
    ----------
    budget : int, default 100
        Budget of every kernel member (support vectors / landmarks; FOGD: D = 4B directions).
    loss : str or Loss, default "hinge"
        "hinge" (and the other classification losses: members learn with it; the aggregation
        uses the clipped hinge loss) or "squared" (regression).
    kernel : Kernel or None, default None
        None: the centre width is chosen from the first rows (:func:`okl.kernels.scale_sigma`).
        A kernel with a ``sigma`` gives the centre width; other kernels are used as given by the
        kernel members (no width grid; FOGD members need a shift-invariant kernel and are left
        out otherwise).
    members : list of (name, width multiplier or None, params) or None
        None: :func:`default_pool`. Width multiplier None: the member takes no kernel. Besides the
        member's hyperparameters, params may hold ``kernel="laplacian"`` (an L1 member, its width
        from the window's L1 distances), ``budget_scale`` (its budget in units of auto's, default
        1; the window 2) and ``scale="affine"`` (a linear member of the affine family).
    horizon : int or None
        Passed to members that take it (FORKS's update cycle).
    [[center_targets, scale]]
        auto scales the input once, for every member (its members are built with ``scale=None``).
    random_state : int or None
        Seeds the members (each gets its own seed from auto's generator).

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> m = okl.make("auto", random_state=0)
    >>> trace = m.run(X, y)
    >>> 20.0 < trace.mistake_rate < 32.0
    True
    >>> sum(v for k, v in trace.diagnostics.items() if k.startswith("weight[")) > 0.999
    True
    """

    #: K outputs of a one-member pool (a single learner in :class:`~okl.runtime.multiclass.MultiClass`):
    #: give the member's outputs rather than the mixture's, which clips them to [-1, 1] (several
    #: outputs at the clip would tie for the argmax); set by MultiClass, never saved
    _raw_member: bool = False
    #: (K, members) the last _grow_outputs retired (undone by _drop_last_output); never saved
    _retired_at: tuple | None = None

    _state_attrs = ("member_index_", "L_", "alive_", "agg_", "members_blob_", "member_sizes_", "n_outputs_")
    _divergence_hint = "nothing: every member diverged; pass members with smaller steps"

    def __init__(self, *, budget: int = 100, loss="hinge", kernel=None, members=None,
                 horizon: int | None = None, center_targets: bool = True, scale: str | None = "auto",
                 random_state: int | None = None):
        self.scale = check_scale(scale)
        self.budget = check_int("budget", budget, 1)
        self.loss = get_loss(loss).name
        self.kernel = check_kernel(kernel)
        self.members = _check_members(members)
        self.horizon = None if horizon is None else check_int("horizon", horizon, 1)
        self.center_targets = check_bool("center_targets", center_targets)
        self.random_state = random_state
        self._pool: list[Learner] | None = None

    # ---- pool -----------------------------------------------------------------------------

    def member_specs(self) -> list[list]:
        """The pool as [name, width multiplier, params] (``members`` or the default pool)."""
        if self.members is not None:
            return [list(m) for m in self.members]
        return [[n, w, dict(p)] for n, w, p in default_pool(self.task)]

    def member_labels(self) -> list[str]:
        return [_label(*spec) for spec in self.member_specs()]

    def _member_kernel(self, width, family=None):
        """The kernel of a member at ``width`` times the centre width: auto's own kernel family, or
        ``family="laplacian"``: a Laplacian kernel whose centre width is chosen from the same window
        (:func:`okl.kernels.scale_sigma_l1`); None when auto was given a kernel (no L1 width then)."""
        if family is not None:
            if family != "laplacian":
                raise ValueError(f"members: a member's kernel family must be 'laplacian', got {family!r}")
            sigma1 = getattr(self, "_sigma_l1", None)
            return None if sigma1 is None else Laplacian(sigma=float(sigma1) * width)
        base = self.kernel_
        sigma = getattr(base, "sigma", None)
        if width is None or sigma is None:
            return base
        return type(base)(sigma=float(sigma) * width)

    def _build_member(self, name, width, params, seed, dim) -> Learner | None:
        from okl.runtime.base import accepts

        kw = dict(params)
        affine = kw.get("scale") == "affine"  # a member of the affine family (module docstring)
        if affine:
            if name != "linear":
                raise ValueError(f"members: scale='affine' is a linear member's input, not {name}'s")
            if self._scale_rule() not in ("symlog", "affine"):
                if self.members is not None:
                    raise ValueError("members: an affine member needs auto's input map symlog or affine "
                                     f"(scale={self.scale!r} gives {self._scale_rule()!r})")
                return None  # a kernel given or scale=None: the features as given, no affine member
            if self.members is None and kw.get("degree") == 2 and dim * (dim + 1) // 2 > 8 * self.budget:
                kw["degree"] = 1  # the products cost at most one FOGD member's 2D = 8B features
        kw["random_state"] = seed
        scale = kw.pop("budget_scale", learner_class(name)._budget_scale)  # the window: 2 B rows
        if accepts(name, "budget") and "budget" not in kw:
            kw["budget"] = max(1, round(self.budget * scale))
        if accepts(name, "horizon") and "horizon" not in kw and self.horizon is not None:
            kw["horizon"] = self.horizon
        if accepts(name, "loss") and "loss" not in kw:
            kw["loss"] = self.loss
        if accepts(name, "center_targets"):
            kw["center_targets"] = False  # auto drives its members' own models and centres once, itself
        if accepts(name, "scale"):
            kw["scale"] = None  # auto scales the input once, for every member (okl.scaling)
        family = kw.pop("kernel", None)
        if width is not None:
            if not accepts(name, "kernel"):
                raise ValueError(f"members: {name} takes no kernel; give width None")
            kw["kernel"] = self._member_kernel(width, family)
            if kw["kernel"] is None:  # an L1 member with a kernel given: left out (no L1 width)
                if self.members is not None:
                    raise ValueError("members: an L1 (kernel='laplacian') member needs auto's width "
                                     "chosen from the stream (kernel=None)")
                return None
        elif family is not None:
            raise ValueError("members: a member with a kernel family needs a width multiplier")
        try:
            member = make(name, **kw)
        except ValueError:
            if self.members is not None:
                raise
            return None  # a default member that cannot take this kernel or loss (e.g. FOGD, polynomial)
        if member.task != self.task:
            raise ValueError(f"members: {name} learns a {member.task} task, auto a {self.task} task")
        member._unmap = self._unmaps(params)
        return member

    def _unmaps(self, params) -> bool:
        """Whether a member with ``params`` undoes auto's symlog map (a member of the affine family
        under auto's default map; :func:`okl.learners.linear.linear_features`)."""
        return params.get("scale") == "affine" and self._scale_rule() == "symlog"

    def _advance(self, X, y):
        prepare_engine(self.n_outputs_ > 0)  # (a cold cache: its compile starts with the first rows)
        return super()._advance(X, y)

    def _start(self, dim):
        X = getattr(self, "warmup_X_", None)  # the window's rows as the members see them
        self._sigma_l1 = scale_sigma_l1(X) if self.kernel is None and X is not None and len(X) else None
        pool, keep = [], []
        for i, (name, width, params) in enumerate(self.member_specs()):
            seed = int(self._rng.integers(2 ** 31 - 1))
            member = self._build_member(name, width, params, seed, dim)
            if member is not None:
                member._ensure_started(dim)
                pool.append(member)
                keep.append(i)
        if not pool:
            raise ValueError("auto: no member can learn with this kernel and loss")
        _share_directions(pool)
        if self.n_outputs_:
            for member in pool:
                member._set_outputs([1.0] * self.n_outputs_)
        self._pool = pool
        n = len(pool)
        self.member_index_ = keep
        self.L_ = np.zeros(n)
        self.alive_ = np.ones(n)
        self.agg_ = new_agg(n, pool[0].task == "classification")
        self.members_blob_ = None
        self.member_sizes_ = None
        if self.n_outputs_ >= 3:
            self._retire_windows()

    def _window_estimate(self, x):
        """Inside the width window (the first rows, before the pool exists), the window member's
        rule on the rows buffered so far: the kernel smoother over them (the weights of
        :func:`okl.learners.window.window_decision`), under the input map and width that the first
        m rows give (:func:`okl.scaling.window_scale`, :func:`okl.kernels.scale_sigma` x 1/4; m the
        largest power of two at most the n rows buffered: the map is refitted as the rows double,
        as the pool fixes it from the whole window at 50). Only rows before x and their labels (or
        residuals) are used. Why: the running label mean predicts these rows at the majority rate,
        which on a short stream is a visible share of its mistakes (River's Phishing, 1,250 rows:
        the first 50 at 50 % against SRP(10)'s 82 %). Cost O(n d) a row for n <= 50 buffered rows
        (in NumPy: a compiled version cost a cold start seconds of compiling for 50 rounds).
        None with a kernel given (no width to choose), fewer than two rows, or for a one-member
        pool standing in for a single learner (``_raw_member``: that learner's running mean)."""
        n = self.n_seen_
        if n < 2 or not self._chooses_width() or self._raw_member:
            return None
        x = np.asarray(x, dtype=float)
        ev = _event_state(self)
        key = (n, self.n_outputs_, x.tobytes())
        cache = ev.window if ev.window is not None and ev.window["rows"] is self.warmup_X_ else None
        if cache is not None and cache["key"] == key:  # (learn_one asks again for predict_one's row)
            return cache["value"].copy() if self.n_outputs_ else cache["value"]
        m = 1 << (n.bit_length() - 1)
        if cache is None or cache["m"] != m:  # the map and width of the first m rows
            rule = self._scale_rule()
            center, spread = window_scale(self.warmup_X_[:m], rule) if rule is not None else (None, None)
            cache = ev.window = {"rows": self.warmup_X_, "m": m, "rule": rule, "center": center, "spread": spread,
                                 "S": np.empty_like(self.warmup_X_), "done": 0, "sigma": None, "key": None}
        S = cache["S"]
        done = cache["done"]
        if done < n:  # the rows buffered since, mapped
            S[done:n] = self._window_map(self.warmup_X_[done:n], cache)
            cache["done"] = n
        if cache["sigma"] is None:
            cache["sigma"] = scale_sigma(S[:m]) * WINDOW_WIDTH
        xs = self._window_map(x[None, :], cache)[0]
        d2 = ((S[:n] - xs) ** 2).sum(axis=1)
        sigma = cache["sigma"]
        w = np.exp(-(d2 - d2.min()) / (2.0 * sigma * sigma))  # (relative to the nearest row: sum >= 1)
        labels = self.warmup_y_[:n]
        if self.n_outputs_:  # the K outputs' votes (2 S_k - S) / S, as window_decision's
            mass = np.bincount(labels.astype(np.int64), weights=w, minlength=self.n_outputs_)[:self.n_outputs_]
            value = (2.0 * mass - w.sum()) / w.sum()
        else:
            value = float(w @ labels / w.sum())
        cache["key"], cache["value"] = key, value
        return value.copy() if self.n_outputs_ else value

    @staticmethod
    def _window_map(rows, cache):
        """Rows under the window phase's provisional map (a pending spread stays pending)."""
        if cache["rule"] is None:
            return rows
        out = np.empty_like(rows)
        scale_rows(rows, cache["center"], cache["spread"], False, np.inf, RULE_CODES[cache["rule"]], out)
        return out

    def _retire_windows(self) -> list[int]:
        """Three or more classes: a window member among others leaves the pool (weight 0, no more
        rounds, as a diverged member); returns the members retired now. Its one-vs-rest votes are -1
        on every class absent from its neighbourhood, which the K-output loss credits on K - 1
        outputs a round: on scikit-learn's digits (10 classes, 5-fold) it took 97 % of the weight and
        auto fell from 97.38 to 86.14 % (the window alone: 81 % on the first fold;
        docs/results/window.md). With two mirrored outputs the loss is the binary one and it stays;
        alone (a one-member pool) it stays."""
        retired = []
        if len(self._pool) > 1:
            for j, member in enumerate(self._pool):
                if member.name == "window" and self.alive_[j] > 0.0:
                    self.alive_[j] = 0.0
                    retired.append(j)
        return retired

    # ---- K outputs (okl.runtime.multiclass.MultiClass) -------------------------------------

    def _set_outputs(self, signs) -> None:
        """K one-vs-rest outputs (see :meth:`Learner._set_outputs`): every member's model becomes
        K rows (``signs``: copies or mirrors of what it learned, for a binary learner turned
        multi-class), and the aggregation pays each member the mean of its K clipped hinge
        losses, which for two mirrored outputs is the binary loss it paid so far: the weights
        carry on unchanged. Labels are class indices from now on; the calibration of the binary
        decisions is dropped (the multi-class model has its own)."""
        if self.n_outputs_:
            raise ValueError("the learner has K outputs already")
        if self.task != "classification":
            raise ValueError("K outputs need a classification loss")
        if self.started_:
            for member in self.pool_:
                member._set_outputs(signs)
            if len(signs) >= 3:
                self._retire_windows()
            self._stale()
        if self.dim_ is not None and not self.started_:  # the window's labels -1/+1 as class indices
            pos = [o for o, s in enumerate(signs) if s > 0]
            neg = [o for o, s in enumerate(signs) if s < 0]
            self.warmup_y_ = np.where(self.warmup_y_ > 0, pos[0] if pos else 0, neg[0] if neg else 0).astype(float)
        self.calibration_ = None
        self.n_outputs_ = len(signs)

    def _grow_outputs(self, K: int) -> None:
        if self.started_:
            for member in self.pool_:
                member._grow_outputs(K)
            # the third class retires the window; undone with the output (_drop_last_output)
            self._retired_at = (int(K), self._retire_windows()) if K >= 3 else None
            self._stale()
        self.n_outputs_ = int(K)

    def _drop_last_output(self) -> None:
        if self.started_:
            for member in self.pool_:
                member._drop_last_output()
            if self._retired_at is not None and self._retired_at[0] == self.n_outputs_:
                for j in self._retired_at[1]:
                    self.alive_[j] = 1.0
            self._retired_at = None
            self._stale()
        self.n_outputs_ -= 1

    def _outputs(self, eng: Engine) -> np.ndarray:
        """The K outputs of the round just computed: the mixture's, or the one member's own
        (``_raw_member``)."""
        return eng.d[:eng.K].copy() if self._raw_member else eng.p.copy()

    def _stale(self) -> None:
        ev = _event_state(self)
        if ev.buf is not None:
            ev.buf.sync()
            ev.buf.stale = True
        _drop_event_cache(self)

    @property
    def pool_(self) -> list[Learner]:
        """The member learners (rebuilt from the model file after :meth:`load`); empty before the
        pool starts (while the width window fills)."""
        if self._pool is None:
            if not self.started_:
                return []
            self._unpack()
        else:
            self._sync()
        return self._pool

    # ---- protocol: every path runs the engine (okl.engine.core) -----------------------

    def _engine(self, ev=None) -> Engine:
        """The compiled layout of the pool (kept outside the learner, in its event state ``ev``:
        never saved or copied); rebuilt after a member's arrays were replaced or the pool or the
        aggregation's state reloaded."""
        ev = ev or _event_state(self)
        eng = ev.buf
        if eng is None or eng.stale or eng.pool is not self._pool or eng.L is not self.L_:
            _drop_event_cache(self)  # (a fast plan holds the engine's arrays)
            eng = ev.buf = Engine(self.pool_, self.dim_, self.L_, self.alive_, self.agg_)  # (pool_ syncs first)
            self.L_, self.alive_, self.agg_ = eng.L, eng.alive, eng.agg  # views of the engine's state
        return eng

    def _sync(self) -> None:
        """Bring the member objects up to date with the engine (their counters)."""
        ev = _event_state(self)
        if ev.buf is not None and ev.buf.pool is self._pool:
            ev.buf.sync()

    def __getstate__(self):
        self._sync()
        return self.__dict__.copy()

    def _python_steps(self, eng: Engine, x, y) -> None:
        """The members' steps the engine left to Python (a transition, an update round) on row x
        with label y; their decisions are in ``eng.d``."""
        eng.sync()
        eng.stale = True  # the members now hold the state; the layout is rebuilt from them
        _drop_event_cache(self)
        maps: dict = {}  # NOGD members with the same stage 1 share the transition's eigen-map
        with np.errstate(all="ignore"), one_blas_thread():  # (once a round: an entry costs 0.1-0.4 ms)
            for j in np.flatnonzero(eng.todo):
                member = self._pool[j]
                f = float(eng.d[j]) if not eng.K else eng.d[j * eng.K:(j + 1) * eng.K].copy()
                try:
                    if eng.todo[j] == TRANSITION and type(member) is NOGD:
                        key = (member.kernel_.spec(), member.k_, member.SV_[:member.m_].tobytes())
                        if key not in maps:
                            maps[key] = member._eigen_map()
                        member._transition(x, y, f, member.n_seen_, eigen_map=maps[key])
                    elif eng.todo[j] == TRANSITION:
                        member._transition(x, y, f, member.n_seen_)
                    else:
                        member._update_round(x, y, f)
                except (ValueError, FloatingPointError, ArithmeticError, np.linalg.LinAlgError):
                    self.alive_[j] = 0.0
                member.n_seen_ += 1

    def _python_decisions(self, eng: Engine, x, y=None) -> None:
        """The decisions of the members the engine does not run (``eng.py``) into ``eng.d``; with
        a label, they also learn the row."""
        for j in eng.py:
            if self.alive_[j] <= 0.0:
                eng.d[j] = np.nan
            elif y is None:
                with np.errstate(all="ignore"):
                    eng.d[j] = self._pool[j]._decision(x)
            else:
                eng.d[j] = self._member_block(self._pool[j], x[None, :], np.array([y]))[0]

    # ---- transparency ---------------------------------------------------------------------

    def weights(self) -> np.ndarray:
        """The weights the next prediction uses (one per member kept in the pool)."""
        n = len(self.L_)
        alive = int((self.alive_ > 0.0).sum())
        w = np.zeros(n)
        if alive:
            eta = math.log(alive) / self.agg_[0] if self.agg_[0] > 0.0 else np.inf
            _weights(self.L_, self.alive_, eta, w)
        return w

    def diagnostics(self):
        labels = self.member_labels()
        names = [labels[i] for i in self.member_index_]
        w = self.weights()
        alive = int((self.alive_ > 0.0).sum())
        out: dict[str, Any] = {f"weight[{name}]": float(v) for name, v in zip(names, w)}
        out["carried_by"] = names[int(np.argmax(w))]
        out["members"] = len(names)
        out["members_alive"] = alive
        specs = self.member_specs()
        for j, i in enumerate(self.member_index_):  # the L1 members' centre width (scale_sigma_l1)
            if specs[i][2].get("kernel") == "laplacian":
                out["sigma_l1"] = float(self.pool_[j].kernel_.sigma / specs[i][1])
                break
        out["aggregation_rate"] = float(math.log(alive) / self.agg_[0]) if self.agg_[0] > 0 and alive else None
        if len(self.agg_) > AGG_HEAD:  # regression: the stacking layer's share of the prediction
            u, gate = stack_share(self.agg_[AGG_HEAD:])
            out["stack_share"] = float(u) if gate else 0.0
        return out

    def _state_spec(self):
        n_specs = len(self.member_specs())
        return StateSpec(
            sizes={"n": (1, n_specs), "blob": (0, ...), "agg": (AGG_HEAD, agg_size(n_specs, False))},
            groups=(("members_blob_", "member_sizes_"),),
            fields={
                "member_index_": Seq("n", 0, n_specs - 1),
                "L_": Arr(("n",), low=0.0), "alive_": Arr(("n",), low=0.0, high=1.0),
                "agg_": Arr(("agg",), finite=False),
                "members_blob_": Arr(("blob",), dtype=np.int64, optional=True),
                "member_sizes_": Arr(("n",), dtype=np.int64, low=1, optional=True),
                "n_outputs_": Num(int, 0, MAX_CLASSES)},
            rules=((lambda m: m._pool is not None or m._unpack(), "members_blob_",
                    "does not hold valid model files of the members"),
                   (lambda m: len(m.agg_) in (AGG_HEAD, agg_size(len(m.L_), m._pool[0].task == "classification"))
                    and not np.isnan(m.agg_).any() and np.isfinite(m.agg_[:2]).all()  # (ranges: +-inf when empty)
                    and (len(m.agg_) == AGG_HEAD or np.isfinite(np.delete(m.agg_[AGG_HEAD:], [LO, HI])).all()),
                    "agg_", "is not a finite aggregation state of this pool's length")))

    # ---- model files ----------------------------------------------------------------------

    def _pack(self) -> None:
        blobs = []
        for member in self.pool_:  # (each member's model file, in memory)
            buffer = io.BytesIO()
            member._write_model(buffer)
            blobs.append(buffer.getvalue())
        self.member_sizes_ = np.array([len(b) for b in blobs], dtype=np.int64)
        # the member files, concatenated and packed into little-endian int64 words (the last one
        # zero-padded): a byte array would work as well, but int64 keeps every state array numeric
        # with the same range checks as the rest
        data = b"".join(blobs)
        self.members_blob_ = np.frombuffer(data + bytes(-len(data) % 8), dtype="<i8").astype(np.int64)

    def _unpack(self) -> bool:
        sizes, blob = self.member_sizes_, self.members_blob_
        if sizes is None or blob is None or (int(sizes.sum()) + 7) // 8 != blob.shape[0]:
            raise ValueError("member sizes do not match the member blob")
        data = blob.astype("<i8").tobytes()
        specs = self.member_specs()
        pool, pos = [], 0
        for j, size in enumerate(sizes):  # (each member's model file read from memory, in place)
            member = Learner._load_from(io.BytesIO(memoryview(data)[pos:pos + int(size)]), f"member {j}")
            pos += int(size)
            spec = specs[self.member_index_[j]]
            if member.name != spec[0] or member.dim_ != self.dim_:
                raise ValueError(f"member {j} is a {member.name} of dimension {member.dim_}, "
                                 f"expected {spec[0]} of dimension {self.dim_}")
            member._unmap = self._unmaps(spec[2])
            pool.append(member)
        self._pool = pool
        self.members_blob_ = self.member_sizes_ = None
        return True

    def _write_model(self, fh):
        if self.dim_ is not None and self.started_:
            self._pack()
            try:
                super()._write_model(fh)
            finally:
                self.members_blob_ = self.member_sizes_ = None
        else:
            super()._write_model(fh)

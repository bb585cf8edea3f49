"""The shared machinery of the mapped feature-evolvable baselines (:class:`_MappedBaseline`): a model
per feature space, the ROGD / FESL stages and their ensemble (see :mod:`okl.evolvable.baselines`)."""

from __future__ import annotations

import math

import numpy as np

from okl._validation import (check_choice, check_int, check_nonnegative, check_positive, check_random_state,
                             check_real)
from okl.evolvable.opfes import OldSpaceOGD, ensemble_rounds, omega_of, transition_gamma


# --------------------------------------------------------------------------------------------
# Templates


class _MappedBaseline(OldSpaceOGD):
    """ROGD / FESL on explicit features (see the module docstring). Subclasses define the old
    representation z1(x1), the mapping input g(x2) and the new model's features z2(x2)."""

    ensemble: bool = False

    def _common_params(self, step_size, reg, gamma, kernel_bound, horizon, omega_init, map_ridge,
                       evolving_update, clock, random_state):
        self.step_size = check_positive("step_size", step_size)
        self.reg = check_nonnegative("reg", reg)
        self.gamma = None if gamma is None else check_nonnegative("gamma", gamma)
        self.kernel_bound = check_positive("kernel_bound", kernel_bound)
        self.horizon = None if horizon is None else check_int("horizon", horizon, 1)
        self.omega_init = check_real("omega_init", omega_init, 0.0, 1.0, low_open=True, high_open=True)
        self.map_ridge = check_positive("map_ridge", map_ridge)
        self.evolving_update = check_choice("evolving_update", evolving_update, ("freeze", "learn"))
        self.clock = check_choice("clock", clock, ("model", "global"))
        self.random_state = check_random_state(random_state)

    # representation hooks (and z1, OldSpaceOGD._old_repr)
    def _map_input(self, X2):
        raise NotImplementedError

    def _new_repr(self, X2):
        raise NotImplementedError

    def _old_dim(self, dim):
        raise NotImplementedError

    def _map_dim(self, dim):
        raise NotImplementedError

    def _new_dim(self, dim):
        raise NotImplementedError

    def _draw_old(self, dim):
        pass

    def _draw_new(self, dim):
        pass

    def _finish_evolving(self):
        pass

    # stages
    def _start_old(self, dim):
        self._draw_old(dim)
        self.w1_ = np.zeros(self._old_dim(dim))
        self.clock1_ = np.zeros(1, dtype=np.int64)

    def _start_new(self, dim):
        if self.dim_old_ is None:
            self._start_old(1)
        self._draw_new(dim)
        g = self._map_dim(dim)
        self.C12_ = np.zeros((self.w1_.shape[0], g))
        self.C22_ = np.zeros((g, g))
        self.map_ = np.zeros((self.w1_.shape[0], g))
        self.w2_ = np.zeros(self._new_dim(dim))
        self.clocks_ = np.zeros(2, dtype=np.int64)
        self.log_odds_ = np.array([math.log((1.0 - self.omega_init) / self.omega_init)])
        self.gamma_ = 0.0

    def _evolving(self, X1, X2, y):
        out = np.empty(X1.shape[0])
        for s in range(0, X1.shape[0], self.chunk_size):
            e = s + self.chunk_size
            Z1 = self._old_repr(X1[s:e])
            G = self._map_input(X2[s:e])
            self.C12_ += Z1.T @ G
            self.C22_ += G.T @ G
            self._evolving_extra(Z1, X2[s:e], G, y[s:e])
            if self.evolving_update == "learn":
                self._learn_old(Z1, y[s:e], s, out[s:e])
            else:
                out[s:e] = Z1 @ self.w1_
        return out

    def _evolving_extra(self, Z1, X2, G, y):
        pass

    def _decide_evolving(self, x1, x2):
        return self._decide_previous(x1)

    def _begin_current(self):
        g = self.C22_.shape[0]
        mu = self.map_ridge * max(np.trace(self.C22_) / g, 1e-12)
        A = self.C22_ + mu * np.eye(g)
        self.map_ = np.linalg.solve(A, self.C12_.T).T      # Psi = C12 (C22 + mu I)^-1
        self._finish_evolving()
        self.clocks_[0] = self.clock1_[0]
        self.clocks_[1] = 0
        self.gamma_ = transition_gamma(self)
        self.C12_ = np.zeros((0, 0))
        self.C22_ = np.zeros((0, 0))

    def _current(self, X2, y):
        out = np.empty(X2.shape[0])
        mode = 0 if self.ensemble else 1
        if self.clock == "global":
            self.clocks_[:] = self.n_seen_
        for s in range(0, X2.shape[0], self.chunk_size):
            e = s + self.chunk_size
            Zr = self._map_input(X2[s:e]) @ self.map_.T
            Zn = self._new_repr(X2[s:e]) if self.ensemble else Zr
            ensemble_rounds(Zr, Zn, y[s:e], self.w1_, self.w2_, self.step_size, self.reg, self.clocks_,
                            self.log_odds_, self.gamma_, mode, out[s:e])
        return out

    def _decide_current(self, x2):
        x = x2[None, :]
        f1 = float((self._map_input(x) @ self.map_.T)[0] @ self.w1_)
        if not self.ensemble:
            return f1
        f2 = float(self._new_repr(x)[0] @ self.w2_)
        omega = omega_of(float(self.log_odds_[0]))
        return omega * f1 + (1.0 - omega) * f2

    def diagnostics(self):
        out = {}
        if self.ensemble and getattr(self, "log_odds_", None) is not None:
            out["omega"] = omega_of(float(self.log_odds_[0]))
        return out


_COMMON_DOC = """
    step_size : float, default 1.0       c in tau_t = c / sqrt(t).
    reg : float, default 1e-4            lambda of the regularised hinge loss.
    gamma : float or None                Eq. 12 sensitivity; None: Thm 4.4's rule (as OPFES).
    kernel_bound : float, default 2.0    r^2 in that rule.
    horizon : int or None                expected stream length (for gamma's T2).
    omega_init : float, default 0.5
    map_ridge : float, default 1e-3      mu / (tr C22 / dim g) of the least-squares map.
    evolving_update : {"freeze", "learn"}, default "freeze"
    clock : {"model", "global"}, default "model"
    random_state : int or None
"""

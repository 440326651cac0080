"""Fitting the mixed model of `mixed` by REML: Newton steps on the analytic gradient and
Hessian of the profiled deviance (`reml_hessian`), then the fit at the optimum with the
Satterthwaite ingredients."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from eval_harness.analysis.stats.case_groups import group_algebra
from eval_harness.analysis.stats.mixed import (
    CaseSums,
    MixedFit,
    Structure,
    canonical_theta,
    deviance_and_gradient,
    gls,
    profiled_deviance,
    rank_deficient,
)
from eval_harness.analysis.stats.reml_hessian import pinv_positive, profiled_hessian, vp_hessian

#: Newton polish steps ignore Hessian directions with eigenvalues below this × the largest
POLISH_REL = 1e-8
#: the optimiser has converged when every |∂d/∂θ_k| is below this (else BFGS carries on)
CONVERGED_GRAD = 1e-5


def _newton(s: CaseSums, st: Structure, x0: np.ndarray) -> tuple[np.ndarray, float]:
    """A local minimum of d(θ) from x0: trust-region Newton steps (Moré & Sorensen's exact
    subproblem, scipy `trust-exact`) on the analytic gradient and Hessian. It handles the
    flat and indefinite directions of d (the ridge of the maximal structure on cell means,
    a variance at 0) and converges in ~10 steps where BFGS took 100–250 evaluations.
    Where a Hessian cannot be formed, or the steps end with a large gradient, BFGS
    carries on from the best point."""
    import warnings

    from scipy import optimize  # ~25 MiB (with scipy.linalg, .sparse): only when a model is fitted


    def fun_grad(t: np.ndarray) -> tuple[float, np.ndarray]:
        return deviance_and_gradient(s, st, t)

    def hess(t: np.ndarray) -> np.ndarray:
        return profiled_hessian(s, st, t)

    d0, _ = fun_grad(x0)
    t, d = x0, d0
    try:
        with warnings.catch_warnings():
            # "a bad approximation caused failure to predict improvement": the steps have
            # reached the rounding level of d; the polish below goes on from there
            warnings.simplefilter("ignore", RuntimeWarning)
            res = optimize.minimize(fun_grad, x0, jac=True, hess=hess, method="trust-exact",
                                    options={"gtol": 1e-9, "maxiter": 200})
        if np.isfinite(res.fun) and res.fun <= d0:
            t, d = np.asarray(res.x), float(res.fun)
        t, d, grad = _polish(fun_grad, hess, t, d)
    except (np.linalg.LinAlgError, ValueError, FloatingPointError):
        grad = fun_grad(t)[1]
    if np.isfinite(d) and float(np.abs(grad).max()) <= CONVERGED_GRAD:
        return t, d
    res = optimize.minimize(fun_grad, t, jac=True, method="BFGS",
                            options={"gtol": 1e-9, "maxiter": 5000})
    if res.fun <= d:
        return np.asarray(res.x), float(res.fun)
    return t, d


def _polish(fun_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],
            hess: Callable[[np.ndarray], np.ndarray], t: np.ndarray, d: float
            ) -> tuple[np.ndarray, float, np.ndarray]:
    """Plain Newton steps θ − H⁺∇d while they shrink the gradient, H⁺ over the
    eigenvalues > POLISH_REL × the largest: a nearly flat direction (the ridge of the
    maximal structure, whose eigenvalue is only ≈ 0 on the ridge itself) takes no step.
    Where trust-exact stops, d changes by less than its rounding error, so its ratio
    test can no longer accept a step, but the gradient still shrinks quadratically, and
    the Satterthwaite df need that: their pseudo-inverse (eigenvalues > 1e-8) must see the
    ridge direction as flat (|∇d| ≈ 6e-7 left that eigenvalue at 2e-7 and moved a df by
    6e-4; after two steps |∇d| ≈ 1e-10). A step must not raise d beyond rounding."""
    d, grad = fun_grad(t)
    for _ in range(6):
        if float(np.abs(grad).max()) < 1e-12:
            break
        vals, vecs = np.linalg.eigh(hess(t))
        keep = vals > POLISH_REL * max(float(np.abs(vals).max()), 1e-300)
        step = vecs[:, keep] @ ((vecs[:, keep].T @ grad) / vals[keep])
        t_new = t - step
        d_new, g_new = fun_grad(t_new)
        if not (np.isfinite(d_new) and d_new <= d + 1e-11 * max(1.0, abs(d))
                and np.linalg.norm(g_new) < np.linalg.norm(grad)):
            break
        t, d, grad = t_new, d_new, g_new
    return t, d, grad


def _optimise(s: CaseSums, st: Structure, warm: np.ndarray | None = None
              ) -> tuple[np.ndarray, float]:
    """Minimise d(θ). The deviance depends on Λ only through Λ Λᵀ, which is unchanged by
    flipping the sign of a column of Λ, so the search runs unconstrained (`_newton`) and
    the optimum is mapped to lme4's non-negative diagonal: a bounded search tends to stick
    at a zero variance that is not the optimum. `warm` (a θ from a related fit) is tried
    first; the default starts only guard against a boundary optimum."""

    def fun(t: np.ndarray) -> float:
        return profiled_deviance(s, st, t)

    best_t, best_d = st.start(), fun(st.start())
    starts = [st.start(), 0.3 * st.start()]
    if warm is not None:
        starts.insert(0, warm)
    for x0 in starts:
        t, d = _newton(s, st, x0)
        if d < best_d:
            best_t, best_d = t, d
        if not rank_deficient(st.factor(best_t)):
            break  # an interior optimum: further starts only guard boundary ones
    theta = canonical_theta(st, best_t)
    lower = st.lower_bounds()
    # a variance at the boundary is exactly 0 (lme4 reports it so)
    theta = np.where(np.isfinite(lower) & (theta < 1e-7), 0.0, theta)
    return theta, fun(theta)


def fit_mixed(s: CaseSums, st: Structure, *, with_df: bool = True,
              warm: np.ndarray | None = None) -> MixedFit:
    """REML fit of one structure (X must have full column rank)."""
    theta, dev = _optimise(s, st, warm)
    return fit_at(s, st, theta, dev, with_df=with_df)


def fit_at(s: CaseSums, st: Structure, theta: np.ndarray, dev: float, *,
           with_df: bool = True) -> MixedFit:
    """The fit at a given optimum θ̂ (β̂, σ̂², Cov(β̂), and the Satterthwaite ingredients:
    the analytic Hessian and Jacobian of `reml_hessian`)."""
    e = group_algebra(s.groups, list(st.cols), st.factor(theta))
    g = gls(e)
    p = e.xwx.shape[0]
    sigma2 = g.rss / (s.n_obs - p)
    singular = rank_deficient(e.lam)
    grads: tuple[np.ndarray, ...] | None = None
    acov: np.ndarray | None = None
    if with_df and sigma2 > 0:
        hess, grads = vp_hessian(s, st, e, g, float(np.sqrt(sigma2)))
        acov = 2.0 * pinv_positive(hess)
    return MixedFit(st, theta, g.beta, sigma2 * g.cinv, sigma2, dev, s.n_obs, p, grads, acov,
                    singular)

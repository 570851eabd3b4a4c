"""The Bradley–Terry fit behind the ratings: the posterior mode under a Gaussian prior.

Pure arithmetic over counts (numpy, scipy's Newton-CG); what a player or a setting is
lives in `metanim.analysis.ratings`, which maps the fit onto anchored ratings.
"""

from __future__ import annotations

import numpy as np

#: σ of the Gaussian prior on θ and h, in log-odds (weak: a player 3σ = 12 log-odds above
#: another wins all but 6 in a million of their games).
PRIOR_SIGMA = 4.0


def fit_bradley_terry(
    first: np.ndarray,
    second: np.ndarray,
    setting: np.ndarray,
    wins: np.ndarray,
    games: np.ndarray,
    *,
    players: int,
    settings: int,
    prior_sigma: float = PRIOR_SIGMA,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """The posterior mode (θ of each player, then h of each setting) of the model above.

    Each cell k holds `games[k]` episodes in which player `first[k]` moved first against
    `second[k]` in setting `setting[k]`, `wins[k]` of them won by the first mover. With
    `wins` and `games` of shape (B, cells), B independent data sets (bootstrap
    replicates) are fitted in one call and the modes come back as (B, parameters).
    """
    # Here, not at the top: scipy costs ~1 s to import, and only rating needs it.
    from scipy.optimize import minimize
    from scipy.special import expit
    from threadpoolctl import threadpool_limits

    batch = np.ndim(wins) == 2
    wins, games = np.atleast_2d(wins).astype(float), np.atleast_2d(games).astype(float)
    precision = 1.0 / prior_sigma**2
    size = players + settings
    # The design matrix: +1 for the first mover, −1 for the second, +1 for the advantage.
    design = np.zeros((len(first), size))
    rows = np.arange(len(first))
    design[rows, first] += 1.0
    design[rows, second] -= 1.0
    design[rows, players + setting] += 1.0
    shape = (len(wins), size)
    advantage = players + np.asarray(setting)

    def linear(x: np.ndarray) -> np.ndarray:
        # X·x per data set by indexing, and Xᵀ·r below by einsum's own loops: both small,
        # and a threaded BLAS call on matrices this size costs more than it computes.
        return x[:, first] - x[:, second] + x[:, advantage]

    def objective(flat: np.ndarray) -> tuple[float, np.ndarray]:
        x = flat.reshape(shape)
        eta = linear(x)
        # −log-likelihood: w·log(1 + e^−η) + (n − w)·log(1 + e^η), written stably.
        value = float(np.sum(games * np.logaddexp(0.0, -eta) + (games - wins) * eta))
        grad = np.einsum("bk,kp->bp", games * expit(eta) - wins, design)
        return value + 0.5 * precision * float(np.sum(x * x)), (grad + precision * x).ravel()

    def hessian_times(flat: np.ndarray, vector: np.ndarray) -> np.ndarray:
        # Block-diagonal over the data sets: each block Xᵀ diag(n p (1 − p)) X + I/σ².
        x, v = flat.reshape(shape), vector.reshape(shape)
        p = expit(linear(x))
        product = np.einsum("bk,kp->bp", games * p * (1 - p) * linear(v), design)
        return (product + precision * v).ravel()

    x0 = np.zeros(shape) if start is None else np.broadcast_to(start, shape)
    # Newton steps, conjugate gradients on the exact Hessian: the objective is smooth and
    # strictly convex, so a handful reach the mode, and the data sets of a batch share
    # them. One BLAS thread: on vectors this size, threads waiting on a busy machine
    # cost many times the arithmetic.
    with threadpool_limits(1, user_api="blas"):
        result = minimize(
            objective,
            np.array(x0, dtype=float).ravel(),
            jac=True,
            hessp=hessian_times,
            method="Newton-CG",
            options={"xtol": 1e-9},
        )
    # Newton-CG may stop on a precision-loss line search a hair from the mode (the sum
    # over a batch is only so precise); a gradient that is still large against the data
    # is a fit gone wrong, never a rating to report.
    if not np.isfinite(result.x).all() or (
        not result.success and np.abs(result.jac).max() > 1e-6 * max(1.0, games.sum(1).max())
    ):
        raise RuntimeError(f"the Bradley–Terry fit did not converge: {result.message}")
    x = np.asarray(result.x).reshape(shape)
    return x if batch else x[0]

"""Instances of the LDP bandits paper's learners (:mod:`learners.ldp`).

Zheng, Cai, Huang, Li & Wang (2020), "Locally Differentially Private (Contextual) Bandits
Learning" (NeurIPS 2020). The paper has no experiments; these are the instances the tests of its
algorithms and the official code's experiment (``LDPbandit2020``'s MovieLens-100K run) need.

**Context-free** (Algorithms 1, 2, 4; :class:`QuadraticLoss`, :class:`BernoulliArms`). Losses on
the unit ball ``X = B(unit)`` (so ``r = R = 1`` in the paper's ``rB ⊆ X ⊆ RB``, §3.2)::

    f_t(x) = ½ (x − x*)ᵀ diag(a) (x − x*) + ⟨ζ_t, x − x*⟩,

``a >= 0`` the curvature (convex; ``μ``-strongly convex when ``min a = μ > 0``, ``β``-smooth with
``β = max a``), ``x*`` the configurable minimizer (``‖x*‖ < 1``) and ``ζ_t`` i.i.d. uniform in the
ball of radius ``perturbation`` (zero mean, so ``E f_t = f`` and ``x*`` is the comparator of every
round: a stochastic, oblivious sequence). On the ball ``‖x − x*‖ <= 2``, hence the loss bound
``B = 2 max a + 2 perturbation`` and the Lipschitz constant ``G = 2 max a + perturbation``.
:class:`BernoulliArms` is a stochastic multi-armed bandit with Bernoulli losses (``B = 1``).

**Contextual** (Algorithms 3, 5; :class:`ContextualInstance`). Each round a user holds ``K``
arms ``x ∈ R^d`` with ``‖x‖ <= 1`` and gets ``y = g(xᵀθ*) + η``:

* :func:`synthetic_linear`: ``K`` contexts i.i.d. uniform on the unit sphere every round, ``g`` the
  identity, ``‖θ*‖ = 1``, ``η`` uniform on ``[-noise, noise]`` (``noise <= 1``: the
  ``η ∈ [-1, 1]`` of Zheng et al. (2020), §4's model, so ``|y| <= 2``);
* :func:`glm_bandit`: the same contexts with the logistic link (``y ~ Bernoulli(σ(xᵀθ*))``) or the
  Poisson link (``y ~ Poisson(exp(xᵀθ*))``);
* :func:`movielens_instance`: the MovieLens-100K environment of the authors' official code
  (``LDPbandit2020``; the paper itself has no experiments), from a
  ``ua.base``-format file (:func:`load_ratings`) or, without a file, from :func:`standin_ratings`,
  a **stand-in**: a deterministic synthetic low-rank ratings matrix of the same shape (943 × 1682,
  ratings 1..5, about the same density), *not* MovieLens. Preprocessing (the official code's): the
  first ``arms`` movies (20), users with at least one rating among them, ``R ← 0.4 (R − 2.5)``
  (missing → −1), thin SVD ``R = U diag(s) Vᵀ``, features ``x_ij = U[i, :k] ⊙ Vᵀ[:k, j]``,
  ``θ* = s`` (``‖θ*‖ ≈ 100`` on the real data: the paper's ``‖θ*‖ <= 1`` does not hold, as in the
  official code), a uniformly random user per round (with replacement) and deterministic rewards
  ``y = xᵀθ*`` (no ``η``).

Randomness is an explicit :class:`numpy.random.Generator`; every draw is an array with a leading
round axis and then the repetition axis ``R``.
"""

from __future__ import annotations

import math
import os
from array import array
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from learners.data_files import data_lines, text_lines
from learners.errors import ParameterError

__all__ = [
    "LINKS",
    "MOVIELENS_ITEMS",
    "MOVIELENS_USERS",
    "BernoulliArms",
    "ContextualInstance",
    "Losses",
    "QuadraticLoss",
    "convex_quadratic",
    "glm_bandit",
    "link_constants",
    "load_ratings",
    "movielens_instance",
    "project_ball",
    "standin_ratings",
    "strongly_convex_quadratic",
    "synthetic_linear",
    "unit_sphere",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The links of the contextual instances: ``g`` of ``y = g(xᵀθ*) + η``.
LINKS = ("identity", "logistic", "poisson")

#: MovieLens-100K's users and items (``ua.base`` holds 90570 of its 100000 ratings).
MOVIELENS_USERS, MOVIELENS_ITEMS = 943, 1682


def unit_sphere(rng: np.random.Generator, shape: tuple[int, ...], dim: int) -> FloatArray:
    """Uniform points of the unit sphere ``S^{d-1}``, shape ``shape + (dim,)`` (``g/‖g‖``, ``g``
    standard normal)."""
    g = rng.standard_normal((*shape, dim))
    norm = np.linalg.norm(g, axis=-1, keepdims=True)
    return np.asarray(g / np.where(norm > 0, norm, 1.0), dtype=np.float64)


def project_ball(y: FloatArray, radius: float = 1.0) -> FloatArray:
    """``Π(y) = y · min(1, radius/‖y‖)`` on the last axis: the Euclidean projection on the ball."""
    norm = np.linalg.norm(y, axis=-1, keepdims=True)
    # 4 ulps inside, so the rounded product's norm is never above ``radius``
    scale = np.where(norm > radius, radius / np.maximum(norm, 1e-300) * (1 - 4 * 2.0**-52), 1.0)
    return np.asarray(y * scale, dtype=np.float64)


def _dimension(dim: object) -> int:
    return v.integer("d", dim, minimum=1, maximum=10_000)


# ---------------------------------------------------------------------------------------
# Context-free instances
# ---------------------------------------------------------------------------------------


class Losses(NamedTuple):
    """One round's losses for ``R`` repetitions and ``m`` query points.

    ``values`` ``(R, m)``: ``f_t`` at the points (what the user privatizes); ``means`` ``(R, m)``:
    ``f = E f_t`` at them; ``best_values`` ``(R,)``: ``f_t`` at the comparator; ``best_mean``: ``min f``.
    """

    values: FloatArray
    means: FloatArray
    best_values: FloatArray
    best_mean: float


@dataclass(frozen=True, eq=False)
class QuadraticLoss:
    """``f_t(x) = ½ (x − x*)ᵀ diag(a) (x − x*) + ⟨ζ_t, x − x*⟩`` on the unit ball (module docstring).

    Parameters
    ----------
    minimizer : array of shape (d,)
        ``x*``, with ``‖x*‖ < 1``.
    curvature : array of shape (d,)
        ``a >= 0``, not all zero.
    perturbation : float
        Radius of the ball ``ζ_t`` is uniform in (``>= 0``).
    """

    minimizer: FloatArray
    curvature: FloatArray
    perturbation: float = 0.0

    def __post_init__(self) -> None:
        x = np.asarray(self.minimizer, dtype=np.float64)
        if x.ndim != 1 or x.size < 1 or not np.isfinite(x).all():
            raise ParameterError("minimizer", self.minimizer, "a finite vector of length d >= 1")
        if not float(np.linalg.norm(x)) < 1:
            raise ParameterError("minimizer", self.minimizer, "a point of the open unit ball (‖x*‖ < 1)")
        a = np.asarray(self.curvature, dtype=np.float64)
        if a.shape == ():
            a = np.full(x.shape, float(a))
        if a.shape != x.shape or not np.isfinite(a).all() or (a < 0).any() or not (a > 0).any():
            raise ParameterError(
                "curvature", self.curvature, f"finite eigenvalues >= 0, not all 0, of length d = {x.size}"
            )
        object.__setattr__(self, "minimizer", x)
        object.__setattr__(self, "curvature", a)
        object.__setattr__(self, "perturbation", v.nonnegative("perturbation", self.perturbation))
        for arr in (x, a):
            arr.setflags(write=False)

    @property
    def dim(self) -> int:
        return int(self.minimizer.size)

    @property
    def bound(self) -> float:
        """``B``: ``|f_t(x)| <= 2 max a + 2 perturbation`` on the unit ball."""
        return 2 * float(self.curvature.max()) + 2 * self.perturbation

    @property
    def lipschitz(self) -> float:
        """``G = 2 max a + perturbation`` on the unit ball."""
        return 2 * float(self.curvature.max()) + self.perturbation

    @property
    def strong_convexity(self) -> float:
        """``μ = min a``."""
        return float(self.curvature.min())

    @property
    def smoothness(self) -> float:
        """``β = max a``."""
        return float(self.curvature.max())

    def mean(self, points: FloatArray) -> FloatArray:
        """``f(x) = ½ (x − x*)ᵀ diag(a) (x − x*)`` on the last axis."""
        diff = points - self.minimizer
        return np.asarray(0.5 * np.einsum("...i,i,...i->...", diff, self.curvature, diff), dtype=np.float64)

    def gradient(self, points: FloatArray) -> FloatArray:
        """``∇f(x) = diag(a)(x − x*)``."""
        return np.asarray(self.curvature * (points - self.minimizer), dtype=np.float64)

    def evaluate(self, points: FloatArray, rng: np.random.Generator) -> Losses:
        """The round's losses at ``points`` of shape ``(R, m, d)`` (one ``ζ_t`` per repetition)."""
        means = self.mean(points)
        values = means
        if self.perturbation > 0:
            R = points.shape[0]
            radius = rng.random(R) ** (1.0 / self.dim) * self.perturbation
            zeta = unit_sphere(rng, (R,), self.dim) * radius[:, None]
            values = means + np.einsum("rmi,ri->rm", points - self.minimizer, zeta)
        return Losses(values, means, np.zeros(points.shape[0]), 0.0)


def convex_quadratic(
    dim: int = 5, minimizer: FloatArray | None = None, *, perturbation: float = 0.0
) -> QuadraticLoss:
    """A convex, not strongly convex quadratic: ``a = (1, (d−2)/(d−1), ..., 0)`` (``a = 1`` at ``d = 1``).

    ``minimizer`` defaults to ``(0.5/√d)(1, ..., 1)`` (``‖x*‖ = 0.5``).
    """
    d = _dimension(dim)
    x = np.full(d, 0.5 / math.sqrt(d)) if minimizer is None else np.asarray(minimizer, dtype=np.float64)
    a = np.linspace(1.0, 0.0, d) if d > 1 else np.ones(1)
    return QuadraticLoss(x, a, perturbation)


def strongly_convex_quadratic(
    dim: int = 5, minimizer: FloatArray | None = None, *, mu: float = 1.0, perturbation: float = 0.0
) -> QuadraticLoss:
    """``f(x) = (μ/2)‖x − x*‖²``: ``μ``-strongly convex and ``μ``-smooth."""
    d = _dimension(dim)
    x = np.full(d, 0.5 / math.sqrt(d)) if minimizer is None else np.asarray(minimizer, dtype=np.float64)
    return QuadraticLoss(x, np.full(d, v.positive("mu", mu)), perturbation)


@dataclass(frozen=True, eq=False)
class BernoulliArms:
    """A stochastic multi-armed bandit: arm ``a`` has loss ``Bernoulli(means[a])`` (values in {0, 1})."""

    means: FloatArray

    def __post_init__(self) -> None:
        m = np.asarray(self.means, dtype=np.float64)
        if m.ndim != 1 or m.size < 2 or not ((m >= 0) & (m <= 1)).all():
            raise ParameterError("means", self.means, "at least 2 loss means in [0, 1]")
        m.setflags(write=False)
        object.__setattr__(self, "means", m)

    @property
    def arms(self) -> int:
        return int(self.means.size)

    @property
    def bound(self) -> float:
        """``B = 1``: losses in ``{0, 1} ⊂ [-1, 1]``."""
        return 1.0

    @property
    def loss_range(self) -> tuple[float, float]:
        """``[0, 1]``: a loss is one bit, so a user's message has sensitivity 1, not ``2B``."""
        return 0.0, 1.0

    def evaluate(self, arms: IntArray, rng: np.random.Generator) -> Losses:
        """Losses of ``arms`` of shape ``(R, m)``."""
        means = self.means[arms]
        values = (rng.random(arms.shape) < means).astype(np.float64)
        best = float(self.means.min())
        return Losses(values, means, np.full(arms.shape[0], best), best)


# ---------------------------------------------------------------------------------------
# Contextual instances
# ---------------------------------------------------------------------------------------


def link_constants(link: str) -> tuple[float, float]:
    """``(μ, C)`` of a link on ``[-1, 1]`` (Zheng et al. (2020), §4.2): ``μ = inf g'``, ``C >= |g|``.

    Logistic: ``μ = g'(1) = e^{-1}/(1 + e^{-1})² ≈ 0.19661``, ``C = 1``; Poisson (``g = exp``):
    ``μ = e^{-1}``, ``C = e``; identity: ``μ = 1``, ``C = 1``.
    """
    if link == "logistic":
        e = math.exp(-1.0)
        return e / (1 + e) ** 2, 1.0
    if link == "poisson":
        return math.exp(-1.0), math.e
    if link == "identity":
        return 1.0, 1.0
    raise ParameterError("link", link, "one of " + ", ".join(LINKS))


def _link(link: object) -> str:
    if not isinstance(link, str) or link not in LINKS:
        raise ParameterError("link", link, "one of " + ", ".join(LINKS))
    return link


def apply_link(link: str, a: FloatArray) -> FloatArray:
    """``g(a)``."""
    if link == "logistic":
        return np.asarray(1.0 / (1.0 + np.exp(-a)), dtype=np.float64)
    if link == "poisson":
        return np.asarray(np.exp(a), dtype=np.float64)
    return np.asarray(a, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class ContextualInstance:
    """A contextual bandit ``y = g(xᵀθ*) + η`` (module docstring).

    Parameters
    ----------
    theta : array of shape (d,)
        ``θ*``.
    arms : int
        ``K`` contexts per round.
    link : {"identity", "logistic", "poisson"}
    noise : float
        Identity link: ``η`` uniform on ``[-noise, noise]`` (``0 <= noise <= 1``); ignored otherwise.
    pool : array of shape (n, K, d) or None
        Fixed users' arm features (MovieLens); ``None``: contexts uniform on the unit sphere.
    name : str
    """

    theta: FloatArray
    arms: int
    link: str = "identity"
    noise: float = 0.1
    pool: FloatArray | None = field(default=None, repr=False)
    name: str = "synthetic"

    def __post_init__(self) -> None:
        th = np.asarray(self.theta, dtype=np.float64)
        if th.ndim != 1 or th.size < 1 or not np.isfinite(th).all():
            raise ParameterError("theta", self.theta, "a finite vector of length d >= 1")
        th.setflags(write=False)
        object.__setattr__(self, "theta", th)
        object.__setattr__(self, "arms", v.integer("arms", self.arms, minimum=1, maximum=100_000))
        object.__setattr__(self, "link", _link(self.link))
        object.__setattr__(self, "noise", v.interval("noise", self.noise, 0.0, 1.0, low_open=False))
        if self.pool is not None:
            # C order, whatever the caller's layout: the learners' sums over a strided pool round
            # differently, so a run in this process (the caller's layout) and one in a worker (the
            # pickled, C-ordered copy) would differ in the last bits.
            p = np.ascontiguousarray(self.pool, dtype=np.float64)
            if p.ndim != 3 or p.shape[1:] != (self.arms, th.size) or p.shape[0] < 1:
                raise ParameterError("pool", p.shape, f"an array of shape (n, {self.arms}, {th.size})")
            largest = float(np.linalg.norm(p, axis=2).max())
            if not largest <= 1 + 1e-9:
                # the learners' sensitivities assume ‖x‖ <= 1 (Zheng et al. (2020), §4)
                raise ParameterError("pool", f"a context of norm {largest:g}", "contexts of norm <= 1")
            p.setflags(write=False)
            object.__setattr__(self, "pool", p)

    @property
    def dim(self) -> int:
        return int(self.theta.size)

    def contexts(self, rng: np.random.Generator, rounds: int, repetitions: int) -> FloatArray:
        """Arms of ``rounds`` rounds, shape ``(rounds, R, K, d)``."""
        if self.pool is None:
            return unit_sphere(rng, (rounds, repetitions, self.arms), self.dim)
        users = rng.integers(0, self.pool.shape[0], size=(rounds, repetitions))
        return np.asarray(self.pool[users], dtype=np.float64)

    def mean(self, lin: FloatArray) -> FloatArray:
        """``g(xᵀθ*)`` from ``xᵀθ*``."""
        return apply_link(self.link, lin)

    def reward(self, lin: FloatArray, rng: np.random.Generator) -> FloatArray:
        """``y`` given ``xᵀθ*`` of the played arms (any shape)."""
        if self.link == "logistic":
            return (rng.random(lin.shape) < apply_link("logistic", lin)).astype(np.float64)
        if self.link == "poisson":
            return rng.poisson(np.exp(lin)).astype(np.float64)
        if self.pool is not None or self.noise == 0:
            return np.asarray(lin, dtype=np.float64)
        return np.asarray(lin + rng.uniform(-self.noise, self.noise, lin.shape), dtype=np.float64)


def _unit_theta(dim: int, rng: np.random.Generator) -> FloatArray:
    return unit_sphere(rng, (), dim)


def synthetic_linear(
    dim: int = 5, arms: int = 10, *, noise: float = 0.1, rng: np.random.Generator | None = None
) -> ContextualInstance:
    """The synthetic linear bandit the tests of Algorithm 5 use: ``d = 5``, ``K = 10``, ``‖θ*‖ = 1``
    (``θ*`` uniform on the sphere from ``rng``, default seed 0), contexts uniform on the sphere,
    ``η ~ U[-noise, noise]``."""
    d = _dimension(dim)
    gen = rng if rng is not None else np.random.default_rng(0)
    return ContextualInstance(_unit_theta(d, gen), arms, "identity", noise, None, "synthetic-linear")


def glm_bandit(
    link: str = "logistic", dim: int = 5, arms: int = 10, *, rng: np.random.Generator | None = None
) -> ContextualInstance:
    """A logistic or Poisson bandit with ``‖θ*‖ = 1`` and contexts uniform on the sphere."""
    name = _link(link)
    if name == "identity":
        raise ParameterError("link", link, "'logistic' or 'poisson' (synthetic_linear is the identity link)")
    d = _dimension(dim)
    gen = rng if rng is not None else np.random.default_rng(0)
    return ContextualInstance(_unit_theta(d, gen), arms, name, 0.0, None, f"{name}-bandit")


# ---------------------------------------------------------------------------------------
# MovieLens-100K (the authors' official code, LDPbandit2020)
# ---------------------------------------------------------------------------------------

_UA_FORMAT = "a MovieLens-100K 'ua.base'-format file (lines 'user<TAB>item<TAB>rating<TAB>timestamp')"


#: The largest dense ratings matrix :func:`load_ratings` builds, in cells (MovieLens-1M's
#: 6040 × 3952 fit; its ids, not its size, decide the shape, so one line can ask for any).
MAX_RATING_CELLS = 2**26


class _Ratings(NamedTuple):
    """The ratings of a ``ua.base``-format file, in file order: 1-based ids and ratings 1..5."""

    users: NDArray[np.int64]
    items: NDArray[np.int64]
    ratings: NDArray[np.int64]


def _read_ratings(path: str | os.PathLike[str]) -> _Ratings:
    """The ratings of the file ``path`` (:func:`load_ratings`'s format), read as
    :func:`learners.data_files.data_lines` (a regular file, line by line, bounded)."""
    users, items, ratings = array("q"), array("q"), array("q")
    with data_lines(path, _UA_FORMAT) as lines:
        for number, line in enumerate(text_lines(lines), start=1):
            text = line.strip()
            if not text:
                continue
            parts = text.split()
            try:
                if len(parts) != 4:
                    raise ValueError
                u, i, r, _ = (int(s) for s in parts)
            except ValueError:
                raise lines.refuse(f"line {number} is malformed: {text[:80]!r}") from None
            if u < 1 or i < 1 or not 1 <= r <= 5 or max(u, i) >= 2**63:
                raise ParameterError(
                    "path",
                    os.fspath(path),
                    f"{_UA_FORMAT} with ids in 1..2^63 - 1 and ratings in 1..5; line {number} has "
                    f"{text[:80]!r}",
                )
            users.append(u)
            items.append(i)
            ratings.append(r)
    if not users:
        raise ParameterError(
            "path", os.fspath(path), f"{_UA_FORMAT} with at least one rating; the file has none"
        )
    return _Ratings(*(np.frombuffer(a, dtype=np.int64) for a in (users, items, ratings)))


def load_ratings(path: str | os.PathLike[str]) -> NDArray[np.int64]:
    """Read a ``ua.base``-format file into a dense ratings matrix (0 = missing).

    Each non-blank line is ``user item rating timestamp`` separated by tabs (or spaces), with
    1-based integer ids and an integer rating in 1..5. The matrix has shape
    ``(max user id, max item id)`` (943 × 1682 for MovieLens-100K), at most
    :data:`MAX_RATING_CELLS` cells. A repeated ``(user, item)`` pair keeps its last rating.

    The file is read only when it is a regular file, line by line, each line checked as it is read
    (:func:`learners.data_files.data_lines`: no NUL byte, a bounded length and total size).

    Raises
    ------
    ParameterError
        Naming ``path``: a missing, unreadable or special file, the first malformed line (its
        number and text), or ids beyond :data:`MAX_RATING_CELLS` cells.
    """
    users, items, ratings = _read_ratings(path)
    shape = (int(users.max()), int(items.max()))
    if shape[0] * shape[1] > MAX_RATING_CELLS:
        raise ParameterError(
            "path",
            os.fspath(path),
            f"{_UA_FORMAT} whose max user id × max item id is at most {MAX_RATING_CELLS} (the dense "
            f"matrix); it is {shape[0]} × {shape[1]}",
        )
    out = np.zeros(shape, dtype=np.int64)
    out[users - 1, items - 1] = ratings
    return out


def _first_items(path: str | os.PathLike[str], arms: int) -> NDArray[np.float64]:
    """``load_ratings(path)[:, :arms]`` without its users with no rating there, as floats; built
    from the ratings of items ``1..arms`` only, so the shape is bounded by the rows of the file."""
    users, items, ratings = _read_ratings(path)
    if int(items.max()) < arms:
        raise ParameterError(
            "path",
            os.fspath(path),
            f"a ratings file with at least arms={arms} items; it has {int(items.max())}",
        )
    kept = items <= arms
    # the users with a rating among the first items, in id order: the rows load_ratings keeps
    ids, rows = np.unique(users[kept], return_inverse=True)
    first = np.zeros((ids.size, arms), dtype=np.int64)
    first[rows, items[kept] - 1] = ratings[kept]  # in file order: a repeated pair keeps its last
    return first.astype(np.float64)


def standin_ratings(
    users: int = MOVIELENS_USERS, items: int = MOVIELENS_ITEMS, *, rank: int = 5, density: float = 0.057
) -> NDArray[np.int64]:
    """A **stand-in** for MovieLens-100K's ``ua.base``: a deterministic synthetic ratings matrix.

    Not MovieLens: a fixed seed (2020) draws user and item factors of rank ``rank``, the scores
    ``U Vᵀ`` plus a per-item bias are cut at their quantiles into ratings 1..5 (MovieLens's overall
    shares 6 / 11 / 27 / 34 / 21 %), and each entry is observed with probability ``density`` (ua.base:
    90570 / (943 · 1682) ≈ 0.057), more often for popular items. Same shape and value range as
    the real matrix, so the official code's preprocessing and the learner run unchanged.
    """
    n = v.integer("users", users, minimum=1)
    m = v.integer("items", items, minimum=1)
    k = v.integer("rank", rank, minimum=1)
    rho = v.interval("density", density, 0.0, 1.0)
    gen = np.random.default_rng(2020)
    scores = gen.standard_normal((n, k)) @ gen.standard_normal((k, m)) / math.sqrt(k)
    scores += gen.standard_normal(m)[None, :]
    cuts = np.quantile(scores, [0.06, 0.17, 0.44, 0.78])
    ratings = 1 + np.searchsorted(cuts, scores).astype(np.int64)
    popularity = np.exp(gen.standard_normal(m))
    p = np.minimum(1.0, rho * popularity / popularity.mean())
    observed = gen.random((n, m)) < p[None, :]
    return np.where(observed, ratings, 0).astype(np.int64)


def movielens_instance(
    path: str | os.PathLike[str] | None = None, *, arms: int = 20, rank: int = 20
) -> ContextualInstance:
    """The official code's MovieLens environment (``LDPbandit2020``), from ``path`` or the stand-in.

    ``path=None`` uses :func:`standin_ratings` (synthetic, *not* MovieLens; the instance's
    ``name`` says ``"movielens-standin"``). ``rank`` is ``d``; with ``rank = arms`` (the official
    20 and 20) the rank-``k`` reconstruction is exact.
    """
    K = v.integer("arms", arms, minimum=1)
    k = v.integer("rank", rank, minimum=1)
    if k > K:
        raise ParameterError("rank", rank, f"an integer in [1, arms={K}] (the SVD of a users × {K} matrix)")
    if path is None:
        ratings = standin_ratings()
        if ratings.shape[1] < K:
            raise ParameterError(
                "path", path, f"a ratings file with at least arms={K} items; it has {ratings.shape[1]}"
            )
        first = ratings[:, :K].astype(np.float64)
        first = first[first.sum(axis=1) > 0]
    else:
        first = _first_items(path, K)
    if first.shape[0] < k:
        raise ParameterError(
            "path",
            path,
            f"at least rank={k} users with a rating among the first {K} items; found {first.shape[0]}",
        )
    normalized = 0.4 * (first - 2.5)  # ratings 1..5 -> -0.6..1.0, missing (0) -> -1.0
    U, s, Vt = np.linalg.svd(normalized, full_matrices=False)
    features = U[:, None, :k] * Vt[:k, :].T[None, :, :]  # (n_u, K, k): x_ij = U[i, :k] ⊙ Vt[:k, j]
    name = "movielens-standin" if path is None else "movielens"
    return ContextualInstance(s[:k].copy(), K, "identity", 0.0, features, name)

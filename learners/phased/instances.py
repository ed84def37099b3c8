"""The population model of DP-DPE (Li, Zhou & Ji 2022), and the synthetic instance of its Section 7.

Li, Zhou & Ji (2022), §2.1 (the model) and §7 (the experiment). A finite action set
``D = {x_1..x_k} ⊂ R^d`` with ``‖x‖ <= 1`` is fixed; the global mean reward is ``f(x) = ⟨θ*, x⟩``;
a user ``u`` of the population has ``θ_u = θ* + ξ_u`` with ``ξ_u`` zero-mean and
``σ``-sub-Gaussian, i.i.d. across users, and observes ``y_{u,t} = ⟨θ_u, x_t⟩ + η_{u,t}`` with
``η`` i.i.d. and 1-sub-Gaussian. Regret is always measured against ``θ*`` (eq. 1).

:class:`PhasedInstance` is that model with the laws the simulation uses: ``ξ_u ~ N(0, σ² I_d)``
(``v·ξ_u ~ N(0, σ²)`` for every unit ``v``, so ``σ``-sub-Gaussian), ``η ~ N(0, noise_sd²)``. The
population is finite (``population`` users); the learners sample fresh clients from it and never
reuse one (each client reports in one phase: the parallel composition of §4), so a run needs at most
``population`` of them and is refused otherwise. The users' ``ξ`` are not materialized: a uniform
sample without replacement from an i.i.d. population is itself i.i.d., so the learners draw each
client's ``ξ`` when it is sampled.

:func:`draw_instance` is §7's experiment with every detail the paper leaves out a parameter (our
assumptions as defaults): ``k = 1000`` arms i.i.d. uniform on the unit sphere of ``R^20`` (a
standard normal normalized), ``θ*`` uniform on the sphere of radius ``theta_norm = 1``, ``σ = 0.1``,
``η ~ N(0, 1)``, ``|𝒰| = 10^6`` (the OCR of §7 reads "10°": 10^6 most likely, uncertain). The
horizon (``T = 10^6``, :data:`PAPER_HORIZON`), ``α = 0.8``, ``B = 1`` and ``δ = 0.25`` are the
learner's and the run's (:mod:`learners.phased`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from learners.errors import ParameterError, ParameterTypeError

__all__ = [
    "PAPER_ARMS",
    "PAPER_CLIENT_SD",
    "PAPER_DIM",
    "PAPER_HORIZON",
    "PAPER_POPULATION",
    "PhasedInstance",
    "draw_instance",
    "instance_shapes",
]

FloatArray = NDArray[np.float64]

#: Li, Zhou & Ji (2022), §7: ``k = 10^3``, ``d = 20``, ``σ = 0.1``, ``|𝒰| = T = 10^6`` (the exponent is
#: uncertain in the OCR).
PAPER_ARMS = 1000
PAPER_DIM = 20
PAPER_CLIENT_SD = 0.1
PAPER_POPULATION = 10**6
PAPER_HORIZON = 10**6

#: Slack on ``‖x‖ <= 1`` and ``‖θ*‖ <= 1`` for vectors normalized in floating point.
_NORM_SLACK = 1e-9


def _matrix(name: str, value: object, ndim: int) -> FloatArray:
    try:
        a = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterTypeError(name, value, f"a real array with {ndim} axes") from None
    if a.ndim != ndim:
        raise ParameterError(name, f"an array of shape {a.shape}", f"a real array with {ndim} axes")
    if not np.isfinite(a).all():
        raise ParameterError(name, "an array with non-finite entries", "finite reals")
    return a


@dataclass(frozen=True, eq=False)
class PhasedInstance:
    """One population-model instance (Li, Zhou & Ji (2022), §2.1). A value: its arrays are read-only copies.

    Attributes
    ----------
    actions : numpy.ndarray, shape (k, d)
        The action set ``D``: ``k >= 2`` actions of norm ``<= 1`` in ``R^d``, ``d >= 1``.
    theta : numpy.ndarray, shape (d,)
        ``θ*``, the population mean parameter, ``‖θ*‖ <= 1``; the optimal action must be unique.
    client_sd : float
        ``σ >= 0``: each user's ``ξ_u ~ N(0, σ² I_d)`` (client heterogeneity; the paper: 0.1).
    noise_sd : float
        Standard deviation of the reward noise ``η ~ N(0, noise_sd²)``, in ``(0, 1]`` (the analysis
        assumes 1-sub-Gaussian noise; the paper: 1).
    population : int
        ``|𝒰|``, the users there are to sample clients from without replacement (none is
        reused: each client reports in one phase).
    """

    actions: FloatArray
    theta: FloatArray
    client_sd: float = PAPER_CLIENT_SD
    noise_sd: float = 1.0
    population: int = PAPER_POPULATION

    def __post_init__(self) -> None:
        x = _matrix("actions", self.actions, 2)
        k, d = x.shape
        if k < 2:
            raise ParameterError("arms", k, "an integer >= 2 (an action set of at least two actions)")
        if d < 1:
            raise ParameterError("dim", d, "an integer >= 1")
        norms = np.sqrt((x * x).sum(axis=1))
        if (norms > 1 + _NORM_SLACK).any():
            i = int(norms.argmax())
            raise ParameterError("actions", f"an action of norm {norms[i]!r} (index {i})", "norms <= 1")
        theta = _matrix("theta", self.theta, 1)
        if theta.shape != (d,):
            raise ParameterError("theta", f"a vector of shape {theta.shape}", f"a vector of dim = {d} reals")
        if float(np.sqrt(theta @ theta)) > 1 + _NORM_SLACK:
            raise ParameterError("theta", f"a vector of norm {float(np.sqrt(theta @ theta))!r}", "norm <= 1")
        means = x @ theta
        top = np.sort(means)[-2:]
        if not top[1] > top[0]:
            raise ParameterError(
                "theta",
                "a parameter with two optimal actions",
                "a unique optimal action (Li, Zhou & Ji 2022, §2.1)",
            )
        x.setflags(write=False)
        theta.setflags(write=False)
        object.__setattr__(self, "actions", x)
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "client_sd", v.nonnegative("client_sd", self.client_sd))
        object.__setattr__(
            self,
            "noise_sd",
            v.interval("noise_sd", self.noise_sd, 0.0, 1.0, why="the analysis assumes 1-sub-Gaussian noise"),
        )
        object.__setattr__(self, "population", v.count("population", self.population))

    @property
    def arms(self) -> int:
        """``k``."""
        return int(self.actions.shape[0])

    @property
    def dim(self) -> int:
        """``d``."""
        return int(self.actions.shape[1])

    @cached_property
    def means(self) -> FloatArray:
        """``f(x) = ⟨θ*, x⟩`` of every action, shape ``(k,)``."""
        out = self.actions @ self.theta
        out.setflags(write=False)
        return out

    @cached_property
    def best(self) -> int:
        """The index of ``x* = argmax_x ⟨θ*, x⟩``."""
        return int(self.means.argmax())

    @cached_property
    def gaps(self) -> FloatArray:
        """``⟨θ*, x* - x⟩ >= 0`` of every action, shape ``(k,)``."""
        out = np.asarray(self.means[self.best] - self.means, dtype=np.float64)
        out.setflags(write=False)
        return out

    def describe(self) -> str:
        """A short caption, e.g. ``k=1000, d=20, σ=0.1, |U|=1e+06``."""
        return f"k={self.arms}, d={self.dim}, σ={self.client_sd:g}, |U|={self.population:g}"


def _sphere(rng: np.random.Generator, shape: tuple[int, ...]) -> FloatArray:
    z = rng.standard_normal(shape)
    norms = np.sqrt((z * z).sum(axis=-1, keepdims=True))
    while (norms == 0).any():  # pragma: no cover - a standard normal vector of norm 0 has probability 0
        z = rng.standard_normal(shape)
        norms = np.sqrt((z * z).sum(axis=-1, keepdims=True))
    return np.asarray(z / norms, dtype=np.float64)


def instance_shapes(k: int, d: int) -> dict[str, tuple[int, ...]]:
    """The float64 arrays :func:`draw_instance` holds while it draws ``k`` actions in ``R^d``: the
    actions (their shape), the normals they are drawn from and their norms' quotient, and the
    instance's means and gaps."""
    return {"actions": (k, d), "normals": (k, d), "quotient": (k, d), "means": (2, k)}


def draw_instance(
    rng: np.random.Generator,
    *,
    arms: int = PAPER_ARMS,
    dim: int = PAPER_DIM,
    client_sd: float = PAPER_CLIENT_SD,
    noise_sd: float = 1.0,
    population: int = PAPER_POPULATION,
    theta_norm: float = 1.0,
    actions: ArrayLike | None = None,
) -> PhasedInstance:
    """The synthetic instance of Li, Zhou & Ji (2022), §7: arms and ``θ*`` uniform on spheres (every detail
    the paper leaves out a parameter).

    Parameters
    ----------
    rng : numpy.random.Generator
        Draws the arms (first) and ``θ*``.
    arms, dim : int
        ``k >= 2`` and ``d >= 1`` (the paper: 1000 and 20).
    client_sd : float
        ``σ`` of the users' ``ξ_u ~ N(0, σ² I)`` (0.1).
    noise_sd : float
        The reward noise's standard deviation (1).
    population : int
        ``|𝒰|`` (10^6).
    theta_norm : float
        ``‖θ*‖`` in ``(0, 1]`` (1).
    actions : array_like, optional
        A given action set ``(k, d)`` instead of drawn arms (then ``arms`` and ``dim`` are its).

    Returns
    -------
    PhasedInstance
    """
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    if actions is None:
        k = v.integer("arms", arms, minimum=2, maximum=10**7, why="the learners keep (R, k, d) arrays")
        d = v.integer("dim", dim, minimum=1, maximum=10**4, why="the design inverts d x d matrices")
        x = _sphere(rng, instance_shapes(k, d)["actions"])
    else:
        x = _matrix("actions", actions, 2)
        d = int(x.shape[1])
    r = v.interval("theta_norm", theta_norm, 0.0, 1.0)
    theta = _sphere(rng, (d,)) * r
    return PhasedInstance(x, theta, client_sd, noise_sd, population)

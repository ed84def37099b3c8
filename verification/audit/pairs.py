"""What the auditor samples: neighbouring pairs of outputs, and statistics that reduce them to scalars.

A *sample pair* ``sample_pair(rng, size) -> (outputs on D, outputs on D')`` is all
:func:`verification.audit.audit` needs of a mechanism. The pairs here are picklable frozen values,
so they can travel to Dask workers: :class:`AdditivePair` (additive noise on a query moved by its
sensitivity) and :class:`ProtocolPair` (the server's view of one batch of a
:class:`learners.protocols.Protocol`: the modular sum the analyzer receives from the protocol
``P = (R, S, A)`` of Chowdhury & Zhou 2023, Section 3). A *statistic* reduces vector outputs to
scalars: a fixed :class:`Projection` or :class:`CoordinateDifference`, or Fisher's discriminant
fitted on the pilot (:func:`fit_discriminant`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.mechanisms import AdditiveNoise
from accounting.noise import LatticeNoise, NoiseDistribution
from learners.protocols import Protocol
from verification.errors import ParameterError, ParameterTypeError, VerificationError

__all__ = [
    "AdditivePair",
    "CoordinateDifference",
    "Projection",
    "ProtocolPair",
    "SamplePair",
    "Statistic",
    "additive_pair",
    "fit_discriminant",
    "identity",
    "protocol_pair",
    "statistic_name",
]

#: ``sample_pair(rng, size) -> (outputs on D, outputs on D')``, each of shape ``(size,)`` or ``(size, d)``.
SamplePair = Callable[[np.random.Generator, int], tuple[NDArray[Any], NDArray[Any]]]
#: Reduces outputs of shape ``(size,)`` or ``(size, d)`` to scalars of shape ``(size,)``.
Statistic = Callable[[NDArray[Any]], NDArray[Any]]


# ---------------------------------------------------------------------------------------
# Neighbouring pairs: a mechanism, and the server's view of a protocol
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdditivePair:
    """``(X, X + Δ)`` with ``X ~ noise``: an additive mechanism on a query moved by its sensitivity.

    The worst neighbour of symmetric log-concave noise is the full shift ``Δ``
    (see :mod:`accounting.mechanisms`). Build it with :func:`additive_pair`, which validates.
    """

    noise: NoiseDistribution
    sensitivity: float

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
        first = self.noise.sample(rng, size)
        second = self.noise.sample(rng, size)
        shift = int(self.sensitivity) if isinstance(self.noise, LatticeNoise) else self.sensitivity
        return first, np.add(second, shift)


def additive_pair(noise: NoiseDistribution, sensitivity: float = 1) -> AdditivePair:
    """A sample pair for ``q(D) + X`` versus ``q(D') + X`` with ``q(D') = q(D) + Δ``.

    Parameters
    ----------
    noise : NoiseDistribution
        A distribution from :mod:`accounting.noise` (its ``sample(rng, size)`` is used).
    sensitivity : int or float
        ``Δ``: an integer ``>= 1`` for lattice noise, a real ``> 0`` for continuous noise
        (validated by :class:`accounting.mechanisms.AdditiveNoise`, whose claim this audits).

    Returns
    -------
    AdditivePair
        ``sample_pair(rng, size) -> (X, X' + Δ)`` with independent ``X, X' ~ noise``.
    """
    if not isinstance(noise, NoiseDistribution):
        raise ParameterError("noise", noise, "a distribution from accounting.noise")
    mechanism = AdditiveNoise(noise, sensitivity)  # one place validates sensitivity
    return AdditivePair(noise, mechanism.sensitivity)


@dataclass(frozen=True)
class ProtocolPair:
    """The server's view of one batch of a :class:`learners.protocols.Protocol` on neighbouring inputs.

    ``D`` has every user's value ``0``; ``D'`` replaces user 0's value by ``1``, so the encoded sum
    moves by exactly ``g`` (the sensitivity the protocol accounts). Each call runs the whole
    protocol (encoding, noise shares, secure aggregation or shuffler) for ``size`` repetitions of
    each input and returns the views ``yhat`` (the modular sums the server learns).
    Build it with :func:`protocol_pair`.
    """

    protocol: Protocol

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
        n = self.protocol.params.users
        first = np.zeros((size, n))
        second = first.copy()
        second[:, 0] = 1.0
        return self.protocol.release(first, rng).view, self.protocol.release(second, rng).view


def protocol_pair(protocol: Protocol) -> ProtocolPair:
    """A sample pair of the server's view of ``protocol`` on neighbouring batches (see :class:`ProtocolPair`).

    Parameters
    ----------
    protocol : learners.protocols.Protocol
        The protocol to audit (its parameters come from :mod:`accounting.calibration`).

    Returns
    -------
    ProtocolPair
    """
    if not isinstance(protocol, Protocol):
        raise ParameterTypeError("protocol", protocol, "a learners.protocols.Protocol")
    return ProtocolPair(protocol)


# ---------------------------------------------------------------------------------------
# Statistics: vector outputs to scalars
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Projection:
    """The statistic ``T(x) = <w, x>`` for vector outputs of shape ``(size, d)``."""

    weights: tuple[float, ...]

    def __call__(self, outputs: NDArray[Any]) -> NDArray[np.float64]:
        x = np.asarray(outputs, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(self.weights):
            raise VerificationError(
                f"Projection with {len(self.weights)} weights needs outputs of shape (size, "
                f"{len(self.weights)}); got {x.shape}"
            )
        return np.asarray(x @ np.asarray(self.weights, dtype=np.float64), dtype=np.float64)

    def __str__(self) -> str:
        shown = ", ".join(f"{w:.3g}" for w in self.weights[:4]) + (", ..." if len(self.weights) > 4 else "")
        return f"<({shown}), x>"


@dataclass(frozen=True)
class CoordinateDifference:
    """The statistic ``T(x) = x[first] - x[second]`` for vector outputs.

    Noise shared by two coordinates cancels in their difference: the ``dp-se-shared-noise`` entry
    of :mod:`verification.broken` (the DP-SE of Sajed & Sheffet 2019, Algorithm 1, with one Laplace
    draw added to every arm's sum instead of one per arm).
    """

    first: int
    second: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "first", v.integer("first", self.first, minimum=0))
        object.__setattr__(self, "second", v.integer("second", self.second, minimum=0))
        if self.first == self.second:
            raise ParameterError("second", self.second, f"a coordinate other than first={self.first}")

    def __call__(self, outputs: NDArray[Any]) -> NDArray[Any]:
        x = np.asarray(outputs)
        if x.ndim != 2 or x.shape[1] <= max(self.first, self.second):
            raise VerificationError(
                f"CoordinateDifference({self.first}, {self.second}) needs outputs of shape "
                f"(size, d) with d > {max(self.first, self.second)}; got {x.shape}"
            )
        return np.asarray(x[:, self.first] - x[:, self.second])

    def __str__(self) -> str:
        return f"x[{self.first}] - x[{self.second}]"


def identity(outputs: NDArray[Any]) -> NDArray[Any]:
    """The default statistic of scalar outputs: the outputs themselves."""
    return outputs


def statistic_name(statistic: Statistic) -> str:
    """How a report names ``statistic``: ``x``, its own ``str``, or ``name(x)``."""
    if statistic is identity:
        return "x"
    if any("__str__" in vars(k) for k in type(statistic).__mro__[:-1]):  # it names itself
        return str(statistic)
    return f"{getattr(statistic, '__name__', type(statistic).__name__)}(x)"


def fit_discriminant(a: NDArray[Any], b: NDArray[Any]) -> Projection:
    """Fisher's linear discriminant ``w = (Σ + λI)^{-1} (μ_D - μ_D')`` fitted on the pilot.

    Fisher 1936, "The use of multiple measurements in taxonomic problems". A small ridge
    ``λ = 1e-8 · tr(Σ)/d`` keeps ``Σ`` invertible and makes directions with (almost) no noise
    dominate: noise shared by every coordinate (as in the ``dp-se-shared-noise`` entry of
    :mod:`verification.broken`) has a rank-one covariance, and the discriminant then projects it out.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    d = x.shape[1]
    sigma = (np.cov(x, rowvar=False) + np.cov(y, rowvar=False)).reshape(d, d) / 2
    ridge = 1e-8 * max(float(np.trace(sigma)) / d, 1e-300)
    w = np.linalg.solve(sigma + ridge * np.eye(d), x.mean(axis=0) - y.mean(axis=0))
    scale = float(np.abs(w).max())
    return Projection(tuple(float(c) for c in (w / scale if scale > 0 else np.ones(d))))

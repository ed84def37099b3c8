"""The dominating pair of each event, per direction of the neighbouring relation.

What a PLD composes is a *dominating pair* of each mechanism (Zhu, Dong & Wang 2022, "Optimal
accounting of differential privacy via characteristic function": by their composition theorem for
dominating pairs, dominating pairs of the mechanisms of an adaptive composition compose to one of
the composition):

* ``AdditiveNoise(X, Δ)`` with symmetric, log-concave noise: ``(X + Δ, X)``, in both directions
  and under both relations (``Δ`` being the sensitivity under the relation). The likelihood
  ratio is monotone, so the trade-off curve of ``(X + k, X)`` lies above that of ``(X + Δ, X)``
  for ``|k| <= Δ``, and ``(X, X + Δ)`` is ``(X + Δ, X)`` mapped by ``x -> Δ - x``. Lattice noise,
  and the continuous Gaussian and Laplace (by cells, :mod:`accounting.pld.atoms`). Asymmetric or
  non-log-concave noise has no single dominating pair here: refused (the RDP route answers it).
* A :class:`~accounting.mechanisms.DistributedSum`: its central mechanism under replace-one;
  refused under add-remove (a removed user takes their share along).
* :class:`~accounting.mechanisms.PureDP` and :class:`~accounting.mechanisms.ApproxDP`: the pair
  of Kairouz, Oh & Viswanath 2015 (Theorem 3.3's ``M̃``), under the relation of their theorem.
* Subsampled releases (:mod:`accounting.subsampling`): mixture pairs, one per direction.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from mpmath import iv

from accounting.certified import Interval, to_interval
from accounting.errors import ParameterTypeError, UnsupportedEventError
from accounting.mechanisms import AdditiveNoise, ApproxDP, DistributedSum, Mechanism, PureDP
from accounting.neighbouring import Neighbouring
from accounting.noise import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace, LatticeNoise
from accounting.subsampling import MixturePair, PoissonSampled, SampledWithoutReplacement

__all__ = ["dominating_pairs"]


@dataclass(frozen=True)
class CitedPair:
    """The worst-case pair of an ``(ε, δ)`` guarantee (Kairouz, Oh & Viswanath 2015, Theorem 3.3's ``M̃``).

    Loss ``+∞`` with probability ``δ``; ``+ε`` with ``P``-mass ``(1-δ) e^ε/(1+e^ε)`` and ``-ε``
    with ``(1-δ)/(1+e^ε)`` (``Q`` the mirror image). Symmetric, so one pair serves every direction.
    """

    eps: float
    dlt: float


Pair = MixturePair | CitedPair


def lattice_pair(mechanism: object) -> tuple[LatticeNoise, int]:
    """The noise ``X`` and shift ``Δ`` of the dominating pair ``(X + Δ, X)`` of a lattice mechanism."""
    pair = mechanism_pair(mechanism, continuous=False)
    shift = pair.shift_pair if isinstance(pair, MixturePair) else None
    assert shift is not None
    return shift


def mechanism_pair(mechanism: object, continuous: bool = True) -> MixturePair:
    """The pair ``(X + Δ, X)`` of an additive mechanism (either relation: module docstring)."""
    if isinstance(mechanism, DistributedSum):
        mechanism = mechanism.mechanism
    if isinstance(mechanism, Mechanism) and not isinstance(mechanism, AdditiveNoise):
        raise UnsupportedEventError(f"no privacy-loss distribution for {mechanism!r}")
    if not isinstance(mechanism, AdditiveNoise):
        raise ParameterTypeError("mechanism", mechanism, "an AdditiveNoise or DistributedSum")
    noise = mechanism.noise
    if isinstance(noise, Gaussian | Laplace):
        if not continuous:
            raise UnsupportedEventError(f"{noise!r} is continuous noise: not a lattice mechanism")
        return MixturePair(noise, Fraction(1), float(mechanism.sensitivity))
    if not isinstance(noise, LatticeNoise):
        raise UnsupportedEventError(f"no privacy-loss distribution for noise {noise!r}")
    if not (noise.symmetric and noise.log_concave):
        raise UnsupportedEventError(
            f"noise {noise!r} is not symmetric and log-concave: a single dominating pair is needed "
            "for adaptive composition, and (X + Δ, X) is one only for such noise (the RDP route "
            "accounts it)"
        )
    return MixturePair(noise, Fraction(1), int(mechanism.sensitivity))


def exact_lattice(noise: LatticeNoise, shift: int) -> tuple[Interval, Interval] | None:
    """``(offset, h)`` when the loss of ``(X + Δ, X)`` at ``y`` is exactly ``offset + j(y)·h``.

    ``None`` for noise without such a lattice. The index is ``j(y) = clip(y + Δ, 0, Δ)`` for
    ``Lap_Z`` (see :func:`accounting.pld.atoms._discrete_laplace_atoms`) and ``j(y) = y`` for ``N_Z``.
    """
    if isinstance(noise, DiscreteLaplace):
        rate = -iv.log(to_interval(noise.beta)) if noise.beta is not None else 1 / to_interval(noise.scale)
        return -shift * rate, 2 * rate
    if isinstance(noise, DiscreteGaussian):
        s2 = to_interval(noise.sigma) ** 2
        return iv.mpf(shift * shift) / (2 * s2), shift / s2
    return None


def dominating_pairs(event: object, neighbouring: Neighbouring | str) -> dict[str, Pair]:
    """The dominating pair of ``event`` for each direction of ``neighbouring``.

    Keys: ``"replace-one"`` under replace-one; ``"remove"`` and ``"add"`` under add-remove (the
    same pair for both when it is symmetric). See the module docstring for which events are
    held and why the others are refused.

    Raises
    ------
    UnsupportedEventError
        For an event without a certified dominating pair here.
    """
    relation = Neighbouring.parse(neighbouring)
    if isinstance(event, PoissonSampled | SampledWithoutReplacement):
        return dict(event.dominating_pairs(relation))
    if isinstance(event, PureDP | ApproxDP):
        if event.neighbouring is not relation:
            raise UnsupportedEventError(
                f"{event!r} is cited for the {event.neighbouring.value} relation and cannot be "
                f"accounted under {relation.value}"
            )
        pair: Pair = CitedPair(event.eps, event.dlt if isinstance(event, ApproxDP) else 0.0)
    elif isinstance(event, DistributedSum) and relation is Neighbouring.ADD_REMOVE:
        raise UnsupportedEventError(
            f"{event!r} under add-remove: removing a user also removes their noise share, so the "
            "pairs (X_n + k, X_{n-1}) have no single certified dominating pair and cannot be "
            "composed by PLD (a single release is answered exactly by the mechanism itself)"
        )
    elif isinstance(event, AdditiveNoise | DistributedSum):
        pair = mechanism_pair(event)
    else:
        raise UnsupportedEventError(
            f"no privacy-loss distribution for {event!r}: the PLD route holds additive noise, "
            "distributed sums (replace-one), PureDP, ApproxDP and subsampled releases"
        )
    if relation is Neighbouring.REPLACE_ONE:
        return {"replace-one": pair}
    return {"remove": pair, "add": pair}

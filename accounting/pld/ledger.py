"""Ledgers composed by privacy-loss distributions: every event, both directions.

Under add-remove every neighbouring pair of the composition is of one direction for all
mechanisms (Zhu, Dong & Wang 2022), so :func:`compose_events` composes the *remove* pairs of the
whole ledger and the *add* pairs separately, and answers with the larger δ (or ε). The
``k``-fold composition of one pair is by repeated squaring
(:meth:`~accounting.pld.PrivacyLossDistribution.self_compose`): the 10^4-fold Poisson-subsampled
Gaussian (``q = 0.01``, ``σ = 1``) takes about 2 s of CPU under add-remove
(``ε(10^-5) ∈ [6.18537, 6.18850]``) and 3 s under replace-one (``[10.87873, 10.88137]``).

A ledger of Gaussian mechanisms only is one Gaussian mechanism
(:func:`~accounting.mechanisms.gaussian.gaussian_equivalent_sigma`) and is answered in closed form
(Balle & Wang 2018, Theorem 8).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from mpmath import mp

from accounting import validate as v
from accounting.certified import Enclosure
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError
from accounting.mechanisms import AdditiveNoise, Mechanism
from accounting.mechanisms.base import max_enclosure
from accounting.mechanisms.gaussian import (
    equivalent_gaussian_delta,
    equivalent_gaussian_epsilon,
    gaussian_equivalent_sigma,
)
from accounting.neighbouring import Neighbouring
from accounting.noise import DEFAULT_DPS, Gaussian
from accounting.pld.atoms import CellTable
from accounting.pld.distribution import MAX_COMPOSITIONS, PrivacyLossDistribution, pair_distribution
from accounting.pld.pairs import Pair, dominating_pairs, lattice_pair
from accounting.pld.products import FLOAT_SLACK
from accounting.pld.spacing import RELATIVE_SPACING, default_spacing, power_of_two_below
from accounting.progress import Progress, current, report, reporting
from accounting.subsampling import MixturePair

__all__ = [
    "EPSILON_RTOL",
    "EPSILON_SLACK_SHARE",
    "SLACK_SHARE",
    "ComposedPLD",
    "compose_events",
    "compose_mechanisms",
    "event_distributions",
]


#: The share of a δ that float products may loosen it by (:meth:`ComposedPLD.loose_at`): ``2^-20``.
SLACK_SHARE = 2.0**-20

#: The slack an ``ε(δ)`` question first lets a composition take, as a share of ``δ``: wide enough
#: for one transform of 10^6 steps (:func:`accounting.pld.powers.power_rows`, whose certified error
#: is about 3e-10 there); what it cost in ``ε`` is measured on the answer
#: (:meth:`ComposedPLD.epsilon_looseness`) and held to :data:`EPSILON_RTOL` of it (else the
#: :class:`~accounting.accountant.Accountant` composes again with a share narrowed to fit).
EPSILON_SLACK_SHARE = 2.0**-12

#: How much of ``ε`` the slack may cost an ``ε(δ)`` answer (:meth:`ComposedPLD.epsilon_looseness`):
#: a fifth of the 1e-5 that the discretization's own error is kept within
#: (:mod:`accounting.pld.spacing`).
EPSILON_RTOL = 2e-6


@dataclass(frozen=True)
class ComposedPLD:
    """A ledger composed by PLD: one composition per direction, answered by the worst.

    Built by :func:`compose_events`. Under add-remove every neighbouring pair of the composition
    is of one direction for all mechanisms (Zhu, Dong & Wang 2022), so ``δ(ε)`` is the larger of
    the two directions' and ``ε(δ)`` likewise.

    Attributes
    ----------
    neighbouring : Neighbouring
        The relation.
    directions : dict
        The composed :class:`PrivacyLossDistribution` of each direction (one entry when both
        directions coincide or under replace-one).
    gaussian_sigma : tuple of float, optional
        When the ledger is all Gaussian mechanisms: the enclosure ``(lo, hi)`` of the single
        equivalent σ at sensitivity 1 (:func:`gaussian_equivalent_sigma`), answered in closed form.
    """

    neighbouring: Neighbouring
    directions: dict[str, PrivacyLossDistribution]
    gaussian_sigma: tuple[float, float] | None = None

    @property
    def points(self) -> int:
        """The points of the largest composed grid (0 for the Gaussian closed form)."""
        return max((d.pessimistic.size for d in self.directions.values()), default=0)

    @property
    def slack(self) -> float:
        """How much float products may have loosened ``δ`` (:attr:`PrivacyLossDistribution.slack`)."""
        return max((d.slack for d in self.directions.values()), default=0.0)

    def loose_at(self, delta: float) -> bool:
        """Whether the float products' :attr:`slack` is more than :data:`SLACK_SHARE` of ``delta``:
        an answer at ``delta`` should then be composed with exact products
        (:func:`~accounting.pld.products.exact_products`)."""
        return self.slack > SLACK_SHARE * float(delta)

    def epsilon_looseness(self, delta: float) -> float:
        """How much larger the upper end of ``ε(delta)`` may be for the :attr:`slack`: at most
        ``ε(δ) - ε(δ + slack)`` (upper ends), since the pessimistic ``δ(ε)`` exceeds the one
        composed without slack by at most the slack. ``inf`` where that cannot be told."""
        d = v.open_unit("delta", delta)
        slack = self.slack
        if slack == 0 or self.gaussian_sigma is not None:
            return 0.0
        hi = self.epsilon(d).hi
        if not mp.isfinite(hi):
            return 0.0
        if d + slack >= 1:
            return math.inf
        return float(hi - max(p.epsilon_upper(d + slack) for p in self.directions.values()))

    def delta(self, epsilon: float) -> Enclosure:
        """``δ(ε)`` of the ledger, certified: the largest over the directions."""
        eps = v.nonnegative("epsilon", epsilon)
        if self.gaussian_sigma is not None:
            return equivalent_gaussian_delta(self.gaussian_sigma, eps)
        return max_enclosure([pld.delta(eps) for pld in self.directions.values()])

    def epsilon(self, delta: float) -> Enclosure:
        """``ε(δ)`` of the ledger, certified: the largest over the directions."""
        d = v.open_unit("delta", delta)
        if self.gaussian_sigma is not None:
            return equivalent_gaussian_epsilon(self.gaussian_sigma, d)
        return max_enclosure([pld.epsilon(d) for pld in self.directions.values()])


def compose_events(
    items: Iterable[tuple[object, int]],
    neighbouring: Neighbouring | str,
    spacing: float | None = None,
    dps: int = DEFAULT_DPS,
    progress: Progress | None = None,
    refine: int = 0,
    slack: float = FLOAT_SLACK,
) -> ComposedPLD:
    """Compose a ledger of events by certified PLD convolution, per direction.

    Parameters
    ----------
    items : iterable of (event, count)
        Events and how often each ran (adaptively composed): an
        :class:`~accounting.mechanisms.AdditiveNoise` with Gaussian, Laplace or symmetric
        log-concave lattice noise; a :class:`~accounting.mechanisms.DistributedSum`
        (replace-one); a :class:`~accounting.mechanisms.PureDP` or
        :class:`~accounting.mechanisms.ApproxDP` (under the relation of its theorem); a
        :class:`~accounting.subsampling.PoissonSampled` or
        :class:`~accounting.subsampling.SampledWithoutReplacement` release.
    neighbouring : Neighbouring or str
        The relation the sensitivities refer to.
    spacing : float, optional
        A common grid spacing. By default each pair's exact lattice when they all share one
        (discrete Laplace, discrete Gaussian, cited guarantees of one ε), else the spacing
        chosen by :func:`default_spacing`.
    dps : int
        Working precision in decimal digits.
    progress : callable, optional
        ``progress(done, total)`` after each squaring of every composition (by default the
        current context's, :mod:`accounting.progress`).
    refine : int
        Halve the default spacing this many times (a finer grid: a tighter enclosure, at about
        twice the cost per halving). Ignored with ``spacing`` and on exact lattices.
    slack : float
        The mass float products (:mod:`accounting.pld.products`) may move in all, shared out over
        the distinct events: ``δ(ε)`` may be loose by that much (:attr:`ComposedPLD.slack`). Ask a
        share of the δ to be queried (:data:`SLACK_SHARE`, as the Accountant does); 0: exact.

    Returns
    -------
    ComposedPLD
        ``.epsilon(δ)`` and ``.delta(ε)`` as certified enclosures. A ledger of Gaussian
        mechanisms only is answered in closed form (:func:`gaussian_equivalent_sigma`).

    Raises
    ------
    UnsupportedEventError
        For an event without a certified dominating pair (see :func:`dominating_pairs`).
    """
    relation = Neighbouring.parse(neighbouring)
    counted = _counted(items)
    h = None if spacing is None else v.positive("spacing", spacing)
    dps = v.dps("dps", dps)
    slack = v.nonnegative("slack", slack)
    if all(isinstance(e, AdditiveNoise) and isinstance(e.noise, Gaussian) for e, _ in counted):
        sigmas = [(e.noise.sigma, e.sensitivity, k) for e, k in counted]  # type: ignore[attr-defined]
        return ComposedPLD(relation, {}, gaussian_equivalent_sigma(sigmas))
    per_direction: dict[str, list[tuple[Pair, int]]] = {}
    for event, count in counted:
        for direction, pair in dominating_pairs(event, relation).items():
            per_direction.setdefault(direction, []).append((pair, count))
    pairs = [pair for listed in per_direction.values() for pair, _ in listed]
    refine = v.integer("refine", refine, minimum=0, maximum=30)
    if h is None:
        h = default_spacing(pairs, dps, sum(count for _, count in counted))
        h = None if h is None else h / 2**refine
    cache: dict[Pair, PrivacyLossDistribution] = {}
    tables: dict[tuple[MixturePair, float], CellTable] = {}
    directions: dict[str, PrivacyLossDistribution] = {}
    done: dict[tuple[tuple[Pair, int], ...], PrivacyLossDistribution] = {}
    keys = {tuple(sorted(_merge(listed).items(), key=repr)) for listed in per_direction.values()}
    steps = sum(count.bit_length() for key in keys for _, count in key)
    finished = 0
    outer = progress if progress is not None else current()

    def step(done: int, total: int) -> None:
        report(finished + done, steps, outer)

    _check_counts(per_direction)
    for direction, listed in per_direction.items():
        key = tuple(sorted(_merge(listed).items(), key=repr))
        if key in done:  # both directions are the same ledger of pairs: compose once
            continue
        result: PrivacyLossDistribution | None = None
        share = slack / (2 * len(key))  # per distinct event: its self-composition, its product
        for pair, count in key:
            if pair not in cache:
                # a quarter of the share for what a window leaves beyond its two ends, per release
                cache[pair] = pair_distribution(pair, h, dps, tables, share / (8 * count))
            with reporting(None):
                part = cache[pair].self_compose(count, step, 3 * share / 4)
            finished += count.bit_length()
            result = part if result is None else result.compose(part, share)
        assert result is not None
        done[key] = result
        directions[direction] = result
    return ComposedPLD(relation, directions)


def _check_counts(per_direction: dict[str, list[tuple[Pair, int]]]) -> None:
    """Refuse a count of one event above :data:`MAX_COMPOSITIONS`."""
    for listed in per_direction.values():
        for count in _merge(listed).values():
            if count > MAX_COMPOSITIONS:
                raise UnsupportedError(
                    f"compositions={count} of one event are more than the PLD route squares out "
                    f"(at most {MAX_COMPOSITIONS:.0e}: one squaring of a grid per binary digit of the "
                    "count, about a third of a second each); the routes 'rdp', 'zcdp', 'pure' and "
                    "'published' compose any count at once"
                )


def _counted(
    items: Iterable[tuple[object, int]], name: str = "items", what: str = "event"
) -> list[tuple[object, int]]:
    """The ``(what, count)`` items of the parameter ``name``, validated (at least one; counts
    positive integers)."""
    entries = list(items)
    if not entries:
        raise ParameterError(name, entries, f"at least one ({what}, count) pair")
    counted: list[tuple[object, int]] = []
    article = "an" if what[0] in "aeiou" else "a"
    for i, item in enumerate(entries):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ParameterTypeError(f"{name}[{i}]", item, f"{article} ({what}, count) pair")
        counted.append((item[0], v.integer(f"{name}[{i}] count", item[1], minimum=1)))
    return counted


def _merge(listed: list[tuple[Pair, int]]) -> dict[Pair, int]:
    merged: dict[Pair, int] = {}
    for pair, count in listed:
        merged[pair] = merged.get(pair, 0) + count
    return merged


def event_distributions(
    event: object, neighbouring: Neighbouring | str, spacing: float | None = None, dps: int = DEFAULT_DPS
) -> dict[str, PrivacyLossDistribution]:
    """The privacy-loss distribution of one release of ``event`` for each direction of ``neighbouring``.

    :meth:`PrivacyLossDistribution.from_pair` of each of its :func:`dominating_pairs` (for a
    subsampled release, :class:`~accounting.subsampling.PoissonSampled` or
    :class:`~accounting.subsampling.SampledWithoutReplacement`, one per direction). A ledger is
    composed by :func:`compose_events`, which also shares the cells of the two directions and one
    grid across events.

    Parameters
    ----------
    event : object
        An event :func:`dominating_pairs` holds.
    neighbouring : Neighbouring or str
        The relation.
    spacing : float, optional
        The grid spacing (see :meth:`PrivacyLossDistribution.from_mechanism`).
    dps : int
        Working precision in decimal digits.
    """
    pairs = dominating_pairs(event, neighbouring)
    h = None if spacing is None else v.positive("spacing", spacing)
    dps = v.dps("dps", dps)
    return {direction: pair_distribution(pair, h, dps) for direction, pair in pairs.items()}


def compose_mechanisms(
    mechanisms_with_counts: Iterable[tuple[Mechanism, int]],
    spacing: float | None = None,
    dps: int = DEFAULT_DPS,
) -> PrivacyLossDistribution:
    """The PLD of running each lattice mechanism its count of times (independent noise).

    Kept for the callers of the single symmetric pair ``(X + Δ, X)`` (the same under both
    relations for additive noise); :func:`compose_events` is the general entry point.

    Parameters
    ----------
    mechanisms_with_counts : iterable of (Mechanism, int)
        Lattice mechanisms (see :meth:`PrivacyLossDistribution.from_mechanism`) and counts ``>= 1``.
    spacing : float, optional
        A common grid spacing. By default each mechanism's own grid when they all coincide
        (e.g. copies of one discrete Laplace: exact), else ``2^⌊log2(10^-4 · r)⌋`` for the
        widest single-mechanism loss range ``r``, for all of them.
    dps : int
        Working precision in decimal digits.
    """
    pairs: list[tuple[Pair, int]] = []
    for mechanism, count in _counted(mechanisms_with_counts, "mechanisms_with_counts", "mechanism"):
        noise, shift = lattice_pair(mechanism)
        pairs.append((MixturePair(noise, Fraction(1), shift), count))
    h = None if spacing is None else v.positive("spacing", spacing)
    dps = v.dps("dps", dps)
    plds = [pair_distribution(pair, h, dps) for pair, _ in pairs]
    if len({(p.spacing.lo, p.spacing.hi) for p in plds}) > 1:
        # The widest loss range sets the scale of the composition (a narrower one just spans
        # fewer grid points).
        common = max(_rounded_default(p) for p in plds)
        plds = [pair_distribution(pair, common, dps) for pair, _ in pairs]
    result = plds[0].self_compose(pairs[0][1])
    for pld, (_, count) in zip(plds[1:], pairs[1:], strict=True):
        result = result.compose(pld.self_compose(count))
    return result


def _rounded_default(pld: PrivacyLossDistribution) -> float:
    """The default rounded spacing of a single mechanism's PLD (from its loss range)."""
    lo, hi = pld.loss_range
    spread = hi - lo if hi > lo else max(1.0, abs(hi))
    return power_of_two_below(RELATIVE_SPACING * spread)

"""Published closed forms, selectable as routes of the :class:`~accounting.accountant.Accountant`.

Each :class:`PublishedBound` is the bound a paper proves for a family of mechanisms, evaluated by
:mod:`accounting.bounds`; ``route="published:<name>"`` answers by one of :data:`PUBLISHED`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from mpmath import mp

from accounting import bounds
from accounting.certified import float_down
from accounting.errors import UnsupportedError
from accounting.mechanisms import AdditiveNoise, DistributedSum, DistributedVectorSum, Mechanism
from accounting.noise import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    NoiseDistribution,
    Skellam,
    SumOfDiscreteGaussians,
)

__all__ = ["PUBLISHED", "Notion", "PublishedBound"]

Notion = Literal["rdp-integer", "zcdp", "pure"]


@dataclass(frozen=True)
class PublishedBound:
    """A closed form a paper proves for a family of mechanisms, selectable as a route.

    ``value(mechanism, alpha)`` is an upper bound (a float rounded up) on the mechanism's RDP at
    the integer order ``alpha`` (``notion == "rdp-integer"``), its ρ (``"zcdp"``) or its pure ε
    (``"pure"``; ``alpha`` is then ``None``). Parameters that a closed form needs as floats are
    rounded toward less noise (a larger bound).
    """

    name: str
    citation: str
    notion: Notion
    applies: Callable[[Mechanism], bool]
    value: Callable[[Mechanism, int | None], float]


def _central_noise(m: Mechanism) -> tuple[NoiseDistribution, float] | None:
    if isinstance(m, DistributedVectorSum):
        return m.total_noise, m.l2
    if isinstance(m, DistributedSum):
        try:
            return m.total_noise, m.sensitivity
        except UnsupportedError:
            return None
    if isinstance(m, AdditiveNoise):
        return m.noise, m.sensitivity
    return None


def _noise_is(
    kind: type[NoiseDistribution], extra: Callable[[Any], bool] = lambda _: True
) -> Callable[[Mechanism], bool]:
    def applies(m: Mechanism) -> bool:
        central = _central_noise(m)
        return central is not None and isinstance(central[0], kind) and extra(central[0])

    return applies


def _noise(m: Mechanism) -> Any:
    central = _central_noise(m)
    assert central is not None
    return central[0]


def _sens(m: Mechanism) -> Any:
    central = _central_noise(m)
    assert central is not None
    return central[1]


def _query(m: Mechanism) -> dict[str, Any]:
    """The sensitivity arguments of a lattice closed form: the integer ``Δ``, or a vector's ℓ2 and shape."""
    if isinstance(m, DistributedVectorSum):
        return m.bound_arguments
    return {"sensitivity": int(_sens(m))}


def _down(x: float | Fraction) -> float:
    """A parameter as a float rounded down (less noise: a larger bound)."""
    if isinstance(x, Fraction):
        with mp.workdps(40):
            exact = mp.mpf(x.numerator) / x.denominator
            f = float_down(exact)
            # mpf division rounds to nearest at 40 digits: step down if the float may exceed x.
            return f if Fraction(f) <= x else math.nextafter(f, -math.inf)
    return float(x)


def _skellam_symmetric(n: Skellam) -> bool:
    return Fraction(n.mu1) == Fraction(n.mu2) and n.offset == 0


PUBLISHED: dict[str, PublishedBound] = {
    b.name: b
    for b in (
        PublishedBound(
            "skellam-akl",
            "Agarwal, Kairouz & Liu 2021 (Skellam mechanism) RDP bound; Lemma 3 of the distributed "
            "MAB paper, at integer orders",
            "rdp-integer",
            _noise_is(Skellam, _skellam_symmetric),
            lambda m, a: bounds.skellam_rdp_akl(int(a or 2), _down(Fraction(_noise(m).mu1) * 2), **_query(m)),
        ),
        PublishedBound(
            "ddg-kls",
            "Kairouz, Liu & Steinke 2021 Prop. 13 (sum of discrete Gaussians); Lemma 4 of the "
            "distributed MAB paper",
            "zcdp",
            _noise_is(SumOfDiscreteGaussians),
            lambda m, _: bounds.sum_discrete_gaussians_rho_kls(
                _down(_noise(m).sigma), _noise(m).count, **_query(m)
            ),
        ),
        PublishedBound(
            "discrete-gaussian-cks",
            "Canonne, Kamath & Steinke 2020 Thm 14: ρ = Δ²/(2σ²)",
            "zcdp",
            _noise_is(DiscreteGaussian),
            lambda m, _: bounds.discrete_gaussian_rho_cks(_down(_noise(m).sigma), int(_sens(m))),
        ),
        PublishedBound(
            "gaussian",
            "Mironov 2017 Prop. 7: ρ = Δ²/(2σ²)",
            "zcdp",
            _noise_is(Gaussian),
            lambda m, _: bounds.gaussian_rdp(2.0, _down(_noise(m).sigma), float(_sens(m))) / 2,
        ),
        PublishedBound(
            "discrete-laplace",
            "the discrete Laplace mechanism: ε = Δ/b (Ghosh, Roughgarden & Sundararajan 2009)",
            "pure",
            _noise_is(DiscreteLaplace),
            lambda m, _: float(AdditiveNoise(_noise(m), _sens(m)).pure_epsilon().upper),
        ),
        PublishedBound(
            "laplace",
            "the Laplace mechanism: ε = Δ/b (Dwork, McSherry, Nissim & Smith 2006)",
            "pure",
            _noise_is(Laplace),
            lambda m, _: bounds.laplace_pure_epsilon(_down(_noise(m).scale), float(_sens(m))),
        ),
    )
}
"""Published closed forms, by route name (``route="published:<name>"``)."""

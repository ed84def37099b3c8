"""The cells of a Gaussian mixture pair in Arb balls: certified tails and losses at float points.

For the pair ``P = (1-α)N(0, σ²) + α N(a, σ²)``, ``Q = (1-β)N(0, σ²) + β N(b, σ²)``
(:class:`~accounting.subsampling.MixturePair`) the cells of the output axis that a privacy-loss
distribution is built from (:mod:`accounting.pld.atoms`) need, at each boundary ``x``, the
Gaussian tails ``P(X > x - c) = erfc((x - c)/(σ√2))/2`` of each component location ``c`` and the
loss

    L(x) = ln((1-α) + α e^{(2ax - a²)/(2σ²)}) - ln((1-β) + β e^{(2bx - b²)/(2σ²)}).

Thousands of boundaries per pair made this the cost of a long DP-SGD composition in
:mod:`mpmath.iv` (which also lacks ``erfc``); here every quantity is an Arb ball
(:mod:`accounting.balls`), as are the results (:class:`accounting.pld.atoms.CellTable`).
The tests hold both against the :mod:`mpmath` evaluation (:func:`accounting.special.erfc`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from mpmath import iv

from accounting.balls import arb, ball, ball_precision
from accounting.noise import Gaussian

if TYPE_CHECKING:
    from accounting.subsampling import MixturePair

__all__ = ["cell_masses", "gaussian_losses", "gaussian_masses", "mass_between"]


def _terms(pair: MixturePair) -> list[tuple[bool, arb, arb, arb, int]]:
    """``(whole, w, slope, offset, sign)`` of the loss's terms, as balls: the term
    ``ln((1 - w) + w e^{x·slope - offset})`` (``whole``: ``w = 1``) enters with ``sign``."""
    assert isinstance(pair.noise, Gaussian)
    s2 = ball(float(pair.noise.sigma)) ** 2
    terms = []
    for weight, shift, sign in pair.loss_terms():
        s = ball(shift)
        terms.append((weight == 1, ball(weight), s / s2, s * s / (2 * s2), sign))
    return terms


def gaussian_losses(pair: MixturePair, xs: list[float]) -> list[arb]:
    """:meth:`~accounting.subsampling.MixturePair.losses` of Gaussian noise at float points, as
    balls (at the current :mod:`mpmath.iv` precision)."""
    with ball_precision(iv.prec):
        terms = _terms(pair)
        out = []
        for x in xs:
            total = arb(0)
            for whole, w, slope, offset, sign in terms:
                r = arb(x) * slope - offset
                part = r if whole else (w * r.expm1()).log1p()
                total = total + part if sign > 0 else total - part
            out.append(total)
        return out


Number = TypeVar("Number")


def mass_between(
    first: tuple[Number, bool] | None,
    second: tuple[Number, bool] | None,
    one: Number,
    clamp: Callable[[Number], Number],
) -> Number:
    """``P(z1 < X <= z2)`` from the small tails at ``z1`` and ``z2`` (``None``: ``∓∞``): each tail
    is ``(t, upper)``, ``P(X > z) = t`` when ``upper`` else ``P(X <= z) = t`` (the smaller side,
    which keeps the relative precision of a difference). For balls or intervals alike (``one``
    and ``clamp``, which cuts the result at 0, are the number type's)."""
    if first is None and second is None:
        return one
    if first is None:
        assert second is not None
        t2, up2 = second
        mass = one - t2 if up2 else t2  # type: ignore[operator]
    elif second is None:
        t1, up1 = first
        mass = t1 if up1 else one - t1  # type: ignore[operator]
    else:
        (t1, up1), (t2, up2) = first, second
        if up1 and up2:
            mass = t1 - t2  # type: ignore[operator]
        elif not (up1 or up2):
            mass = t2 - t1  # type: ignore[operator]
        else:  # z1 on the lower side, z2 on the upper side
            mass = one - t1 - t2  # type: ignore[operator]
    return clamp(mass)


def gaussian_masses(pair: MixturePair, boundaries: list[float]) -> list[tuple[arb, arb]]:
    """:meth:`~accounting.subsampling.MixturePair.masses` of Gaussian noise at increasing float
    boundaries, as balls (at the current :mod:`mpmath.iv` precision): each tail on its small side."""
    assert isinstance(pair.noise, Gaussian)
    with ball_precision(iv.prec):
        scale = ball(float(pair.noise.sigma)) * arb(2).sqrt()
        tails: dict[float, list[tuple[arb, bool] | None]] = {}
        for c in pair.centers():
            row: list[tuple[arb, bool] | None] = [None]
            for x in boundaries:
                z = arb(x) - arb(c)
                upper_side = x >= c
                row.append((((z if upper_side else -z) / scale).erfc() / 2, upper_side))
            tails[c] = [*row, None]
        components = [(ball(weight), loc, in_p) for weight, loc, in_p in pair.components()]
        return cell_masses(tails, components, arb(0), arb(1), arb.nonnegative_part)


def cell_masses(
    tails: dict[float, list[tuple[Number, bool] | None]],
    components: list[tuple[Number, float, bool]],
    zero: Number,
    one: Number,
    clamp: Callable[[Number], Number],
) -> list[tuple[Number, Number]]:
    """``(P, Q)`` of each cell from each component location's small tails at the boundaries
    (``tails[loc]``, ``None`` at both ends): the components' weighted :func:`mass_between`, for balls
    or intervals alike."""
    out = []
    for i in range(len(next(iter(tails.values()))) - 1):
        p, q = zero, zero
        for weight, loc, in_p in components:
            mass = weight * mass_between(tails[loc][i], tails[loc][i + 1], one, clamp)  # type: ignore[operator]
            if in_p:
                p += mass
            else:
                q += mass
        out.append((p, q))
    return out

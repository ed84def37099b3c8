"""Whether a tree release meets a claimed ``(ε, δ)``, certified both ways (:func:`check_claim`).

``dp-account tree`` checks with it the σ0 of Theorem 5.1 of the federated LinUCB paper (Zhou &
Chowdhury, ICLR 2024) and of the authors' code against the certified accounting of
:mod:`accounting.tree`. A claim is met only when that is certified: an enclosure of ``δ(ε)`` that
holds ``δ`` is no verdict either way.
"""

from __future__ import annotations

from dataclasses import dataclass

from accounting import tree


@dataclass(frozen=True)
class ClaimCheck:
    """Whether a tree release meets a claim ``(ε, δ)``, certified both ways.

    ``delta`` is the certified upper end of ``δ(ε)``; ``verdict`` is ``"meets"`` when ``δ(ε) <= δ``
    is certified (by ``δ(ε)``'s upper end, or by ``ε(δ)``'s: ``ε(δ) <= ε`` implies it, ``δ(·)``
    being nonincreasing), ``"misses"`` when ``δ(ε) > δ`` is (by ``δ(ε)``'s lower end), and
    ``"undecided"`` when ``δ`` lies inside the enclosure of ``δ(ε)`` (then ``meets`` is false: a
    claim is met only when certified).
    """

    delta: float
    delta_lower: float
    verdict: str

    @property
    def meets(self) -> bool:
        """Whether the claim is met, certified."""
        return self.verdict == "meets"


def check_claim(release: tree.Tree, epsilon: float, delta: float) -> ClaimCheck:
    """:class:`ClaimCheck` of ``release`` against ``(epsilon, delta)``."""
    acc = release.accountant()
    at = acc.delta(epsilon)
    upper_end, lower_end = at.upper, at.lower
    if upper_end <= delta:
        return ClaimCheck(upper_end, lower_end, "meets")
    if at.lo > delta:
        return ClaimCheck(upper_end, lower_end, "misses")
    if acc.epsilon(delta).upper <= epsilon:
        # δ itself is then a certified upper end of δ(ε), below the one computed directly.
        return ClaimCheck(delta, lower_end, "meets")
    return ClaimCheck(upper_end, lower_end, "undecided")

"""Privacy amplification by shuffling, one published result per function.

``n`` users each run an ``ε0``-LDP local randomizer; a shuffler permutes the ``n`` reports. The
functions here bound the ``(ε, δ)`` of the shuffled output for neighbouring datasets that differ
in one user's input (replace-one), and say which theorem they are:

* :func:`efmrtt` — Erlingsson, Feldman, Mironov, Raghunathan, Talwar & Thakurta (SODA 2019);
* :func:`blanket_generic`, :func:`blanket_randomized_response` — Balle, Bell, Gascón & Nissim,
  "The privacy blanket of the shuffle model" (CRYPTO 2019);
* :func:`fmt_closed`, :func:`fmt_numerical` (and :func:`fmt_delta`) — Feldman, McMillan & Talwar,
  "Hiding among the clones" (FOCS 2021): Theorem 3.1 and the numerical bound, the latter
  certified here (an enclosure of the analysis's exact ``ε``, so the gap is visible);
* :func:`randomized_response_exact` — the exact ``ε`` of shuffled binary randomized response
  (small ``n``): a *lower* bound for every generic analysis, which must cover this randomizer.

:func:`amplify` dispatches by name (``dp-account shuffle`` on the command line). One module per
analysis: :mod:`~accounting.amplification.closed_form`, :mod:`~accounting.amplification.clones`
(the numerical bound), :mod:`~accounting.amplification.randomized_response`, and the result they
share, :mod:`~accounting.amplification.bound`. A paper's own amplification lemma is that paper's
recipe (Lemma F.2 of Zhou & Chowdhury 2024: :mod:`accounting.papers.federated_lcb`).

Conventions
-----------
- Every ε and δ returned is rounded *up* (:func:`~accounting.certified.float_up`) from a value
  computed in :mod:`mpmath` (at 50 digits, or in interval arithmetic); the ``lower`` ends of
  enclosures are rounded down.
- A theorem applied outside its hypotheses does not give a number: the result has
  ``valid=False``, ``conditions`` says which hypothesis fails, and ``epsilon``/``delta`` fall back
  to the trivial guarantee (shuffling is post-processing of the ``ε0``-LDP reports, so the output
  is ``(ε0, 0)``-DP) — a true statement, never the theorem's formula evaluated where it is not
  proved.
- Logarithms are natural.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from accounting.amplification.bound import AmplificationBound
from accounting.amplification.clones import MAX_USERS, MIN_DELTA, MIN_EPSILON0, fmt_delta, fmt_numerical
from accounting.amplification.closed_form import (
    blanket_generic,
    blanket_randomized_response,
    efmrtt,
    fmt_closed,
)
from accounting.amplification.randomized_response import RR_EXACT_MAX_USERS, randomized_response_exact
from accounting.errors import ParameterError

__all__ = [
    "BOUNDS",
    "MAX_USERS",
    "MIN_DELTA",
    "MIN_EPSILON0",
    "RR_EXACT_MAX_USERS",
    "AmplificationBound",
    "amplify",
    "blanket_generic",
    "blanket_randomized_response",
    "efmrtt",
    "fmt_closed",
    "fmt_delta",
    "fmt_numerical",
    "randomized_response_exact",
]


_GENERIC: dict[str, Callable[[float, int, float], AmplificationBound]] = {
    "fmt-numerical": fmt_numerical,
    "fmt-closed": fmt_closed,
    "blanket": blanket_generic,
    "efmrtt": efmrtt,
}

#: The generic bounds (valid for any ``ε0``-LDP randomizer) :func:`amplify` knows, tightest first.
BOUNDS: Final = tuple(_GENERIC)


def amplify(epsilon0: float, users: int, delta: float, bound: str = "fmt-numerical") -> AmplificationBound:
    """Amplification by shuffling of ``n`` ``ε0``-LDP reports, by the named bound.

    Parameters
    ----------
    epsilon0 : float
        The local randomizer's ``ε0``.
    users : int
        ``n``, the number of shuffled reports.
    delta : float
        The target ``δ``.
    bound : {"fmt-numerical", "fmt-closed", "blanket", "efmrtt"}
        :func:`fmt_numerical` (the tightest), :func:`fmt_closed`, :func:`blanket_generic`,
        :func:`efmrtt`.

    Returns
    -------
    AmplificationBound
    """
    if bound not in _GENERIC:
        raise ParameterError("bound", bound, "one of " + ", ".join(BOUNDS))
    return _GENERIC[bound](epsilon0, users, delta)

"""Event selection on the selection half: the distinguishing event and its direction.

Candidates are the threshold sets ``{T >= t}``, ``{T <= t}`` and the sets of bins of largest
likelihood ratio (ordered by a held-out pilot), each scored by the ε bound of simultaneous
(Bonferroni) Wilson intervals, so that a sparse tail event does not win by chance. The event is
fixed here, before the estimation half is looked at: no double dipping (Jagielski, Ullman & Oprea
2020).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from verification.audit._binning import Binning
from verification.errors import VerificationError

__all__ = ["Event", "select_event"]


@dataclass(frozen=True)
class Event:
    """The chosen event: a mask of bins, its direction, how a report names it, and its selection score."""

    mask: NDArray[np.bool_]
    reverse: bool
    description: str
    score: float


def _wilson(hits: NDArray[np.float64], n: int, z: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson score bounds (one-sided at ``z``; Wilson 1927): a fast, smooth stand-in for Clopper–Pearson.

    Used only to *rank* candidate events on the selection half (any rule is valid there);
    it penalizes events with few samples, as the final Clopper–Pearson bound will.
    """
    p = hits / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def _candidates(
    num: NDArray[np.int64], den: NDArray[np.int64], ratio: NDArray[np.float64] | None
) -> Iterator[tuple[str, NDArray[np.int64], NDArray[np.int64], NDArray[np.intp]]]:
    """Families of nested events as (kind, cumulative num counts, cumulative den counts, order).

    Each family lists bins in an order; the k-th event is the first k + 1 bins of it. The
    likelihood-ratio order comes from the pilot, not from the counts ranked here: ranked by
    their own noisy ratios, the top bins of the selection half always look better than they are.
    """
    n = num.size
    up = np.arange(n - 1, -1, -1, dtype=np.intp)  # {T >= t}: bins from the top down
    down = np.arange(n, dtype=np.intp)  # {T <= t}
    families = [("at-least", up), ("at-most", down)]
    if ratio is not None:
        families.append(("ratio", np.argsort(-ratio, kind="stable").astype(np.intp)))
    for kind, order in families:
        yield kind, np.cumsum(num[order]), np.cumsum(den[order]), order


def select_event(
    sel_a: NDArray[np.int64],
    sel_b: NDArray[np.int64],
    n: int,
    delta: float,
    alpha: float,
    binning: Binning,
    statistic: str,
    pilot: tuple[NDArray[np.int64], NDArray[np.int64]] | None,
) -> Event:
    """The event and direction with the best ε bound on the selection half.

    ``pilot`` holds the pilot's histograms, which order the bins by likelihood ratio
    (None: threshold events only).
    """
    from scipy.stats import norm

    # Simultaneous bounds over every candidate (Bonferroni): with a per-event level the
    # maximum over thousands of sparse tail sets is a winner's curse (a set seen 10 times on
    # D and never on D' looks like ε ≈ 0.2 on its own half and is worthless on the other).
    families = 3 if pilot is not None else 2
    z = float(norm.isf(alpha / (2 * 2 * families * max(binning.bins - 1, 1))))
    best: Event | None = None
    for reverse in (False, True):
        num, den = (sel_b, sel_a) if reverse else (sel_a, sel_b)
        ratio = None
        if pilot is not None:
            # Empirical likelihood ratio of the pilot, add-½ smoothed, highest first.
            p_num, p_den = (pilot[1], pilot[0]) if reverse else pilot
            ratio = (p_num + 0.5) / (p_den + 0.5)
        for kind, cum_num, cum_den, order in _candidates(num, den, ratio):
            # Proper nonempty subsets only: the whole space distinguishes nothing.
            k = cum_num[:-1].astype(np.float64)
            m = cum_den[:-1].astype(np.float64)
            if k.size == 0:
                continue
            p_lo, _ = _wilson(k, n, z)
            _, q_hi = _wilson(m, n, z)
            with np.errstate(divide="ignore", invalid="ignore"):
                score = np.log((p_lo - delta) / q_hi)
            score = np.where(np.isnan(score), -np.inf, score)
            i = int(np.argmax(score))
            if best is not None and not score[i] > best.score:
                continue
            mask = np.zeros(binning.bins, dtype=bool)
            mask[order[: i + 1]] = True
            best = Event(mask, reverse, _describe(kind, order, i, binning, statistic), float(score[i]))
    if best is None:
        raise VerificationError("the statistic took a single value on the pilot: no event can distinguish")
    return best


def _describe(kind: str, order: NDArray[np.intp], i: int, binning: Binning, name: str) -> str:
    if kind == "at-least":
        return f"{name} {binning.at_least(int(order[i]))}"
    if kind == "at-most":
        return f"{name} {binning.at_most(int(order[i]))}"
    chosen = sorted(int(b) for b in order[: i + 1])
    if len(chosen) <= 6:
        return f"{name} in {{{', '.join(binning.values(b) for b in chosen)}}}"
    return f"{name} in the {len(chosen)} bins (of {binning.bins}) of highest empirical likelihood ratio"

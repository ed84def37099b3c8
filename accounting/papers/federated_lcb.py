"""The recipes of Zhou & Chowdhury 2024 (ICLR), "On differentially private federated linear
contextual bandits".

* :func:`gaussian_amplification_lemma_f2` — Lemma F.2 (Appendix F), the paper's amplification by
  shuffling of ``N`` Gaussian mechanisms on datasets of ``n > 1`` points each, which extends
  Feldman, McMillan & Talwar 2022 (Theorems 3.1 and 3.8; :mod:`accounting.amplification`);
* :func:`theorem53_sigma0` — the per-node σ0 of Theorem 5.3 (§5.2, shuffle DP via amplification)
  with explicit constants, inverted through advanced composition and Lemma F.2.

The shuffle vector-sum protocol of its §5.3 (``P_Vec`` of Cheu et al. 2021) is generic:
:mod:`accounting.summation` (protocol ``"cheu-vector"``). Where the extracted paper text lost a
symbol, the docstring says which reading is taken and why (this project's notes on the paper:
``papers/federated-lcb.md``). Everything here is re-exported by the :mod:`accounting` package root.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from mpmath import mp

from accounting import validate as v
from accounting.amplification import AmplificationBound
from accounting.certified import Mpf, float_down, float_up
from accounting.composition import drv_epsilon
from accounting.errors import ParameterError, UnsupportedError
from accounting.mechanisms import ApproxDP
from accounting.search import largest

__all__ = ["Theorem53Calibration", "gaussian_amplification_lemma_f2", "theorem53_sigma0"]

_DPS = 50
"""Working precision (decimal digits) of the formulas."""

_LEMMA_F2 = (
    "Zhou & Chowdhury 2024 (ICLR), 'On differentially private federated linear contextual bandits', "
    "Lemma F.2 (amplification lemma for Gaussian mechanisms on datasets of size n > 1)"
)


def _lemma_f2_mp(e0: Mpf, n: int, silos: int, dl: Mpf) -> Mpf:
    """``ε_r`` of Lemma F.2 at 50 digits."""
    q = mp.tanh(e0 / 2)  # (e^ε0 - 1)/(e^ε0 + 1)
    big = mp.exp(n * e0)
    return mp.log1p(q * (8 * mp.sqrt(big * mp.log(4 / dl) / silos) + 8 * big / silos))


def _lemma_f2_delta_mp(e0: Mpf, d0: Mpf, silos: int, dl: Mpf, eps_r: Mpf) -> Mpf:
    """``δ_r`` of Lemma F.2 at 50 digits."""
    return mp.tanh(e0 / 2) * dl + silos * (mp.exp(eps_r) + 1) * (1 + mp.exp(-e0) / 2) * d0


def _lemma_f2_conditions(e0: float, n: int, silos: int, dl: float) -> tuple[bool, str]:
    with mp.workdps(_DPS):
        ln2 = mp.log(2 / mp.mpf(dl))
        limit = mp.log(silos / (16 * ln2)) / n if silos > 16 * ln2 else -mp.inf
        first = mp.mpf(e0) <= limit
    second = n * e0 < 1
    text = (
        f"ε0 = {e0:g} {'<=' if first else '>'} (1/n) ln(N/(16 ln(2/δ))) = {mp.nstr(limit, 6)}; "
        f"n ε0 = {n * e0!r} {'<' if second else '>='} 1 (the scaling step for a classically calibrated "
        "Gaussian)"
    )
    return bool(first and second), text


def gaussian_amplification_lemma_f2(
    epsilon0: float, delta0: float, silos: int, points: int, delta: float
) -> AmplificationBound:
    """Lemma F.2 of Zhou & Chowdhury 2024: shuffling ``N`` Gaussian mechanisms on ``n`` points each.

    Appendix F of the paper (its constants partly lost in the extracted text, read as below).
    ``N`` silos each hold ``n`` data points and release the output of an ``(ε0, δ0)``-DP Gaussian
    mechanism, ``ε0 ∈ (0, 1)``; a shuffler permutes the ``N`` outputs. For
    ``ε0 <= (1/n) ln(N/(16 ln(2/δ)))`` the shuffled release is ``(ε_r, δ_r)``-DP with,
    ``q = (e^ε0 - 1)/(e^ε0 + 1)``,

        ε_r = ln(1 + q (8 sqrt(e^{n ε0} ln(4/δ)/N) + 8 e^{n ε0}/N)),
        δ_r = q δ + N (e^ε_r + 1)(1 + e^{-ε0}/2) δ0.

    Deviations and readings:

    * The extracted text shows the last factor as "(1 + e εr 0/2)"; it is read as
      ``1 + e^{-ε0}/2`` as in Feldman, McMillan & Talwar 2022, Theorem 3.8. The proof's total-variation bound
      ``1 + 1/(2 e^{n ε0})`` is smaller, so this reading is the conservative one.
    * The proof's step "an arbitrary pair of datasets is ``(n ε0, δ0)``-indistinguishable" holds
      for a Gaussian calibrated by the classic recipe only while ``n ε0 < 1`` (the recipe's own
      range, footnote 7), so ``n ε0 < 1`` is checked as a hypothesis too.

    Outside the hypotheses the result has ``valid=False`` and the trivial ``(ε0, δ0)`` (shuffling
    the silos' outputs is post-processing of the one changed silo's ``(ε0, δ0)``-DP output).

    Parameters
    ----------
    epsilon0 : float
        The per-silo ``ε0 ∈ (0, 1)`` for adjacent datasets (one point changed).
    delta0 : float
        The per-silo ``δ0 ∈ [0, 1)``.
    silos : int
        ``N >= 1``, the number of shuffled outputs.
    points : int
        ``n >= 1``, the size of each silo's dataset (any upper bound on it).
    delta : float
        The lemma's free ``δ ∈ (0, 1)``.

    Returns
    -------
    AmplificationBound
        ``epsilon = ε_r`` and ``delta = δ_r``, both rounded up.
    """
    e0 = v.real("epsilon0", epsilon0)
    if not 0 < e0 < 1:
        raise ParameterError("epsilon0", epsilon0, "a real number in the open interval (0, 1) (Lemma F.2)")
    d0 = v.nonnegative("delta0", delta0)
    if not d0 < 1:
        raise ParameterError("delta0", delta0, "a real number in [0, 1)")
    big_n = v.integer("silos", silos, minimum=1)
    n = v.integer("points", points, minimum=1)
    dl = v.open_unit("delta", delta)
    holds, cond = _lemma_f2_conditions(e0, n, big_n, dl)
    if not holds:
        return AmplificationBound(e0, d0, "lemma-f2", _LEMMA_F2, None, False, f"{cond}; reporting (ε0, δ0)")
    with mp.workdps(_DPS):
        eps_r = _lemma_f2_mp(mp.mpf(e0), n, big_n, mp.mpf(dl))
        delta_r = _lemma_f2_delta_mp(mp.mpf(e0), mp.mpf(d0), big_n, mp.mpf(dl), eps_r)
        return AmplificationBound(float_up(eps_r), float_up(delta_r), "lemma-f2", _LEMMA_F2, None, True, cond)


@dataclass(frozen=True)
class Theorem53Calibration:
    """The per-node Gaussian noise of Theorem 5.3 (SDP via amplification), and its accounting.

    Attributes
    ----------
    sigma0 : float
        Standard deviation of each tree node's Gaussian noise (rounded up; ``inf`` if infeasible).
    epsilon0, delta0 : float
        The per-silo, per-release budget the noise is calibrated to (rounded down).
    epsilon_release, delta_release : float
        One shuffled release by Lemma F.2 at ``(epsilon0, delta0)`` (rounded up).
    releases : int
        ``κ = floor(log2(floor(T/B))) + 1``: releases per stream a user's data enters.
    epsilon, delta : float
        The certified total over both streams (``<= `` the targets; rounded up).
    valid : bool
        False when no ``ε0`` meets Lemma F.2's hypotheses (then ``sigma0`` is ``inf``).
    conditions : str
        What was checked.
    theorem : str
        The source.
    """

    sigma0: float
    epsilon0: float
    delta0: float
    epsilon_release: float
    delta_release: float
    releases: int
    epsilon: float
    delta: float
    valid: bool
    conditions: str
    theorem: str

    def event(self) -> ApproxDP:
        """The total ``(ε, δ)`` of the two streams as a ledger event (replace-one)."""
        if not self.valid:
            raise UnsupportedError(f"Theorem 5.3 certifies nothing here: {self.conditions}")
        return ApproxDP(self.epsilon, self.delta, self.theorem)


# The source of the ledger event: part of the ledgers written by runs, so kept as first written.
_THEOREM53 = (
    "Zhou & Chowdhury 2024 (ICLR), Theorem 5.3 (SDP via amplification): the sigma0 recipe of the federated "
    "spec §5.2.4 with explicit constants — two streams, advanced composition over kappa releases, Lemma F.2 "
    "inverted numerically, classic Gaussian calibration"
)


def _largest(pred: Callable[[Mpf], bool], hi: Mpf) -> Mpf:
    """The largest float ``x ∈ (0, hi]`` with ``pred(x)``, ``pred`` true near 0 and decreasing."""
    top = float_down(hi)
    if pred(mp.mpf(top)):
        return mp.mpf(top)
    return mp.mpf(largest(lambda x: pred(mp.mpf(x)), 0.0, top))


def theorem53_sigma0(
    epsilon: float, delta: float, silos: int, horizon: int, batch: int, sensitivity: float = 1.0
) -> Theorem53Calibration:
    """σ0 of Theorem 5.3 of Zhou & Chowdhury 2024 (§5.2), with explicit constants.

    The paper states only ``σ0² = O(κ log(1/δ) log(κ/(δT)) log(Mκ/δ)/(ε² M))`` (its proof was lost
    from the extracted text). This follows an exact-constant recipe of our own that re-derives that
    formula (``papers/federated-lcb.md``), every step rounded toward more noise:

    1. two streams (bias and covariance), each ``(ε/2, δ/2)``;
    2. each user's data enters ``κ = floor(log2(floor(T/B))) + 1`` releases per stream; advanced
       composition (Dwork–Rothblum–Vadhan) with ``δ' = δ/4`` and per-release ``δ_r = δ/(4κ)``,
       and the largest ``ε_r`` with ``ε_r sqrt(2κ ln(1/δ')) + κ ε_r (e^ε_r - 1) <= ε/2``;
    3. Lemma F.2 (:func:`gaussian_amplification_lemma_f2`) with ``N = M`` silos and ``n = T``
       points and its ``δ`` set to ``δ_r/2``, inverted for the largest ``ε0`` (subject to its
       hypotheses) whose ``ε_r`` is at most the target; then ``δ0`` is the largest with
       ``M (e^ε_r + 1)(1 + e^{-ε0}/2) δ0 <= δ_r/2``, so both parts of ``δ_r`` are at most ``δ_r/2``;
    4. ``σ0 = Δ sqrt(2 ln(1.25/δ0))/ε0`` (Dwork–Roth Thm A.1, valid since ``ε0 < 1``).

    The chain is then re-run forwards at the rounded ``(ε0, δ0)`` and the certified totals are
    returned; it must meet the targets. When Lemma F.2's hypothesis cannot hold for any ``ε0``
    (it needs ``M > 16 ln(2/δ_lemma)``; e.g. the paper's own ``M = 100, δ = 1e-4``) the result has
    ``valid=False`` and ``sigma0 = inf``: the theorem certifies nothing there.

    Parameters
    ----------
    epsilon : float
        Target total ``ε > 0``.
    delta : float
        Target total ``δ ∈ (0, 1)``.
    silos : int
        ``M >= 1`` silos (the shuffled outputs per release).
    horizon : int
        ``T >= 1`` rounds (each silo's dataset size, Lemma F.2's ``n``).
    batch : int
        ``B ∈ [1, T]`` rounds between synchronisations.
    sensitivity : float
        The ℓ2 sensitivity ``Δ > 0`` of one point (1 in the paper, although under its replace-one
        adjacency the bias stream's sensitivity is 2 and the covariance stream's √2).

    Returns
    -------
    Theorem53Calibration
    """
    eps = v.positive("epsilon", epsilon)
    dl = v.open_unit("delta", delta)
    big_m = v.integer("silos", silos, minimum=1)
    T = v.integer("horizon", horizon, minimum=1)
    B = v.integer("batch", batch, minimum=1)
    if B > T:
        raise ParameterError("batch", batch, f"an integer in [1, horizon] = [1, {T}]")
    L = v.positive("sensitivity", sensitivity)
    syncs = T // B
    kappa = syncs.bit_length()  # floor(log2(K)) + 1
    with mp.workdps(_DPS):
        e_s, d_s = mp.mpf(eps) / 2, mp.mpf(dl) / 2
        d_prime = d_s / 2
        d_r = d_s / (2 * kappa)
        log_inv = -mp.log(d_prime)
        eps_r = _largest(lambda x: drv_epsilon(x, kappa, log_inv) <= e_s, e_s)
        d_lemma = d_r / 2
        ln2 = mp.log(2 / d_lemma)
        if not big_m > 16 * ln2:
            cond = f"M = {big_m} <= 16 ln(2/δ_lemma) = {mp.nstr(16 * ln2, 6)}: Lemma F.2 holds for no ε0 > 0"
            inf = math.inf
            return Theorem53Calibration(inf, 0.0, 0.0, inf, 1.0, kappa, inf, 1.0, False, cond, _THEOREM53)
        cap = min(mp.log(big_m / (16 * ln2)) / T, (1 - mp.mpf(10) ** -30) / T)

        def fits(e0: Mpf) -> bool:
            return bool(_lemma_f2_mp(e0, T, big_m, d_lemma) <= eps_r)

        e0 = mp.mpf(float_down(_largest(fits, cap)))
        if e0 <= 0:  # pragma: no cover - fits(x) holds for small enough x whenever M > 16 ln(2/δ)
            raise UnsupportedError("Theorem 5.3: no positive ε0 meets the per-release target")
        # δ0 from the ε_r actually reached (the caps on ε0 may keep it below the target), so that
        # the noise depends on the targets monotonically
        reached = _lemma_f2_mp(e0, T, big_m, d_lemma)
        d0 = mp.mpf(float_down(d_r / (2 * big_m * (mp.exp(reached) + 1) * (1 + mp.exp(-e0) / 2))))
        sigma0 = float_up(mp.mpf(L) * mp.sqrt(2 * mp.log(mp.mpf("1.25") / d0)) / e0)
        # forwards, at the rounded values: Lemma F.2, then κ releases, then two streams
        rel_e = _lemma_f2_mp(e0, T, big_m, d_lemma)
        rel_d = _lemma_f2_delta_mp(e0, d0, big_m, d_lemma, rel_e)
        tot_e = 2 * drv_epsilon(rel_e, kappa, log_inv)
        tot_d = 2 * (kappa * rel_d + d_prime)
        if not (tot_e <= eps and tot_d <= dl):  # pragma: no cover - guards the inversion above
            raise UnsupportedError(f"Theorem 5.3: internal check failed ({tot_e}, {tot_d})")
        holds, cond = _lemma_f2_conditions(float(e0), T, big_m, float(d_lemma))
        return Theorem53Calibration(
            sigma0,
            float(e0),
            float(d0),
            float_up(rel_e),
            float_up(rel_d),
            kappa,
            float_up(tot_e),
            float_up(tot_d),
            holds,
            cond,
            _THEOREM53,
        )

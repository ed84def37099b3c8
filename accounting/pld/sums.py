"""Suffix sums of one side of a PLD, as δ and ε queries read them (exact integers, by blocks).

``δ(ε)`` of a grid is a suffix sum and a discounted suffix sum above ε (the hockey stick,
:mod:`accounting.pld.distribution`): ``M(i) = Σ_{j >= i} m_j`` and ``H(i) = Σ_{j >= i} m_j r^{j-i}``
with ``r = e^{-h}``, which Horner's rule gives from the top down, one grid point at a time. A
question about ``ε(δ)`` of a long composition walks a few hundred thousand points above its answer
(the composed window reaches far beyond ε): one Python step each took 0.4 s at 10^5 DP-SGD steps.
Here the grid is cut into blocks of :data:`BLOCK` points. Within a block the discounted sum is one
dot product with the powers ``r^d`` (fixed point, rounded in the side's direction), computed
exactly in 16-bit limbs by a matrix product (numpy, many blocks at once; in float64, whose
sums of these integers stay below 2^53); blocks are
chained by the power over a block. The sums stay exact integers with directed rounding, as the
point-by-point recurrence, and their rounding error is smaller: one unit per block and per power
instead of one per point.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from accounting.certified import shift_down
from accounting.pld.grid import Grid, int_rows

__all__ = ["BLOCK", "GUARD_BITS", "SuffixSums"]

#: Fractional bits carried by the discounted sums beyond the probabilities' own.
GUARD_BITS = 32

#: Grid points per block: a block's discounted sum is one dot product of this length (its limb
#: products, below 2^32 each, then add up to below 2^41: exact in float64 and int64).
BLOCK = 512

#: Blocks summed at once, from the top down, as far as a question reaches.
_CHUNK = 64

_LIMB_BITS = 16


def _limbs(rows: NDArray[np.uint8]) -> NDArray[np.int64]:
    """Byte rows of an even width as little-endian 16-bit limbs (rows)."""
    return np.ascontiguousarray(rows).view("<u2").astype(np.int64)


def _joined(diagonals: NDArray[np.int64]) -> list[int]:
    """Rows of limb sums ``Σ_s d_s 2^(16 s)`` as Python integers."""
    return [sum(d << (_LIMB_BITS * s) for s, d in enumerate(row) if d) for row in diagonals.tolist()]


class SuffixSums:
    """``mass(i) = M(i)`` (scale ``2^bits``) and ``horner(i) = H(i)`` (scale ``2^(bits + G)``,
    ``G`` = :data:`GUARD_BITS`) of a grid, rounded down with ``r`` rounded down (a lower bound, for
    the pessimistic side) or up with ``r`` rounded up (an upper bound, for the optimistic side).

    ``ratio`` is that ``r`` with ``frac = bits + 2G`` fractional bits; ``mass(len) = horner(len) =
    0`` (the empty suffix).

    The powers ``P_d ≈ r^d 2^frac`` (``d <= BLOCK``) are chained products of ``ratio``, each
    rounded in the side's direction, so ``P_d`` is below (above) ``r^d 2^frac`` whenever ``ratio``
    is below (above) ``r``; every product and shift below rounds the same way. Then

        ``H(i) = Σ_{i <= j < e} m_j P_{j-i} / 2^(frac - G) + H(e) P_{e-i} / 2^frac``

    for ``i`` in the block that ends at ``e``, each term rounded in that direction.
    """

    def __init__(self, grid: Grid, ratio: int, frac: int, up: bool) -> None:
        self.ratio = ratio
        self._frac = frac
        self._up = up
        self._n = grid.size
        powers = [1 << frac]
        for _ in range(BLOCK):
            powers.append(shift_down(powers[-1] * ratio, frac, up))
        self._powers = powers
        self._power_limbs = _limbs(int_rows(powers, 2 * -(-max(powers).bit_length() // _LIMB_BITS)))
        self._mass_limbs = _limbs(grid.byte_rows(grid.width + grid.width % 2))
        # Entry t: the sums at the start of the t-th block from the top (entry 0: the empty top).
        self._starts = [self._n]
        self._mass = [0]
        self._horner = [0]
        self._cache: dict[int, tuple[int, int]] = {}

    def _dot(self, masses: NDArray[np.int64], powers: NDArray[np.int64]) -> NDArray[np.int64]:
        """Limb sums of ``Σ_j m_j P_j`` for stacked blocks ``(t, j, limb)`` of masses and powers."""
        # In floats through BLAS, exactly: each limb product is below 2^32 and every partial sum
        # an integer below 2^41 < 2^53, whatever the order of summation.
        exact = np.matmul(masses.transpose(0, 2, 1).astype(np.float64), powers.astype(np.float64))
        products = exact.astype(np.int64)
        t, lm, lp = products.shape
        diagonals = np.zeros((t, lm + lp - 1), dtype=np.int64)
        for c in range(lm):
            diagonals[:, c : c + lp] += products[:, c, :]
        return diagonals

    def _block_of(self, i: int) -> int:
        """The index ``t`` of the block holding ``i`` (from the top), its sums computed."""
        t = (self._n - 1 - i) // BLOCK + 1
        if len(self._starts) <= t:
            self._extend(max(t, len(self._starts) - 1 + _CHUNK))
        return t

    def _extend(self, last: int) -> None:
        """Sum the blocks from the lowest one summed down to block ``last`` (or the bottom)."""
        top = self._starts[-1]
        whole = min(last - len(self._starts) + 1, top // BLOCK)
        if whole > 0:
            low = top - whole * BLOCK
            stacked = self._mass_limbs[low:top].reshape(whole, BLOCK, -1)[::-1]
            insides = _joined(self._dot(stacked, self._power_limbs[:BLOCK]))
            sums = _joined(stacked.sum(axis=1))
            for inside, total in zip(insides, sums, strict=True):
                self._mass.append(self._mass[-1] + total)
                self._horner.append(self._chained(inside, self._horner[-1], BLOCK))
                self._starts.append(self._starts[-1] - BLOCK)
        if len(self._starts) <= last and 0 < self._starts[-1] < BLOCK:
            mass, horner = self._suffix(0, self._starts[-1])
            self._mass.append(mass)
            self._horner.append(horner)
            self._starts.append(0)

    def _suffix(self, i: int, end: int) -> tuple[int, int]:
        """``M`` and ``H`` from ``i`` up to the block end ``end`` (whose sums are known)."""
        t = (self._n - end) // BLOCK
        length = end - i
        block = self._mass_limbs[i:end][None]
        inside = _joined(self._dot(block, self._power_limbs[:length]))[0]
        total = _joined(block.sum(axis=1))[0]
        return self._mass[t] + total, self._chained(inside, self._horner[t], length)

    def _chained(self, inside: int, above: int, length: int) -> int:
        """``H`` at ``length`` points below a block end: the dot product ``inside`` (scale
        ``2^(bits + frac)``) plus ``H`` at the end (``above``) times ``P_length``, each rounded."""
        frac, up = self._frac, self._up
        return shift_down(inside, frac - GUARD_BITS, up) + shift_down(above * self._powers[length], frac, up)

    def _sums(self, i: int) -> tuple[int, int]:
        if i >= self._n:
            return 0, 0
        if i not in self._cache:
            t = self._block_of(i)
            start = self._starts[t]
            if i == start:
                self._cache[i] = (self._mass[t], self._horner[t])
            else:
                self._cache[i] = self._suffix(i, self._starts[t - 1])
        return self._cache[i]

    def mass(self, i: int) -> int:
        return self._sums(i)[0]

    def horner(self, i: int) -> int:
        return self._sums(i)[1]

    def at(self, i: int) -> int:
        """The mass ``m_i`` itself."""
        return self.mass(i) - self.mass(i + 1)

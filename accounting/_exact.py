"""Vectorized exact samplers: integer and rational arithmetic only, no floating point.

The kernels behind ``sample_exact`` of every distribution in :mod:`accounting.noise`. Each works on
numpy ``int64`` arrays whenever every intermediate value provably fits, and otherwise on arrays of
Python integers (``dtype=object``), which are exact at any size but much slower; the choice is made
per call from bounds on the values, never by catching an overflow after the fact.

Randomness is only ever used as *uniform integers* (:func:`uniform_below`) and raw 64-bit words
(:func:`random_words`), from a :class:`numpy.random.Generator` or from the operating system's
CSPRNG (:class:`SystemRandomness`). A Bernoulli(``p``) for rational ``p = a/b`` is ``U < a`` with
``U`` uniform on ``{0, …, b-1}``, so every probability used is exact.

Algorithms (with their sources):

* ``Bernoulli(exp(-γ))`` for rational ``γ >= 0``: Canonne, Kamath & Steinke 2020 ("The Discrete
  Gaussian for Differential Privacy", CKS), Algorithm 1; ``Bernoulli(γ/k)`` is drawn as
  ``Bernoulli(γ)·Bernoulli(1/k)`` (independent), so no product ``b·k`` can overflow.
* discrete Laplace of rational scale ``t/s``: CKS Algorithm 2; discrete Gaussian of rational ``σ²``:
  CKS Algorithm 3.
* geometric and discrete Laplace of rational decay ``β``: Bernoulli(``β``) trials, vectorized in
  rounds (expected ``1/(1-β)`` draws per variate).
* Poisson of rational mean ``λ``: ``λ`` is split into ``m = ceil(2λ)`` parts ``μ = λ/m <= 1/2``; each
  ``Poisson(μ)`` by rejection from ``Geometric(μ)`` (``P(k) = (1-μ)μ^k``) with acceptance ``1/k!``
  drawn as ``Π_{j=2..k} Bernoulli(1/j)``; acceptance rate ``(1-μ)e^μ >= 0.82``. Cost ``O(λ)``.
* Pólya ``(a/b, β)``: ``b`` i.i.d. copies are one negative binomial ``NB(a, β)`` total split by the
  Ewens partition of parameter ``a`` (Feller coupling: independent ``Bernoulli(a/(a+i-1))``) with
  each part sent to a uniform one of the ``b`` copies. Exact because ``NB(a, β)`` is compound
  Poisson with logarithmic jumps: given the total, the multiset of jumps is Ewens(``a``)
  distributed, and splitting a Poisson process uniformly gives ``b`` independent compound Poisson
  processes, i.e. ``b`` i.i.d. ``Polya(a/b, β)``.
* centered binomial: the popcount of ``trials`` random bits; binomial of rational ``p``: fair random
  bits against the binary digits of ``p`` (:func:`binomial`).
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accounting.certified import exact_fraction
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError

__all__ = [
    "Randomness",
    "SystemRandomness",
    "bernoulli_exp",
    "binomial",
    "centered_binomial",
    "check_work",
    "discrete_gaussian",
    "discrete_laplace",
    "fair_counts",
    "geometric",
    "poisson",
    "polya",
    "random_words",
    "rational",
    "uniform_below",
]

#: Integers below this bound are handled in int64 with room for one addition.
_SAFE = 2**62

#: An integer array: int64, or object (Python integers) when values may not fit.
Ints = NDArray[Any]


class SystemRandomness:
    """Uniform integers from the operating system's CSPRNG (``os.urandom``).

    Pass it wherever ``sample_exact`` takes an ``rng``. It is not seedable (that is the point):
    use a :class:`numpy.random.Generator` for reproducible runs.
    """

    def words(self, count: int) -> NDArray[np.uint64]:
        """``count`` uniform 64-bit words."""
        return np.frombuffer(os.urandom(8 * count), dtype=np.uint64).copy()

    def __repr__(self) -> str:
        return "SystemRandomness()"


Randomness = np.random.Generator | SystemRandomness


def check_randomness(rng: object, name: str = "rng") -> Randomness:
    """Validate a source of randomness for exact sampling (``name`` is the parameter's name)."""
    if not isinstance(rng, np.random.Generator | SystemRandomness):
        raise ParameterTypeError(name, rng, "a numpy.random.Generator or accounting.noise.SystemRandomness")
    return rng


def random_words(rng: Randomness, count: int) -> NDArray[np.uint64]:
    """``count`` uniform 64-bit words."""
    if isinstance(rng, SystemRandomness):
        return rng.words(count)
    return rng.integers(0, 2**64 - 1, size=count, dtype=np.uint64, endpoint=True)


def _big_uniform(rng: Randomness, bound: int) -> int:
    """One uniform integer in ``[0, bound)`` for a Python integer ``bound >= 1`` (rejection)."""
    bits = (bound - 1).bit_length()
    nwords = max(1, (bits + 63) // 64)
    while True:
        value = 0
        for w in random_words(rng, nwords):
            value = (value << 64) | int(w)
        value >>= 64 * nwords - bits
        if value < bound:
            return value


def _big_uniform_array(rng: Randomness, bound: int, size: int) -> Ints:
    """``size`` uniform Python integers in ``[0, bound)``: words concatenated, then rejection."""
    bits = (bound - 1).bit_length()
    nwords = -(-bits // 64)
    out = np.empty(size, dtype=object)
    todo = np.arange(size)
    while todo.size:
        value = np.zeros(todo.size, dtype=object)
        for _ in range(nwords):
            value = (value << 64) | random_words(rng, todo.size).astype(object)
        value = value >> (64 * nwords - bits)
        ok = np.asarray(value < bound, dtype=bool)
        out[todo[ok]] = value[ok]
        todo = todo[~ok]
    return out


def uniform_below(rng: Randomness, high: Ints | int, size: int | None = None) -> Ints:
    """Uniform integers ``U`` with ``0 <= U < high`` (elementwise; ``high >= 1``).

    ``high`` is an int64 array, an object array of Python integers, or an int with ``size``.
    """
    if isinstance(high, int):
        assert size is not None
        if high <= _SAFE:
            if isinstance(rng, np.random.Generator):
                return rng.integers(0, high, size=size, dtype=np.int64)
            return _uniform_int64(rng, np.full(size, high, dtype=np.int64))
        return _big_uniform_array(rng, high, size)
    if high.dtype == object:
        return np.array([_big_uniform(rng, int(h)) for h in high], dtype=object)
    return _uniform_int64(rng, high)


def _uniform_int64(rng: Randomness, high: NDArray[np.int64]) -> NDArray[np.int64]:
    if isinstance(rng, np.random.Generator):
        return rng.integers(0, high, dtype=np.int64)
    # Rejection on 64-bit words: accept w < 2^64 - (2^64 mod h), then w mod h is uniform.
    h = high.astype(np.uint64)
    limit = np.uint64(0) - (np.uint64(0) - h) % h  # 2^64 - (2^64 mod h), as uint64 (0 means 2^64)
    out = np.empty(h.shape, dtype=np.uint64)
    todo = np.arange(h.size)
    while todo.size:
        w = random_words(rng, todo.size)
        lim = limit[todo]
        ok = (lim == 0) | (w < lim)
        out[todo[ok]] = w[ok] % h[todo[ok]]
        todo = todo[~ok]
    return out.astype(np.int64)


def _bernoulli(rng: Randomness, num: Ints, den: Ints | int) -> NDArray[np.bool_]:
    """``Bernoulli(num/den)`` elementwise (``0 <= num <= den``, ``den >= 1``)."""
    return np.asarray(uniform_below(rng, den, num.shape[0]) < num, dtype=bool)


def _as_ints(values: Ints, big: bool) -> Ints:
    return values.astype(object) if big else values.astype(np.int64)


def _max_int(values: Ints | int) -> int:
    if isinstance(values, int):
        return values
    return int(values.max()) if values.size else 0


# ---------------------------------------------------------------------------------------
# Bernoulli(exp(-γ)), CKS Algorithm 1
# ---------------------------------------------------------------------------------------


def _bernoulli_exp_unit(rng: Randomness, num: Ints, den: Ints | int) -> NDArray[np.bool_]:
    """``Bernoulli(exp(-num/den))`` for ``0 <= num/den <= 1``: CKS Algorithm 1, first case.

    Draw ``A_k ~ Bernoulli(γ/k)`` for ``k = 1, 2, …`` until the first ``A_k = 0``; return 1 iff
    that ``k`` is odd. ``Bernoulli(γ/k)`` is one draw below ``den·k`` while that fits in int64, and
    ``Bernoulli(γ)·Bernoulli(1/k)`` (two independent draws) beyond.
    """
    size = num.shape[0]
    result = np.empty(size, dtype=bool)
    active = np.arange(size)
    dmax = _max_int(den)
    k = 1
    while active.size:
        n_act = num[active]
        d_act = den if isinstance(den, int) else den[active]
        if dmax * k < _SAFE:
            a = uniform_below(rng, d_act * k, active.size) < n_act
        else:
            a = _bernoulli(rng, n_act, d_act)
            if k > 1:
                a &= uniform_below(rng, k, active.size) == 0
        a = np.asarray(a, dtype=bool)
        result[active[~a]] = k % 2 == 1
        active = active[a]
        k += 1
    return result


def _bernoulli_exp_one(rng: Randomness, size: int) -> NDArray[np.bool_]:
    """``Bernoulli(exp(-1))``: CKS Algorithm 1 with ``γ = 1`` (``A_1 = 1``; ``A_k ~ Bernoulli(1/k)``)."""
    result = np.empty(size, dtype=bool)
    active = np.arange(size)
    k = 2
    while active.size:
        a = uniform_below(rng, k, active.size) == 0
        result[active[~a]] = k % 2 == 1
        active = active[a]
        k += 1
    return result


def bernoulli_exp(rng: Randomness, num: Ints, den: Ints | int) -> NDArray[np.bool_]:
    """``Bernoulli(exp(-γ))`` for rational ``γ = num/den >= 0`` elementwise (CKS Algorithm 1).

    For ``γ > 1``: ``floor(γ)`` draws of ``Bernoulli(exp(-1))`` (stop at the first 0), then
    ``Bernoulli(exp(-(γ - floor γ)))``.
    """
    size = num.shape[0]
    whole = num // den
    frac = num - whole * den
    result = np.ones(size, dtype=bool)
    # Rounds of Bernoulli(exp(-1)); an element leaves at its first failure or when its count is done.
    left = whole.copy()
    active = np.flatnonzero(left > 0)
    while active.size:
        ok = _bernoulli_exp_one(rng, active.size)
        result[active[~ok]] = False
        left[active] -= 1
        active = active[ok & (left[active] > 0)]
    todo = np.flatnonzero(result)
    if todo.size:
        result[todo] = _bernoulli_exp_unit(rng, frac[todo], den if isinstance(den, int) else den[todo])
    return result


def _geometric_exp1(rng: Randomness, size: int) -> NDArray[np.int64]:
    """``Geometric(e^{-1})`` on ``{0, 1, …}``: count of ``Bernoulli(exp(-1))`` successes before a failure."""
    out = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        ok = _bernoulli_exp_one(rng, active.size)
        out[active[ok]] += 1
        active = active[ok]
    return out


# ---------------------------------------------------------------------------------------
# Discrete Laplace and discrete Gaussian, CKS Algorithms 2 and 3
# ---------------------------------------------------------------------------------------


def _laplace_candidates(rng: Randomness, t: int, s: int, size: int) -> Ints:
    """One round of CKS Algorithm 2 on ``size`` candidates: the accepted values."""
    big = t >= _SAFE or s >= _SAFE
    u = uniform_below(rng, t, size)
    if big:
        u = u.astype(object)
    keep = _bernoulli_exp_unit(rng, u, t)  # step 1: D ~ Bernoulli(exp(-U/t)), U/t < 1
    u = u[keep]
    v = _geometric_exp1(rng, u.size)  # step 2
    # Step 3: Y = floor((U + tV)/s) = qV + floor((U + rV)/s) with t = qs + r, so nothing overflows
    # unless r·V or q·V does (V is Geometric(e^-1): below 64 with probability 1 - 1e-28).
    q, r = divmod(t, s)
    if big or max(q, r) >= _SAFE // 64 or (v.size and int(v.max()) >= 64):
        y = np.array([(int(a) + t * int(b)) // s for a, b in zip(u, v, strict=True)], dtype=object)
    else:
        y = q * v + (u + r * v) // s
    negative = uniform_below(rng, 2, y.size) == 1  # step 4: B ~ Bernoulli(1/2)
    accepted = ~(negative & (y == 0))
    values: Ints = np.where(negative, -y, y)[accepted]
    return values


def discrete_laplace(rng: Randomness, scale: Fraction, size: int) -> Ints:
    """``Lap_Z(t/s)`` draws (``P(x) ∝ exp(-|x| s/t)``) for a rational ``scale = t/s``: CKS Algorithm 2."""
    t, s = scale.numerator, scale.denominator
    return _fill(size, lambda need: _laplace_candidates(rng, t, s, need), rate=0.45)


def _fill(size: int, draw: Any, rate: float) -> Ints:
    """Concatenate accepted candidates from ``draw(count)`` until ``size`` are collected."""
    parts: list[Ints] = []
    have = 0
    while have < size:
        need = size - have
        got = draw(int(need / rate) + 16)
        parts.append(got[:need])
        have += min(got.size, need)
    if not parts:
        return np.zeros(0, dtype=np.int64)
    out = np.concatenate(parts)
    return out.astype(np.int64) if out.dtype == object and _fits(out) else out


def _fits(values: Ints) -> bool:
    return bool(values.size == 0 or (max(abs(int(values.max())), abs(int(values.min()))) < _SAFE))


def discrete_gaussian(rng: Randomness, sigma2: Fraction, size: int) -> Ints:
    """``size`` draws of ``N_Z(0, σ²)`` for rational ``σ² = p/q > 0``: CKS Algorithm 3.

    ``t = floor(σ) + 1``; ``Y ~ Lap_Z(t)``, accepted with probability
    ``exp(-(|Y| - σ²/t)²/(2σ²)) = exp(-a²/E)`` with ``a = |Y| t q - p`` and ``E = 2 p q t²`` (integers).
    """
    p, q = sigma2.numerator, sigma2.denominator
    t = math.isqrt(p // q) + 1  # floor(sqrt(p/q)) = isqrt(floor(p/q))
    e = 2 * p * q * t * t

    def draw(count: int) -> Ints:
        y = discrete_laplace(rng, Fraction(t), count)
        ymax = int(np.max(np.abs(y))) if y.size else 0
        amax = ymax * t * q + p
        big = amax * amax >= _SAFE or e >= _SAFE
        ay = np.abs(_as_ints(y, big))
        a = ay * (t * q) - p
        keep = bernoulli_exp(rng, a * a, e)
        return np.asarray(y[keep])

    # ``rate`` only sizes each round of candidates; _fill draws rounds until ``size`` are accepted.
    return _fill(size, draw, rate=0.5)


# ---------------------------------------------------------------------------------------
# Geometric, Poisson, Pólya, binomial
# ---------------------------------------------------------------------------------------


def rational(name: str, value: object) -> Fraction:
    """The exact rational value of a parameter (a float is the dyadic rational it stores).

    Not the shortest decimal (as ``accounting.bounds`` reads typed inputs): the accounting of a
    float parameter uses the stored value, so the sampler must too.
    """
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int | float | np.integer | np.floating):
        return exact_fraction(value, name)
    raise ParameterError(name, value, "a finite rational (int, float or fractions.Fraction)")


#: The most elementary draws an exact sampler call may take (about 10^7 a second here: 10^8 is
#: some seconds); beyond, it is refused up front instead of running for hours.
MAX_EXACT_WORK = 10**8


def check_work(name: str, value: Fraction, work: Fraction | int, cost: str) -> None:
    """Refuse, naming ``name`` and its ``value``, a draw that takes more than :data:`MAX_EXACT_WORK`
    elementary draws (``work``; ``cost`` says how it grows)."""
    if not work <= MAX_EXACT_WORK:
        raise ParameterError(
            name,
            float(value),
            f"a value whose exact draws take at most {MAX_EXACT_WORK:.0e} elementary draws ({cost}; "
            f"this request needs about {float(work):.2g}): use the floating-point sample()",
        )


def geometric(rng: Randomness, beta: Fraction, size: int) -> NDArray[np.int64]:
    """``size`` draws of ``Geometric(β)`` on ``{0, 1, …}`` (``P(k) = β^k (1-β)``) for rational ``β``.

    Counts ``Bernoulli(β)`` successes before the first failure; the draws run in rounds over the
    still-active variates (about ``1/(1-β)`` draws per variate).
    """
    a, b = beta.numerator, beta.denominator
    check_work("beta", beta, Fraction(size * b, max(b - a, 1)), "about 1/(1-β) Bernoulli draws per variate")
    big = b > _SAFE
    out = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        if big:
            hit = np.array([_big_uniform(rng, b) < a for _ in range(active.size)], dtype=bool)
        else:
            hit = uniform_below(rng, b, active.size) < a
        out[active[hit]] += 1
        active = active[hit]
    return out


def _poisson_small(rng: Randomness, a: int, b: int, size: int) -> NDArray[np.int64]:
    """``size`` draws of ``Poisson(a/b)`` with ``a/b <= 1/2``: rejection from ``Geometric(a/b)``."""

    def draw(count: int) -> Ints:
        k = geometric(rng, Fraction(a, b), count)
        keep = np.ones(count, dtype=bool)
        # Accept with probability 1/k! = Π_{j=2..k} Bernoulli(1/j).
        j = 2
        alive = np.flatnonzero(k >= j)
        while alive.size:
            ok = uniform_below(rng, j, alive.size) == 0
            keep[alive[~ok]] = False
            alive = alive[ok]
            j += 1
            alive = alive[k[alive] >= j]
        return k[keep]

    return np.asarray(_fill(size, draw, rate=0.8), dtype=np.int64)


def poisson(rng: Randomness, mean: Fraction, size: int) -> NDArray[np.int64]:
    """``Poisson(λ)`` draws for a rational ``λ >= 0``: sums of ``m = ceil(2λ)`` exact ``Poisson(λ/m)``."""
    if mean == 0:
        return np.zeros(size, dtype=np.int64)
    check_work("rate", mean, 2 * mean * size, "about 2λ geometric draws per variate")
    parts = max(1, math.ceil(2 * mean))
    mu = mean / parts
    out = np.zeros(size, dtype=np.int64)
    # Parts in blocks so memory stays about 2^22 variates.
    block = max(1, 2**22 // max(size, 1))
    done = 0
    while done < parts:
        k = min(block, parts - done)
        out += _poisson_small(rng, mu.numerator, mu.denominator, k * size).reshape(k, size).sum(axis=0)
        done += k
    return out


#: The largest numerator ``a`` of ``r = a/b`` for the exact Pólya sampler (its cost grows with ``a``).
POLYA_MAX_NUMERATOR = 2**16


def polya(rng: Randomness, r: Fraction, beta: Fraction, size: int) -> NDArray[np.int64]:
    """``size`` i.i.d. draws of ``Polya(r, β)`` for rational ``r = a/b`` and ``β``.

    Consecutive blocks of ``b`` draws share one ``NB(a, β)`` total (a sum of ``a`` geometrics),
    split by the Ewens(``a``) partition (Feller coupling) into parts, each sent to a uniform slot of
    the block; a last partial block keeps only its first slots (the others are simply not returned,
    which leaves the kept ones i.i.d.). Work ``O(⌈size/b⌉ · a/(1-β) + size)``.
    """
    a, b = r.numerator, r.denominator
    if a > POLYA_MAX_NUMERATOR:
        raise UnsupportedError(
            f"the exact Pólya sampler needs r = a/b with a <= {POLYA_MAX_NUMERATOR}; got r = {r} "
            "(pass r as fractions.Fraction, e.g. Fraction(1, users))"
        )
    blocks = -(-size // b) if size else 0
    totals = geometric(rng, beta, blocks * a).reshape(blocks, a).sum(axis=1)
    if b == 1:
        return np.asarray(totals[:size], dtype=np.int64)
    out = np.zeros(size, dtype=np.int64)
    total = int(totals.sum())
    if total == 0:
        return out
    # Flat layout: block j occupies positions offsets[j] .. offsets[j] + totals[j] - 1 (local i = 1..T_j).
    offsets = np.concatenate(([0], np.cumsum(totals)[:-1]))
    block_of = np.repeat(np.arange(blocks), totals)
    local = np.arange(total) - offsets[block_of] + 1
    # Feller coupling: xi_i ~ Bernoulli(a/(a+i-1)); xi_1 = 1, so every nonempty block starts a part.
    starts = np.flatnonzero(uniform_below(rng, a + local - 1) < a)
    lengths = np.diff(np.append(starts, total))
    owner = block_of[starts]
    slot = uniform_below(rng, b, starts.size)
    index = owner * b + slot
    keep = index < size
    np.add.at(out, index[keep], lengths[keep])
    return out


def centered_binomial(rng: Randomness, trials: int, size: int) -> NDArray[np.int64]:
    """``size`` draws of ``Binomial(trials, 1/2) - floor(trials/2)``: popcounts of random bits."""
    nwords = -(-trials // 64)
    words = random_words(rng, size * nwords).reshape(size, nwords)
    spare = nwords * 64 - trials
    if spare:
        words[:, -1] >>= np.uint64(spare)
    counts = np.asarray(np.bitwise_count(words).sum(axis=1, dtype=np.int64), dtype=np.int64)
    return counts - trials // 2


#: Random words per block of an exact binomial draw (32 MB), so memory stays bounded.
_BLOCK_WORDS = 2**22


def fair_counts(rng: Randomness, trials: NDArray[np.int64]) -> NDArray[np.int64]:
    """``Binomial(trials[i], 1/2)`` for each ``i``: the popcount of ``trials[i]`` random bits.

    Row ``i`` takes ``ceil(max trials / 64)`` words and keeps its first ``trials[i]`` bits (of a
    partly used word, the high ones), drawn in blocks of rows; with equal ``trials`` this is
    the popcount of ``accounting._exact.centered_binomial``, word for word.
    """
    counts = np.zeros(trials.size, dtype=np.int64)
    if not trials.size:
        return counts
    nwords = max(1, -(-int(trials.max()) // 64))
    rows = max(1, _BLOCK_WORDS // nwords)
    column = np.arange(nwords)
    for start in range(0, trials.size, rows):
        ks = trials[start : start + rows]
        words = random_words(rng, ks.size * nwords).reshape(ks.size, nwords)
        full, rem = ks // 64, ks % 64
        words[column[None, :] >= (full + (rem > 0))[:, None]] = 0
        partial = np.flatnonzero(rem > 0)
        words[partial, full[partial]] >>= (64 - rem[partial]).astype(np.uint64)
        counts[start : start + ks.size] = np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    return counts


def binomial(rng: Randomness, trials: int, p: Fraction, size: int) -> NDArray[np.int64]:
    """``size`` draws of ``Binomial(trials, p)`` for a rational ``p``, from fair random bits only.

    A trial succeeds when a uniform ``U ∈ [0, 1)`` is below ``p``; ``U`` is revealed one binary
    digit at a time against the digits ``b_1 b_2 ...`` of ``p`` (exact long division). While a
    trial's digits equal ``p``'s it is undecided; at a digit where they differ it is decided: a
    success when ``b_j = 1`` (``U``'s digit is 0), a failure when ``b_j = 0``. Of the ``K``
    undecided trials of a draw, the number decided at a digit is ``Binomial(K, 1/2)`` — a popcount
    (:func:`fair_counts`) — so about ``2 trials`` random bits per draw in all. When ``p``'s
    expansion ends (a dyadic ``p``, every float), the still undecided trials have ``U >= p``:
    failures. At ``p = 1/2`` this is one popcount of ``trials`` bits.
    """
    a, d = p.numerator, p.denominator
    words = -(-trials // 64)
    check_work("trials", Fraction(trials), size * (2 * words + 1), "about 2 trials/64 random words per draw")
    out = np.zeros(size, dtype=np.int64)
    left = np.full(size, trials, dtype=np.int64)  # undecided trials of each draw
    active = np.arange(size)
    while active.size and a:
        a *= 2
        digit = a >= d
        if digit:
            a -= d
        decided = fair_counts(rng, left[active])
        if digit:
            out[active] += decided
        left[active] -= decided
        active = active[left[active] > 0]
    return out

"""G-optimal (Kiefer–Wolfowitz) experimental designs, and their rounding to pull counts.

Li, Zhou & Ji (2022), line 4 of Algorithm 1 (DP-DPE; DP-PE's Algorithm 3, App. C, is the same):
find a distribution ``π`` over the active actions ``D_l`` with

* ``g(π) = max_x ‖x‖²_{V(π)⁻¹} <= 2d``, ``V(π) = Σ_x π(x) x xᵀ``, and
* ``|supp π| <= S = 4 d ln ln d + 16`` (Lattimore, Szepesvári & Weisz 2020, Proposition 3.7; the
  paper's [LSW20]),

then (line 5) play each support point ``T_l(x) = ⌈h_l π(x)⌉`` times.

**The optimum** (Kiefer–Wolfowitz): the maximizer ``π*`` of ``log det V(π)`` minimizes ``g``, and
``g(π*) = d``. For *every* ``π`` with ``V(π)`` nonsingular, ``Σ_x π(x) g_x(π) = tr(V⁻¹V) = d``
(``g_x(π) = ‖x‖²_{V(π)⁻¹}``), so ``max_x g_x >= d`` always and ``g(π) <= (1 + c) d`` certifies
``log det V(π*) − log det V(π) <= c d`` (concavity: the gradient of ``log det`` is ``g_x``).

**Solver** (:func:`g_optimal_design`; the paper names none). Frank–Wolfe (Fedorov 1972, Wynn 1970)
ascent of ``log det V(π)``:

* *Initialization* (Kumar & Yildirim 2005): a random direction ``b``, add ``argmax_x ⟨b,
  x⟩`` and ``argmin_x ⟨b, x⟩``, draw the next ``b`` in the orthogonal complement of the chosen
  points, until they span ``span(D)``; uniform weight on them (at most ``2d`` points; for points in
  general position each direction adds 2 to the rank, so about ``d`` points).
* *Toward step*: ``j = argmax_x g_x``, ``π ← (1−γ)π + γ e_j`` with the exact line search of ``log
  det``, ``γ = (g_j/d − 1)/(g_j − 1)`` (Fedorov's step).
* *Away / drop step* (Wolfe's away step for this problem, Todd & Yildirim 2007, ``away_steps=True``):
  ``i = argmin_{x∈supp π} g_x``; if ``1 − g_i/d`` exceeds ``g_j/d − 1`` the step moves weight *off*
  ``i`` with the same line search, ``γ = (g_i − d)/(d (g_i − 1)) < 0``, clipped at
  ``−π(i)/(1 − π(i))``; a clipped step is a *drop step* and removes ``i`` from the support
  (``log det`` only decreases toward the other end when ``g_i <= 1``, so those are always dropped).
  At ``c >= 1`` (the paper's ``2d``) an unconverged design always has ``g_j/d − 1 > 1 >= 1 − g_i/d``,
  so away steps never happen there; they matter for tighter targets.
* *Stop* when ``g(π) <= (1 + c) d`` (``c = 1``: the paper's ``2d``). ``V(π)`` is recomputed from
  the weights and factorized (Cholesky) at every iteration, so the stopping test uses the design it
  reports, not a drifting Sherman–Morrison inverse; ``O(k d²)`` per iteration either way.

**Span** (Li, Zhou & Ji 2022, Remark 3.2). Actions need not span ``R^d``: the design works in the
coordinates of ``span(D)`` (eigenvectors of the Gram matrix; the rank rule is in ``_span``), its
target is ``(1 + c) d'`` with ``d' = rank`` (:attr:`Design.rank`), and ``d'`` replaces ``d`` in the
line search too (with ``d`` the step would not be the exact line search). ``g_x`` is then ``xᵀ
V(π)⁺ x``. Only an action set with no nonzero active action is refused
(:class:`~accounting.errors.ParameterError`).

**Support bound** (:func:`support_bound`; Algorithm 1 line 4): ``S(d) = ⌈4 d ln ln d + 16⌉``,
reading the paper's ``log`` as the natural log (104 at ``d = 20``), for the *ambient* ``d`` (the
constant that enters ``σ_n``). A design whose support exceeds it is kept and a
:class:`DesignWarning` says so (then the paper's ``T_l <= h_l + S`` no longer follows; use ``S_eff =
max(S, s_l)``). Where ``ln ln d`` fails: at ``d = 1``, where it is undefined, ``S = 2`` (the
initialization's two points), not 1, which would warn on every one-dimensional design; the cap
``d(d+1)/2`` (Carathéodory's bound on the *exact* optimum's support, Kiefer & Wolfowitz 1960) is
not applied, since Frank–Wolfe's near-optimal designs need not meet it.

**Rounding** (:func:`pull_counts`, Algorithm 1 line 5): ``T(x) = ⌈h π(x)⌉`` on the support, exactly
as the paper; then ``h π(x) <= T(x) < h π(x) + 1``, so ``V_l = Σ T(x) x xᵀ ⪰ h V(π)`` and the total
satisfies ``h <= T_l <= h + s`` (``s = |supp π|``). The bound ``h <= · <= h + s`` is on the total
``T_l = Σ_x T(x)``, not on each ``T(x)``. Weight below ``10⁻¹²`` is removed by the design before it
is returned (:data:`DUST`), so dust does not become extra pulls.

**Batches.** Every function takes one action set ``(k, d)`` or a batch ``(R, k, d)`` (with an
optional ``(R, k)`` mask of active actions, as after elimination), and every result has a leading
repetition axis ``R`` (``R = 1`` for one action set). Frank–Wolfe iterations are a Python loop;
repetitions and actions are array axes. A repetition stops moving once it has converged.

**Measured** (``tests/benchmarks/test_design_bench.py``, 2-core reference machine shared with other
jobs, load 2.2; actions uniform on the unit sphere of ``R^20``, as the DP-DPE configs draw the arms
of Li, Zhou & Ji 2022, §7). One design at ``k = 1000, d = 20`` (one instance), and 20 instances as
one batch (median [range] of iterations and supports), against an independent run of plain
Frank–Wolfe with Kumar–Yildirim initialization (the last column, "reference"):

==========================  ============  ==========  =======  ===================  ==================
target                      one design    iterations  support  20 instances: its /  reference
                            (median)                           support, batch time
==========================  ============  ==========  =======  ===================  ==================
``g <= 2d`` (``c = 1``)     2.7 ms        12          32       13 [10, 14] /        ~12 / 32-33
                                                               33 [30, 34], 63 ms
``g <= 1.1d``, away steps   14 ms         73          91       73 [68, 82] /        ~75 / 91-95
                                                               92 [86, 100], 240 ms
``g <= 1.1d``, plain FW     13 ms         79          98       73 [66, 80] /        ~75 / 91-95
                                                               93 [86, 100], 200 ms
``g <= 1.01d``, away steps  32 ms         259         220      (support > S = 104:
                                                               a DesignWarning)
==========================  ============  ==========  =======  ===================  ==================

The target of ``k = 1000, d = 20`` in <= 0.2 s is met about 75 times over at ``2d`` and 15 times
over at ``1.1d``; the iteration counts and supports agree with the reference. Away steps change
nothing at ``2d`` (see above), little at ``1.1d``, and at tighter targets save about 5-10 % of the
iterations and of the support (10 instances: at ``1.01d`` median 255 vs 266 iterations, 227 vs 239
support points; at ``1.001d`` 643 vs 730 and 349 vs 371); they are on by default. Per iteration
the cost is two ``O(k d²)`` products (``V(π)`` and the gains) and a ``d × d`` Cholesky
factorization, about 0.1-0.2 ms here.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from accounting.errors import ParameterError, ParameterTypeError

__all__ = [
    "DUST",
    "MAX_H",
    "MAX_ITERATIONS",
    "Design",
    "DesignWarning",
    "design_shapes",
    "g_optimal_design",
    "gains",
    "pull_counts",
    "support_bound",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

#: Weights below this are set to 0 before a design is returned: Frank–Wolfe leaves
#: no exact zeros, and ``⌈h π(x)⌉ >= 1`` would turn every speck into a pulled support point.
DUST = 1e-12

#: The largest ``h`` :func:`pull_counts` accepts: ``⌈h π(x)⌉`` must be exact to well under one pull
#: in double precision (its rounding error is about ``k h 2⁻⁵³``).
MAX_H = 2.0**40


class DesignWarning(UserWarning):
    """A design is returned, but misses a promise of Algorithm 1 line 4 of Li, Zhou & Ji (2022)
    (support above ``S``, or ``g`` above its target after ``max_iterations``)."""


@dataclass(frozen=True, eq=False)
class Design:
    """A near-G-optimal design for each of ``R`` action sets (arrays read-only).

    Attributes
    ----------
    weights : numpy.ndarray of float64, shape (R, k)
        ``π``: non-negative, each row sums to 1, zero off the support and on inactive actions.
    support : numpy.ndarray of bool, shape (R, k)
        ``π(x) > 0``.
    g : numpy.ndarray of float64, shape (R,)
        ``g(π) = max_x xᵀ V(π)⁺ x`` over the active actions, recomputed from :attr:`weights`.
    rank : numpy.ndarray of int64, shape (R,)
        ``d'``: the dimension of the span of the active actions (``d`` when they span ``R^d``).
    iterations : numpy.ndarray of int64, shape (R,)
        Frank–Wolfe steps taken after the initialization (toward, away and drop steps).
    converged : numpy.ndarray of bool, shape (R,)
        ``g <= (1 + c) · rank``.
    c : float
        The target's slack: the stop rule is ``g(π) <= (1 + c) d'``.
    """

    weights: FloatArray
    support: BoolArray
    g: FloatArray
    rank: IntArray
    iterations: IntArray
    converged: BoolArray
    c: float

    @property
    def target(self) -> FloatArray:
        """``(1 + c) · rank``, shape ``(R,)``."""
        return np.asarray((1.0 + self.c) * self.rank, dtype=np.float64)

    @property
    def support_size(self) -> IntArray:
        """``s = |supp π|``, shape ``(R,)``."""
        return np.asarray(self.support.sum(axis=1), dtype=np.int64)


def support_bound(d: int) -> int:
    """``S = ⌈4 d ln ln d + 16⌉``, the support bound of Li, Zhou & Ji (2022), Algorithm 1 line 4
    (Lattimore, Szepesvári & Weisz 2020, Proposition 3.7), natural log.

    ``S(20) = 104``. At ``d = 1``, where ``ln ln 1`` is undefined, ``S = 2`` (see the module
    docstring for this choice).
    """
    d = v.integer("d", d, minimum=1)
    if d == 1:
        return 2
    return math.ceil(4 * d * math.log(math.log(d)) + 16)


# ---------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------


def _actions(actions: object) -> FloatArray:
    """``actions`` as a finite float64 array of shape ``(R, k, d)``."""
    try:
        a = np.asarray(actions)
    except (ValueError, TypeError):
        raise ParameterTypeError("actions", actions, "an array of shape (k, d) or (R, k, d)") from None
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise ParameterTypeError("actions", actions, "a real array of shape (k, d) or (R, k, d)")
    if a.ndim not in (2, 3):
        raise ParameterError(
            "actions", f"an array of shape {a.shape}", "an array of shape (k, d) or (R, k, d)"
        )
    if a.ndim == 2:
        a = a[None]
    if 0 in a.shape:
        raise ParameterError(
            "actions", f"an array of shape {a.shape}", "at least one repetition, action and dimension"
        )
    a = a.astype(np.float64)
    if not np.isfinite(a).all():
        raise ParameterError("actions", "an array with non-finite entries", "finite actions")
    return a


def _mask(mask: object, shape: tuple[int, int]) -> BoolArray:
    """``mask`` (``None``, ``(k,)`` or ``(R, k)`` booleans) as an ``(R, k)`` array."""
    R, k = shape
    if mask is None:
        return np.ones((R, k), dtype=np.bool_)
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise ParameterTypeError("mask", mask, f"a boolean array of shape ({k},) or ({R}, {k})")
    if m.shape == (k,):
        m = np.broadcast_to(m, (R, k))
    if m.shape != (R, k):
        raise ParameterError(
            "mask", f"an array of shape {m.shape}", f"a boolean array of shape ({k},) or ({R}, {k})"
        )
    empty = np.flatnonzero(~m.any(axis=1))
    if empty.size:
        raise ParameterError(
            "mask", f"no active action in repetition {int(empty[0])}", "at least one per repetition"
        )
    return np.array(m, dtype=np.bool_)


def _generators(rng: object, R: int) -> list[np.random.Generator] | np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, Sequence) and all(isinstance(g, np.random.Generator) for g in rng):
        if len(rng) != R:
            raise ParameterError("rng", f"{len(rng)} generators", f"one numpy Generator per repetition ({R})")
        return list(rng)
    raise ParameterTypeError("rng", rng, "a numpy.random.Generator, or a sequence of one per repetition")


# ---------------------------------------------------------------------------------------
# The solver
# ---------------------------------------------------------------------------------------


def _span(X: FloatArray, active: BoolArray) -> tuple[FloatArray, IntArray]:
    """Coordinates of the active actions in an orthonormal basis of their span, and its dimension.

    ``Y`` (shape ``(R, k, d)``) has zeros in the coordinates ``>= rank`` and on inactive actions;
    ``⟨y_i, y_j⟩ = ⟨x_i, x_j⟩`` for active ``i, j`` in the span, so every ``g_x`` and ``log det``
    ratio is unchanged (they are invariant under the rotation). The basis is the eigenvectors of
    the Gram matrix ``Σ x xᵀ`` (``d × d``: 50-100 times faster than an SVD of the ``k × d``
    actions at ``k = 1000``); a direction counts when its eigenvalue exceeds ``λ_max · max(k, d) ·
    eps``, i.e. singular values down to about ``√(max(k, d) eps) ≈ 5e-7`` of the largest (at
    ``k = 1000``) span a dimension, and thinner ones are treated as rounding (working in the span:
    Li, Zhou & Ji 2022, Remark 3.2).
    """
    Xa = np.where(active[..., None], X, 0.0)
    # g and the designs are invariant under scaling all actions by one constant; scaling the
    # largest to norm 1 keeps the Gram matrix of 1e-200-sized or 1e200-sized actions in range.
    largest = np.linalg.norm(Xa, axis=2).max(axis=1)
    Xa = Xa / np.where(largest > 0, largest, 1.0)[:, None, None]
    lam, E = np.linalg.eigh(np.swapaxes(Xa, 1, 2) @ Xa)
    lam, E = lam[:, ::-1], E[:, :, ::-1]  # descending
    k, d = X.shape[1:]
    rank = (lam > lam[:, :1] * max(k, d) * np.finfo(np.float64).eps).sum(axis=1).astype(np.int64)
    if (lam[:, 0] <= 0).any() or (rank == 0).any():
        r = int(np.flatnonzero((lam[:, 0] <= 0) | (rank == 0))[0])
        raise ParameterError(
            "actions", f"only zero vectors active in repetition {r}", "at least one nonzero active action"
        )
    in_span = np.arange(d)[None, :] < rank[:, None]
    Y = Xa @ np.where(in_span[:, None, :], E, 0.0)
    return Y, rank


def _null(rank: IntArray, m: int) -> FloatArray:
    """The identity on the coordinates ``>= rank`` (``(R, m, m)``): added to ``V(π)``, it makes the
    matrix invertible without touching the span, and ``yᵀ (V + P)⁻¹ y = yᵀ V⁺ y`` for ``y`` in it."""
    out = np.zeros((rank.size, m, m))
    idx = np.arange(m)
    out[:, idx, idx] = (idx[None, :] >= rank[:, None]).astype(np.float64)
    return out


def _gains(Y: FloatArray, weights: FloatArray, null: FloatArray) -> FloatArray:
    """``g_x = yᵀ V(π)⁺ y`` for every action, from a Cholesky factor of ``V(π)`` (plus ``null``)."""
    V = np.swapaxes(Y * weights[..., None], 1, 2) @ Y + null
    try:
        L = np.linalg.cholesky(V)
    except np.linalg.LinAlgError:
        raise ParameterError(
            "actions",
            "an action set whose span the design cannot cover",
            "actions whose Gram matrix is numerically positive definite on their span",
        ) from None
    Z = Y @ np.swapaxes(np.linalg.inv(L), 1, 2)  # rows (L⁻¹ y)ᵀ, shape (R, k, m)
    return np.asarray(np.einsum("rkm,rkm->rk", Z, Z), dtype=np.float64)


def _kumar_yildirim(Y: FloatArray, active: BoolArray, rank: IntArray, directions: FloatArray) -> FloatArray:
    """Kumar & Yildirim's (2005) initialization: uniform weights on ``argmax/argmin ⟨b_i, x⟩`` pairs, ``b_i``
    random in the orthogonal complement of the points chosen so far, until they span the actions."""
    R, k, m = Y.shape
    rows = np.arange(R)
    in_span = np.arange(m)[None, :] < rank[:, None]
    chosen = np.zeros((R, k), dtype=np.bool_)
    Q = np.zeros((R, m, m))  # orthonormal basis of the chosen points, columns 0..count-1
    count = np.zeros(R, dtype=np.int64)
    # A residual smaller than this is rounding, not a new direction. It is far below what a new
    # direction gives: for a unit b in the span, max_x |⟨b, x⟩| >= σ_min / √k, and _span's rank
    # tolerance keeps σ_min above √(max(k, d) eps) σ_max.
    scale = np.linalg.norm(Y, axis=2).max(axis=1)
    tol = scale * max(k, m) * np.finfo(np.float64).eps / math.sqrt(k)

    def residual(u: FloatArray) -> FloatArray:
        for _ in range(2):  # Gram–Schmidt twice: one pass loses orthogonality
            u = u - np.einsum("rij,rj->ri", Q, np.einsum("rji,rj->ri", Q, u))
        return u

    for i in range(m):
        need = count < rank
        if not need.any():
            break
        b = residual(np.where(in_span, directions[:, i, :m], 0.0))
        scores = np.einsum("rkm,rm->rk", Y, b)
        picks = (
            np.where(active, scores, -np.inf).argmax(axis=1),
            np.where(active, scores, np.inf).argmin(axis=1),
        )
        for j in picks:
            chosen[rows[need], j[need]] = True
            p = residual(Y[rows, j])
            norm = np.linalg.norm(p, axis=1)
            new = need & (count < rank) & (norm > tol)
            Q[rows[new], :, count[new]] = p[new] / norm[new, None]
            count[new] += 1
    return np.asarray(chosen / chosen.sum(axis=1, keepdims=True), dtype=np.float64)


def _step(g: FloatArray, r: FloatArray) -> FloatArray:
    """The exact line search of ``log det`` along ``π ← (1−γ)π + γ e_x`` (Fedorov 1972).

    With ``g = g_x(π)`` and ``d' = r``, ``log det V`` changes by ``φ(γ) = (r − 1) log(1 − γ) +
    log(1 + γ (g − 1))``, concave, stationary at ``γ = (g/r − 1)/(g − 1)`` (``> 0`` toward a point
    with ``g > r``, ``< 0`` away from one with ``1 < g < r``). For ``g <= 1`` there is no stationary
    point on the away side: ``φ`` keeps rising as ``γ`` decreases, so ``−inf`` is returned and the
    caller's clip at ``−π(x)/(1 − π(x))`` makes it a drop step.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(g > 1.0, (g / r - 1.0) / (g - 1.0), -np.inf)


#: The Frank–Wolfe steps of :func:`g_optimal_design` at most (its default ``max_iterations``).
MAX_ITERATIONS = 10_000


def design_shapes(R: int, k: int, d: int) -> dict[str, tuple[int, ...]]:
    """The float64 arrays :func:`g_optimal_design` of ``R`` action sets of ``k`` actions in ``R^d``
    holds at once: the masked and the scaled actions and their coordinates ``Y`` (:func:`_span`),
    and per step the weighted ``Y`` and ``Z`` (:func:`_gains`), each ``(R, k, d)``; the weights
    and gains ``(R, k)``. Each step costs ``2 R k d²`` multiply-adds (``V(π)`` and ``Z``)."""
    return {"actions": (3, R, k, d), "gains": (2, R, k, d), "weights": (3, R, k)}


def g_optimal_design(
    actions: ArrayLike,
    *,
    rng: np.random.Generator | Sequence[np.random.Generator],
    c: float = 1.0,
    mask: ArrayLike | None = None,
    away_steps: bool = True,
    max_iterations: int = MAX_ITERATIONS,
) -> Design:
    """A design ``π`` with ``g(π) <= (1 + c) d'`` for each action set, by Frank–Wolfe on ``log det``.

    Li, Zhou & Ji (2022), Algorithm 1 line 4, by Frank–Wolfe with Kumar & Yildirim's (2005)
    initialization, the Fedorov–Wynn exact line search, and Wolfe away and drop steps (Todd &
    Yildirim 2007) when ``away_steps``; see the module docstring.

    Parameters
    ----------
    actions : array_like, shape (k, d) or (R, k, d)
        The action set(s) ``D_l``. Need not span ``R^d``: the design works in their span
        (``d' =`` :attr:`Design.rank`).
    rng : numpy.random.Generator or sequence of them
        The random directions of the initialization. One generator per repetition makes the batch
        equal (up to rounding) to separate runs with those generators; one generator for a batch
        draws every repetition's directions from it.
    c : float
        Stop once ``g(π) <= (1 + c) d'``; ``c = 1`` is the paper's ``2d`` (default). ``c > 0``:
        the exact optimum (``c = 0``) is only reached in the limit.
    mask : array_like of bool, shape (k,) or (R, k), optional
        Active actions (``True``); inactive ones get no weight and are not in ``g``.
    away_steps : bool
        Also take away and drop steps (smaller supports at tight ``c``; no effect at ``c >= 1``).
    max_iterations : int
        Frank–Wolfe steps at most; a repetition still above its target then is returned with
        ``converged = False`` and a :class:`DesignWarning`.

    Returns
    -------
    Design
        With a leading repetition axis (``R = 1`` for one ``(k, d)`` action set). A support above
        :func:`support_bound` ``(d)`` is kept, with a :class:`DesignWarning`.
    """
    X = _actions(actions)
    R, k, d = X.shape
    active = _mask(mask, (R, k))
    c = v.positive("c", c)
    max_iterations = v.count("max_iterations", max_iterations, minimum=0)
    if not isinstance(away_steps, bool):
        raise ParameterTypeError("away_steps", away_steps, "True or False")
    gens = _generators(rng, R)
    if isinstance(gens, list):
        directions = np.stack([g.standard_normal((d, d)) for g in gens])
    else:
        directions = gens.standard_normal((R, d, d))

    Y, rank = _span(X, active)
    m = Y.shape[2]
    null = _null(rank, m)
    r = rank.astype(np.float64)
    target = (1.0 + c) * r

    w = _kumar_yildirim(Y, active, rank, directions)
    w, iterations = _frank_wolfe(Y, w, null, active, r, target, away_steps, max_iterations)
    w = np.where(w < DUST, 0.0, w)
    w /= w.sum(axis=1, keepdims=True)
    g_max = np.where(active, _gains(Y, w, null), -np.inf).max(axis=1)
    design = Design(
        weights=w,
        support=w > 0,
        g=g_max,
        rank=rank,
        iterations=iterations,
        converged=g_max <= target,
        c=c,
    )
    for a in (design.weights, design.support, design.g, design.rank, design.iterations, design.converged):
        a.setflags(write=False)
    _warn(design, d, max_iterations)
    return design


def _frank_wolfe(
    Y: FloatArray,
    w: FloatArray,
    null: FloatArray,
    active: BoolArray,
    r: FloatArray,
    target: FloatArray,
    away_steps: bool,
    max_iterations: int,
) -> tuple[FloatArray, IntArray]:
    """Frank–Wolfe from the weights ``w`` until ``g(π) <= target`` or ``max_iterations`` steps: the
    toward steps, and with ``away_steps`` the away and drop steps of the module docstring. Returns
    the weights and each repetition's number of steps (a repetition stops once it has converged)."""
    R = Y.shape[0]
    rows = np.arange(R)
    iterations = np.zeros(R, dtype=np.int64)
    for _ in range(max_iterations + 1):
        g = _gains(Y, w, null)
        g_plus = np.where(active, g, -np.inf)
        j = g_plus.argmax(axis=1)
        g_top = g_plus[rows, j]
        moving = g_top > target
        if not moving.any() or iterations.max() >= max_iterations:
            break
        gamma = _step(g_top, r)  # toward j
        drop = np.zeros(R, dtype=np.bool_)
        if away_steps:
            g_minus = np.where(w > 0, g, np.inf)
            i = g_minus.argmin(axis=1)
            g_low = g_minus[rows, i]
            w_i = w[rows, i]
            away = moving & (1.0 - g_low / r > g_top / r - 1.0) & (w_i < 1.0)
            with np.errstate(divide="ignore"):
                limit = -w_i / (1.0 - w_i)
            best = _step(g_low, r)
            drop = away & (best <= limit)
            gamma = np.where(away, np.maximum(best, limit), gamma)
            j = np.where(away, i, j)
        gamma = np.where(moving, gamma, 0.0)
        w = w * (1.0 - gamma)[:, None]
        w[rows, j] += gamma
        w[rows[drop], j[drop]] = 0.0
        w = np.maximum(w, 0.0)
        w /= w.sum(axis=1, keepdims=True)
        iterations += moving
    return w, iterations


def _warn(design: Design, d: int, max_iterations: int) -> None:
    bound = support_bound(d)
    over = np.flatnonzero(design.support_size > bound)
    if over.size:
        r = int(over[0])
        warnings.warn(
            f"G-optimal design: {over.size} of {design.weights.shape[0]} repetitions have a support "
            f"above S = 4 d ln ln d + 16 = {bound} (d = {d}; repetition {r}: "
            f"{int(design.support_size[r])} actions): use S_eff = max(S, s_l) in σ_n, "
            "since T_l <= h_l + S no longer holds.",
            DesignWarning,
            stacklevel=3,
        )
    missed = np.flatnonzero(~design.converged)
    if missed.size:
        r = int(missed[0])
        warnings.warn(
            f"G-optimal design: {missed.size} of {design.weights.shape[0]} repetitions did not reach "
            f"g <= (1 + c) d' within max_iterations = {max_iterations} (repetition {r}: g = "
            f"{float(design.g[r]):.6g}, target {float(design.target[r]):.6g}).",
            DesignWarning,
            stacklevel=3,
        )


# ---------------------------------------------------------------------------------------
# Gains and rounding
# ---------------------------------------------------------------------------------------


def _weights(weights: object, k: int | None = None) -> FloatArray:
    """``weights`` as a ``(R, k)`` array of distributions (rows normalized)."""
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (ValueError, TypeError):
        raise ParameterTypeError("weights", weights, "a real array of shape (k,) or (R, k)") from None
    if w.ndim not in (1, 2) or 0 in w.shape:
        raise ParameterError(
            "weights", f"an array of shape {w.shape}", "a non-empty array of shape (k,) or (R, k)"
        )
    w = np.atleast_2d(w)
    if k is not None and w.shape[1] != k:
        raise ParameterError(
            "weights", f"an array of shape {w.shape}", f"{k} weights per row, one per action"
        )
    if not np.isfinite(w).all() or (w < 0).any():
        raise ParameterError("weights", "an array with negative or non-finite entries", "finite weights >= 0")
    total = w.sum(axis=1, keepdims=True)
    if (np.abs(total - 1.0) > 1e-6).any():
        bad = float(total[np.abs(total - 1.0) > 1e-6][0])
        raise ParameterError("weights", f"a row summing to {bad!r}", "rows summing to 1 (within 1e-6)")
    return np.asarray(w / total, dtype=np.float64)


def gains(actions: ArrayLike, weights: ArrayLike) -> FloatArray:
    """``g_x(π) = xᵀ V(π)⁺ x`` for every action ``x``, shape ``(R, k)``.

    ``V(π) = Σ_x π(x) x xᵀ``; the pseudo-inverse acts on the span of the actions, and the
    support of ``π`` must span it (otherwise some ``g_x`` is infinite and this raises). Kiefer–Wolfowitz:
    ``Σ_x π(x) g_x(π) = d'`` for every such ``π``, and ``max_x g_x(π) >= d'`` with equality exactly
    at the G-optimal designs (Kiefer & Wolfowitz 1960).
    """
    X = _actions(actions)
    R, k, _ = X.shape
    w = _weights(weights, k)
    if w.shape[0] != R:
        raise ParameterError("weights", f"an array of shape {w.shape}", f"shape ({k},) or ({R}, {k})")
    Y, rank = _span(X, np.ones((R, k), dtype=np.bool_))
    null = _null(rank, Y.shape[2])
    # The support must span the actions: V(π) restricted to the span must be well conditioned.
    V = np.swapaxes(Y * w[..., None], 1, 2) @ Y + null
    eig = np.linalg.eigvalsh(V)
    if (eig[:, 0] <= eig[:, -1] * Y.shape[2] * np.finfo(np.float64).eps).any():
        raise ParameterError(
            "weights", "a design whose support does not span the actions", "a spanning support"
        )
    return _gains(Y, w, null)


def pull_counts(weights: ArrayLike, h: float) -> IntArray:
    """Pull counts ``T(x) = ⌈h π(x)⌉`` (Li, Zhou & Ji 2022, Algorithm 1 line 5; DP-PE's Algorithm 3
    line 6 is the same).

    Exactly the paper's ceiling: every support point is pulled at least once, ``h π(x) <= T(x) < h
    π(x) + 1``, hence ``Σ_x T(x) x xᵀ ⪰ h V(π)`` and ``h <= T_l = Σ_x T(x) <= h + s`` with ``s =
    |supp π|`` (the facts the paper's analysis uses). ``π`` is renormalized to sum to 1 first.

    Parameters
    ----------
    weights : array_like, shape (k,) or (R, k)
        ``π`` (for example :attr:`Design.weights`); rows must sum to 1 within ``1e-6``.
    h : float
        ``h_l`` (``2^l`` in DP-DPE, ``S 2^{l-1}`` in DP-PE): a real in ``(0, 2^40]``.

    Returns
    -------
    numpy.ndarray of int64, shape (R, k)
        Zero off the support.
    """
    w = _weights(weights)
    h = v.at_most("h", v.positive("h", h), MAX_H, "⌈h π(x)⌉ must be exact to one pull in double precision")
    return np.ceil(h * w).astype(np.int64)

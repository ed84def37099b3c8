"""Tests of learners.design: G-optimal designs and their rounding (Li, Zhou & Ji 2022, Algorithm 1
lines 4-5; Kiefer & Wolfowitz 1960)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import minimize, minimize_scalar

from accounting.errors import ParameterError, ParameterTypeError
from learners.design import (
    Design,
    DesignWarning,
    _step,
    g_optimal_design,
    gains,
    pull_counts,
    support_bound,
)


def sphere(rng: np.random.Generator, *shape: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    """The DP-DPE configs' arms: i.i.d. N(0, I_d), normalized to the unit sphere."""
    x = rng.standard_normal(shape)
    return np.asarray(x / np.linalg.norm(x, axis=-1, keepdims=True))


def logdet(actions: np.ndarray[Any, Any], weights: np.ndarray[Any, Any]) -> float:
    sign, value = np.linalg.slogdet((actions * weights[:, None]).T @ actions)
    assert sign > 0
    return float(value)


def quiet(*args: Any, **kwargs: Any) -> Design:
    """g_optimal_design, failing on any warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return g_optimal_design(*args, **kwargs)


@pytest.fixture(scope="module")
def paper_instances() -> np.ndarray[Any, np.dtype[np.float64]]:
    """Three instances of the size of Li, Zhou & Ji (2022), §7: k = 1000 arms on the unit sphere of R^20."""
    return sphere(np.random.default_rng(20), 3, 1000, 20)


# ---------------------------------------------------------------------------------------
# The constant S and the line search
# ---------------------------------------------------------------------------------------


def test_support_bound_is_the_paper_constant() -> None:
    # Algorithm 1 line 4's 4 d log log d + 16, natural log: 103.8 -> 104 at d = 20.
    assert 4 * 20 * math.log(math.log(20)) + 16 == pytest.approx(103.8, abs=0.05)
    assert support_bound(20) == 104
    assert support_bound(3) == math.ceil(12 * math.log(math.log(3)) + 16) == 18
    assert support_bound(2) == 14  # 4·2·ln ln 2 < 0, still above 2d
    assert support_bound(1) == 2  # ln ln 1 undefined: the initialization's two points
    assert all(support_bound(d) >= 2 * d for d in range(1, 200))
    with pytest.raises(ParameterError, match="d=0"):
        support_bound(0)


@pytest.mark.parametrize("r", [1, 2, 5, 20])
@pytest.mark.parametrize("ratio", [0.3, 0.9, 1.5, 4.0, 40.0])
def test_step_is_the_exact_line_search_of_log_det(r: int, ratio: float) -> None:
    """Fedorov's γ = (g/d − 1)/(g − 1) against a numerical maximization of log det along the segment.

    A design with V = I_r and a point x with ‖x‖² = g: log det((1−γ)I + γ x xᵀ) =
    (r−1) log(1−γ) + log(1 + γ(g−1)). The feasible γ run from −π(x)/(1−π(x)) (take π(x) = 0.9,
    so −9) to 1.
    """
    g = ratio * r

    def minus_logdet(gamma: float) -> float:
        x = np.zeros(r)
        x[0] = math.sqrt(g)
        sign, val = np.linalg.slogdet((1 - gamma) * np.eye(r) + gamma * np.outer(x, x))
        assert sign > 0
        return float(-val)

    got = float(_step(np.array([g]), np.array([float(r)]))[0])
    # the away end: π(x) = 0.9, and never past where (1−γ)I + γ x xᵀ stops being positive definite
    low = max(-9.0, -(1 - 1e-9) / (g - 1)) if g > 1 else -9.0
    best = minimize_scalar(minus_logdet, bounds=(low, 1 - 1e-12), method="bounded", options={"xatol": 1e-10})
    if math.isinf(got):  # g <= 1: log det rises all the way to the drop end
        assert g <= 1
        assert best.x == pytest.approx(low, abs=1e-5)
    else:
        assert got == pytest.approx(best.x, abs=1e-6)
        assert (got > 0) == (g > r)


# ---------------------------------------------------------------------------------------
# Line 4's promises on the paper's instance, and a reference run's counts
# ---------------------------------------------------------------------------------------


def test_paper_instance_design(paper_instances: np.ndarray[Any, Any]) -> None:
    """g ≤ 2d, Σπ = 1, π ≥ 0, |supp| ≤ S, Σ π g = d (Kiefer–Wolfowitz); about 12 iterations, s ≈ 32-33."""
    X = paper_instances
    design = quiet(X, rng=[np.random.default_rng(s) for s in range(3)])
    w = design.weights
    assert w.shape == (3, 1000)
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert (design.rank == 20).all()
    assert design.converged.all()
    assert (design.g <= 2 * 20).all()
    assert (design.support_size <= support_bound(20)).all()
    g = gains(X, w)
    np.testing.assert_allclose(g.max(axis=1), design.g, rtol=1e-12)
    np.testing.assert_allclose((w * g).sum(axis=1), 20.0, rtol=1e-10)
    # An independent run of plain Frank-Wolfe + Kumar-Yildirim: ~12 iterations, s ≈ 32-33.
    assert (design.iterations >= 8).all()
    assert (design.iterations <= 20).all()
    assert (design.support_size >= 28).all()
    assert (design.support_size <= 40).all()
    # Each iteration adds at most one point to the initialization's at most 2d.
    assert (design.support_size <= 2 * 20 + design.iterations).all()


def test_tighter_target_and_warning_above_S(paper_instances: np.ndarray[Any, Any]) -> None:
    """At g ≤ 1.1d about 75 iterations and s ≈ 91-95 (below S = 104, as a reference run); at 1.01d
    the support exceeds S and the design warns, still meeting its target."""
    X = paper_instances[0]
    design = quiet(X, rng=np.random.default_rng(0), c=0.1)
    assert design.g[0] <= 1.1 * 20
    assert 50 <= design.iterations[0] <= 100
    assert 80 <= design.support_size[0] <= support_bound(20)
    with pytest.warns(DesignWarning, match=r"S = 4 d ln ln d \+ 16 = 104"):
        tight = g_optimal_design(X, rng=np.random.default_rng(0), c=0.01)
    assert tight.converged[0]
    assert tight.support_size[0] > 104
    assert tight.g[0] <= 1.01 * 20


@pytest.mark.parametrize("c", [2.0, 1.0, 0.5, 0.1, 0.02])
@pytest.mark.parametrize("away_steps", [True, False])
def test_stop_rule(c: float, away_steps: bool) -> None:
    """g(π) ≤ (1 + c) d at the stop, and log det within c·d of a tighter design's (concavity)."""
    X = sphere(np.random.default_rng(1), 120, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # at c = 0.02 plain Frank-Wolfe's support can pass S(6) = 30: kept, and said
        warnings.filterwarnings("ignore", "G-optimal design: .* support above S", DesignWarning)
        design = g_optimal_design(X, rng=np.random.default_rng(2), c=c, away_steps=away_steps)
    assert design.converged[0]
    assert design.g[0] <= (1 + c) * 6
    assert design.target[0] == (1 + c) * 6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DesignWarning)  # a tight design's support exceeds S(6) = 30
        best = g_optimal_design(X, rng=np.random.default_rng(3), c=1e-7)
    gap = logdet(X, best.weights[0]) - logdet(X, design.weights[0])
    assert -1e-6 <= gap <= c * 6


def test_not_converged_within_max_iterations_warns() -> None:
    X = sphere(np.random.default_rng(1), 300, 10)
    with pytest.warns(DesignWarning, match="max_iterations = 2"):
        design = g_optimal_design(X, rng=np.random.default_rng(0), c=0.05, max_iterations=2)
    assert not design.converged[0]
    assert design.iterations[0] == 2
    assert design.g[0] > 1.05 * 10
    # max_iterations = 0: the Kumar-Yildirim initialization itself, which spans R^d.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DesignWarning)
        start = g_optimal_design(X, rng=np.random.default_rng(0), c=0.05, max_iterations=0)
    assert start.iterations[0] == 0
    s = start.support_size[0]
    assert 10 <= s <= 20
    np.testing.assert_allclose(start.weights[0][start.support[0]], 1 / s)
    assert math.isfinite(start.g[0])


# ---------------------------------------------------------------------------------------
# Kiefer-Wolfowitz and independent references
# ---------------------------------------------------------------------------------------


@given(
    d=st.integers(1, 6),
    extra=st.integers(0, 20),
    seed=st.integers(0, 2**32 - 1),
    sparse=st.booleans(),
)
def test_trace_identity_for_any_design(d: int, extra: int, seed: int, sparse: bool) -> None:
    """Σ_x π(x) g_x(π) = d for *every* π with V(π) nonsingular (tr V⁻¹V), not only the optimum."""
    rng = np.random.default_rng(seed)
    k = d + extra
    X = rng.standard_normal((k, d)) * rng.uniform(0.1, 3.0, size=(k, 1))
    w = rng.dirichlet(np.ones(k))
    if sparse:  # the first d actions span (a.s.), the rest may get no weight at all
        w[d:][rng.random(k - d) < 0.5] = 0.0
        w /= w.sum()
    g = gains(X, w)
    assert float((w * g).sum()) == pytest.approx(d, rel=1e-9)
    assert g.max() >= d * (1 - 1e-9)  # so max g = d only at the optimum


def test_kiefer_wolfowitz_against_slsqp() -> None:
    """An independent solve of the concave program max log det V(π) on the simplex (SLSQP):
    the same optimum, and there max_x g_x = d (Kiefer-Wolfowitz)."""
    rng = np.random.default_rng(7)
    k, d = 12, 3
    X = rng.standard_normal((k, d))

    def objective(w: np.ndarray[Any, Any]) -> tuple[float, np.ndarray[Any, Any]]:
        V = (X * w[:, None]).T @ X
        sign, val = np.linalg.slogdet(V)
        if sign <= 0:
            return 1e10, np.zeros(k)
        return -val, -np.einsum("ki,ij,kj->k", X, np.linalg.inv(V), X)

    ref = minimize(
        objective,
        np.full(k, 1 / k),
        jac=True,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * k,
        constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1, "jac": lambda w: np.ones(k)}],
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    assert ref.success
    w_ref = np.clip(ref.x, 0, None) / np.clip(ref.x, 0, None).sum()
    assert gains(X, w_ref).max() == pytest.approx(d, rel=1e-4)

    design = quiet(X, rng=np.random.default_rng(0), c=1e-9)
    assert design.g[0] == pytest.approx(d, rel=1e-8)
    assert logdet(X, design.weights[0]) == pytest.approx(logdet(X, w_ref), abs=1e-7)
    assert logdet(X, design.weights[0]) >= logdet(X, w_ref) - 1e-9
    # the optimum's support is where g = d (complementary slackness); dropped points have g < d.
    g = gains(X, design.weights)[0]
    np.testing.assert_allclose(g[design.support[0]], d, rtol=1e-6)
    np.testing.assert_allclose(design.weights[0], w_ref, atol=1e-4)


@pytest.mark.parametrize("d", [1, 2, 5, 12])
def test_cross_polytope_uniform_is_optimal(d: int) -> None:
    """±e_i: the uniform design is G-optimal (V = I/d, every g = d); the initialization finds it."""
    X = np.vstack([np.eye(d), -np.eye(d)])
    design = quiet(X, rng=np.random.default_rng(d), c=1e-9)
    np.testing.assert_allclose(design.weights[0], 1 / (2 * d))
    assert design.g[0] == pytest.approx(d)
    assert design.iterations[0] == 0


@pytest.mark.parametrize("k", [3, 5, 8])
def test_regular_polygon_converges_to_uniform(k: int) -> None:
    """k equally spaced unit vectors in R^2 (k >= 3): uniform is optimal with V = I/2, g = 2."""
    t = 2 * np.pi * np.arange(k) / k
    X = np.stack([np.cos(t), np.sin(t)], axis=1)
    design = quiet(X, rng=np.random.default_rng(k), c=1e-8)
    assert logdet(X, design.weights[0]) == pytest.approx(2 * math.log(0.5), abs=1e-7)
    assert design.g[0] == pytest.approx(2, rel=1e-7)


def test_one_dimension_puts_everything_on_the_longest_action() -> None:
    """d = 1: the optimum is the action of largest |x| (g = 1). The initialization takes both ends;
    the away step drops the other one (g < 1 there: drop, the line search has no interior point)."""
    X = np.array([[0.5], [-0.2], [0.3]])
    loose = quiet(X, rng=np.random.default_rng(0))
    np.testing.assert_allclose(loose.weights[0], [0.5, 0.5, 0.0])  # g = 0.25/0.145 <= 2
    design = quiet(X, rng=np.random.default_rng(0), c=1e-3)
    np.testing.assert_array_equal(design.weights[0], [1.0, 0.0, 0.0])
    assert design.g[0] == 1.0
    one = quiet([[0.0, 2.0]], rng=np.random.default_rng(0))
    assert one.weights[0, 0] == 1.0
    assert one.rank[0] == 1
    assert one.g[0] == pytest.approx(1.0)


@pytest.mark.parametrize("away_steps", [True, False])
def test_every_step_raises_log_det(away_steps: bool) -> None:
    """Toward, away and drop steps are exact line searches along feasible segments: log det V(π)
    never decreases from one iteration to the next (the run stopped after n steps, n = 0, 1, ...)."""
    X = sphere(np.random.default_rng(5), 80, 5)
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DesignWarning)
        for n in range(50):
            design = g_optimal_design(
                X, rng=np.random.default_rng(0), c=1e-3, away_steps=away_steps, max_iterations=n
            )
            values.append(logdet(X, design.weights[0]))
    assert design.converged[0]
    assert np.all(np.diff(values) >= -1e-12)
    assert values[-1] > values[0]


# ---------------------------------------------------------------------------------------
# Span, masks, batches
# ---------------------------------------------------------------------------------------


def test_actions_in_a_subspace() -> None:
    """Remark 3.2: actions spanning a 3-dim subspace of R^8: the design works there, target 2·3."""
    rng = np.random.default_rng(4)
    basis, _ = np.linalg.qr(rng.standard_normal((8, 3)))
    C = rng.standard_normal((60, 3))
    X = C @ basis.T
    design = quiet(X, rng=rng)
    assert design.rank[0] == 3
    assert design.g[0] <= 2 * 3
    w = design.weights
    g = gains(X, w)
    np.testing.assert_allclose((w * g).sum(), 3.0, rtol=1e-9)
    # the gains are those of the coordinates in the subspace (V(π)⁺ acts on the span)
    np.testing.assert_allclose(g, gains(C, w), rtol=1e-8)
    tight = quiet(X, rng=rng, c=1e-6)
    reference = quiet(C, rng=rng, c=1e-6)
    assert tight.g[0] == pytest.approx(3, rel=1e-5)
    assert np.linalg.slogdet((C * tight.weights[0][:, None]).T @ C)[1] == pytest.approx(
        logdet(C, reference.weights[0]), abs=1e-5
    )


@pytest.mark.parametrize("scale", [1e-150, 1e-5, 1e5, 1e150])
def test_scale_invariance(scale: float) -> None:
    """g_x(π) and so the design do not change when every action is scaled by one constant (the
    Gram matrix of 1e±150-sized actions would under/overflow unscaled)."""
    X = sphere(np.random.default_rng(2), 2, 90, 5) * np.array([1.0, 3.0])[:, None, None]
    base = quiet(X, rng=[np.random.default_rng(0), np.random.default_rng(1)], c=0.05)
    scaled = quiet(X * scale, rng=[np.random.default_rng(0), np.random.default_rng(1)], c=0.05)
    np.testing.assert_allclose(scaled.weights, base.weights, atol=1e-12)
    np.testing.assert_allclose(scaled.g, base.g, rtol=1e-10)
    np.testing.assert_allclose(gains(X * scale, base.weights), gains(X, base.weights), rtol=1e-10)


def test_mask_equals_the_subset() -> None:
    rng = np.random.default_rng(6)
    X = sphere(rng, 200, 7)
    mask = rng.random(200) < 0.3
    masked = quiet(X, rng=np.random.default_rng(1), mask=mask, c=0.1)
    subset = quiet(X[mask], rng=np.random.default_rng(1), c=0.1)
    assert (masked.weights[0][~mask] == 0).all()
    np.testing.assert_allclose(masked.weights[0][mask], subset.weights[0], atol=1e-12)
    assert masked.iterations[0] == subset.iterations[0]
    assert masked.g[0] == pytest.approx(subset.g[0], rel=1e-12)


def test_batch_equals_separate_runs() -> None:
    """One generator per repetition: the batch is the stack of separate runs (ranks, masks and
    convergence differing across repetitions, as after elimination)."""
    rng = np.random.default_rng(8)
    X = sphere(rng, 4, 150, 6)
    X[1] = X[1] @ np.diag([1, 1, 1, 1, 0, 0])  # rank 4
    mask = rng.random((4, 150)) < 0.5
    mask[2] = False
    mask[2, 17] = True  # one active action: all weight on it
    batch = quiet(X, rng=[np.random.default_rng(s) for s in range(4)], mask=mask, c=0.05)
    assert list(batch.rank) == [6, 4, 1, 6]
    for r in range(4):
        one = quiet(X[r], rng=np.random.default_rng(r), mask=mask[r], c=0.05)
        np.testing.assert_allclose(batch.weights[r], one.weights[0], atol=1e-12)
        for field in ("support", "rank", "iterations", "converged"):
            np.testing.assert_array_equal(getattr(batch, field)[r], getattr(one, field)[0])
        assert batch.g[r] == pytest.approx(one.g[0], rel=1e-12)
    assert batch.weights[2, 17] == 1.0
    # a single generator for a batch of one is the unbatched call with it
    single = quiet(X[0], rng=np.random.default_rng(9))
    stacked = quiet(X[:1], rng=np.random.default_rng(9))
    np.testing.assert_array_equal(single.weights, stacked.weights)


def test_design_is_a_read_only_value() -> None:
    design = quiet(sphere(np.random.default_rng(0), 30, 3), rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="read-only"):
        design.weights[0, 0] = 1.0
    with pytest.raises(AttributeError):
        design.c = 2.0  # type: ignore[misc]


# ---------------------------------------------------------------------------------------
# Rounding (Algorithm 1 line 5)
# ---------------------------------------------------------------------------------------


@given(
    k=st.integers(1, 60),
    seed=st.integers(0, 2**32 - 1),
    h=st.one_of(st.integers(1, 2**40), st.floats(0.01, 1e9)),
)
def test_pull_counts_bounds(k: int, seed: int, h: float) -> None:
    """T(x) = ⌈h π(x)⌉: h π ≤ T < h π + 1, T ≥ 1 exactly on the support, h ≤ Σ T ≤ h + s."""
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.ones(k)) * (rng.random(k) < 0.6)
    if w.sum() == 0:
        w[0] = 1.0
    w /= w.sum()
    T = pull_counts(w, h)[0]
    s = int((w > 0).sum())
    assert T.dtype == np.int64
    assert ((T >= 1) == (w > 0)).all()
    assert (h * w <= T).all()
    assert (h * w + 1 > T).all()
    assert h <= T.sum() <= h + s


def test_pull_counts_of_a_design() -> None:
    """In early phases s > h and every support point is pulled once (T_l = s); later T_l ≈ h.
    Σ T(x) x xᵀ ⪰ h V(π), so ‖x‖²_{V_l⁻¹} ≤ g(π)/h ≤ 2d/h (the facts the paper's analysis uses)."""
    X = sphere(np.random.default_rng(3), 2, 500, 10)
    design = quiet(X, rng=np.random.default_rng(3))
    s = design.support_size
    early = pull_counts(design.weights, 2)
    np.testing.assert_array_equal(early.sum(axis=1), s)
    np.testing.assert_array_equal(early > 0, design.support)
    for h in (2, 2**10, 2**19, 3.5):
        T = pull_counts(design.weights, h)
        assert ((h <= T.sum(axis=1)) & (T.sum(axis=1) <= h + s)).all()
        for r in range(2):
            Vl = (X[r] * T[r][:, None]).T @ X[r]
            hV = h * (X[r] * design.weights[r][:, None]).T @ X[r]
            assert np.linalg.eigvalsh(Vl - hV).min() >= -1e-9 * h
            widths = np.einsum("ki,ij,kj->k", X[r], np.linalg.inv(Vl), X[r])
            assert widths.max() <= design.g[r] / h * (1 + 1e-9)


# ---------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------

GOOD = np.eye(3)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"actions": np.ones(3)}, ParameterError, "actions"),
        ({"actions": np.ones((2, 2, 2, 2))}, ParameterError, "actions"),
        ({"actions": np.ones((0, 3))}, ParameterError, "actions"),
        ({"actions": np.ones((3, 0))}, ParameterError, "actions"),
        ({"actions": [[1.0, np.nan], [0.0, 1.0]]}, ParameterError, "actions"),
        ({"actions": [[1.0, np.inf], [0.0, 1.0]]}, ParameterError, "actions"),
        ({"actions": np.zeros((4, 3))}, ParameterError, "actions"),
        ({"actions": [["a", "b"]]}, ParameterTypeError, "actions"),
        ({"actions": np.eye(3, dtype=bool)}, ParameterTypeError, "actions"),
        ({"actions": [[1.0, 2.0], [3.0]]}, ParameterTypeError, "actions"),
        ({"c": 0.0}, ParameterError, "c"),
        ({"c": -1.0}, ParameterError, "c"),
        ({"c": math.nan}, ParameterError, "c"),
        ({"c": math.inf}, ParameterError, "c"),
        ({"c": "1"}, ParameterTypeError, "c"),
        ({"max_iterations": -1}, ParameterError, "max_iterations"),
        ({"max_iterations": 2.5}, ParameterError, "max_iterations"),
        ({"mask": np.ones(4, dtype=bool)}, ParameterError, "mask"),
        ({"mask": np.ones(3)}, ParameterTypeError, "mask"),
        ({"mask": np.zeros(3, dtype=bool)}, ParameterError, "mask"),
        ({"rng": 0}, ParameterTypeError, "rng"),
        ({"rng": [np.random.default_rng(0)] * 2}, ParameterError, "rng"),
        ({"away_steps": 1}, ParameterTypeError, "away_steps"),
    ],
)
def test_bad_design_input(kwargs: dict[str, Any], error: type[Exception], name: str) -> None:
    args: dict[str, Any] = {"actions": GOOD, "rng": np.random.default_rng(0)}
    args.update(kwargs)
    with pytest.raises(error, match=rf"^{name}=") as info:
        g_optimal_design(**args)
    assert isinstance(info.value, ValueError | TypeError)
    assert "expected" in str(info.value)


def test_only_zero_actions_active() -> None:
    X = np.array([[[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]] * 2)
    mask = np.array([[True, False, False], [False, False, True]])
    with pytest.raises(ParameterError, match=r"^actions=.*repetition 1.*nonzero active action"):
        g_optimal_design(X, rng=np.random.default_rng(0), mask=mask)


@pytest.mark.parametrize(
    ("weights", "h", "error", "name"),
    [
        ([0.5, 0.5], 0, ParameterError, "h"),
        ([0.5, 0.5], -2, ParameterError, "h"),
        ([0.5, 0.5], math.nan, ParameterError, "h"),
        ([0.5, 0.5], 2.0**41, ParameterError, "h"),
        ([0.5, 0.5], "2", ParameterTypeError, "h"),
        ([0.5, -0.5, 1.0], 4, ParameterError, "weights"),
        ([0.5, 0.4], 4, ParameterError, "weights"),
        ([0.5, np.nan], 4, ParameterError, "weights"),
        ([], 4, ParameterError, "weights"),
        (np.ones((1, 1, 1)), 4, ParameterError, "weights"),
        ([["a"]], 4, ParameterTypeError, "weights"),
    ],
)
def test_bad_rounding_input(weights: Any, h: Any, error: type[Exception], name: str) -> None:
    with pytest.raises(error, match=rf"^{name}="):
        pull_counts(weights, h)


def test_bad_gains_input() -> None:
    X = np.eye(3)
    with pytest.raises(ParameterError, match=r"^weights=.*spanning support"):
        gains(X, [0.5, 0.5, 0.0])
    with pytest.raises(ParameterError, match=r"^weights=.*3 weights per row"):
        gains(X, [0.5, 0.5])
    with pytest.raises(ParameterError, match=r"^weights="):
        gains(np.stack([X, X]), np.full((3, 3), 1 / 3))

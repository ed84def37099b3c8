"""Symbolic proofs (sympy) of the identities the accounting relies on.

Each ``*()`` function here proves one statement for *symbolic* parameters and returns a
frozen :class:`Proof`. A proof is a short chain of :class:`Step` s, and every step is decided
by sympy itself: an identity holds when sympy reduces ``lhs - rhs`` to exactly ``0``; an
inequality holds when sympy's assumption system decides the sign of the simplified difference;
a convergence condition holds when, with the hypothesis region written as an explicit
parametrization, sympy reduces the condition to ``True``. No step samples numbers. A step that
sympy cannot decide counts as *not* holding, so ``Proof.holds`` is ``True`` only when every step
was checked.

Hypotheses that are inequalities between symbols (``0 <= x < Δ``, ``S <= n g + τ``) are put
into sympy's assumptions by parametrizing the region with fresh nonnegative or positive
symbols (``Δ = x + 1 + k`` with ``k >= 0``), so that a case analysis is a list of
parametrizations that together cover the whole domain.

The statements are those of Chowdhury & Zhou 2023 ("Distributed Differential Privacy in
Multi-Armed Bandits", ICLR): Fact 1 (Section 4, after Goryczka & Xiong 2015, Theorem 5.1) and
Remark 7 (Appendix H.1), the Skellam MGF and closure of Definition 5 (Section 5), the privacy loss
behind Fact 3 (Appendix K) and the analyzer's modular decoding (Algorithm 1, lines 26–30; proof of
Theorem 1, Appendix D.1); :func:`gaussian_rdp_closed_form` is Mironov (2017), Proposition 7, as
used by :func:`accounting.bounds.gaussian_rdp`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sympy as sp

from verification.errors import ParameterError

__all__ = [
    "ALL_PROOFS",
    "Proof",
    "Step",
    "discrete_laplace_loss_bounded",
    "gaussian_rdp_closed_form",
    "modular_decoding_lemma",
    "polya_shares_sum_to_discrete_laplace",
    "prove",
    "prove_all",
    "skellam_mgf_and_closure",
]


@dataclass(frozen=True)
class Step:
    """One claim of a proof, as sympy checked it.

    Attributes
    ----------
    claim : str
        The claim in words and formulas.
    checked : Any
        The sympy object that was checked (an unevaluated ``Eq``, a relational, a condition).
    reduced : Any
        What sympy reduced it to: ``0`` for an identity ``lhs - rhs``, ``True`` for an
        inequality or a condition; anything else means sympy could not decide it.
    holds : bool
        Whether the reduction is exactly ``0`` (identities) or ``True`` (everything else).
    """

    claim: str
    checked: Any
    reduced: Any
    holds: bool


@dataclass(frozen=True)
class Proof:
    """The result of one symbolic proof.

    Attributes
    ----------
    name : str
        The proof's name, the key of :data:`ALL_PROOFS`.
    statement : str
        What is proved, with its hypotheses.
    expressions : tuple of (str, Any)
        The sympy expressions the statement is about, by label (see :meth:`expression`).
    steps : tuple of Step
        The checked claims, in order.
    holds : bool
        ``True`` iff there is at least one step and every step holds.
    derivation : str
        A short human-readable derivation: one numbered line per step, marked ``ok`` or ``FAILED``.
    """

    name: str
    statement: str
    expressions: tuple[tuple[str, Any], ...]
    steps: tuple[Step, ...]
    holds: bool
    derivation: str

    def expression(self, label: str) -> Any:
        """The expression recorded under ``label``.

        Parameters
        ----------
        label : str
            One of the labels in :attr:`expressions`.

        Returns
        -------
        Any
            The sympy expression.

        Raises
        ------
        ParameterError
            If no expression has that label.
        """
        for key, value in self.expressions:
            if key == label:
                return value
        labels = ", ".join(key for key, _ in self.expressions)
        raise ParameterError("label", label, f"one of {labels}")


def _conclude(name: str, statement: str, expressions: dict[str, Any], steps: list[Step]) -> Proof:
    lines = [f"{i}. [{'ok' if s.holds else 'FAILED'}] {s.claim}" for i, s in enumerate(steps, 1)]
    return Proof(
        name=name,
        statement=statement,
        expressions=tuple(expressions.items()),
        steps=tuple(steps),
        holds=bool(steps) and all(s.holds for s in steps),
        derivation="\n".join(lines),
    )


def _identity(claim: str, lhs: Any, rhs: Any) -> Step:
    """``lhs = rhs``, checked by ``simplify(lhs - rhs) == 0``."""
    reduced = sp.simplify(lhs - rhs)
    return Step(claim, sp.Eq(lhs, rhs, evaluate=False), reduced, reduced == 0)


def _relation(claim: str, relation: Any, lhs: Any, rhs: Any) -> Step:
    """``lhs <relation> rhs``, decided as ``simplify(lhs - rhs) <relation> 0`` from the symbols' assumptions.

    ``relation`` is a sympy relational class (``sp.Le``, ``sp.Gt``, ...).
    """
    reduced = relation(sp.simplify(lhs - rhs), 0)
    return Step(claim, relation(lhs, rhs, evaluate=False), reduced, reduced == sp.true)


def _condition(claim: str, condition: Any, reduced: Any) -> Step:
    """A boolean condition, already rewritten by the caller (e.g. on a parametrized region)."""
    reduced = sp.simplify(reduced)
    return Step(claim, condition, reduced, reduced == sp.true)


def _convergent(series: Any) -> tuple[Any, Any]:
    """The closed form and the convergence condition of a summed series.

    sympy returns ``Piecewise((closed_form, condition), (Sum(...), True))`` for a series that
    converges only on a region; a series that always converges comes back without a condition.
    """
    if isinstance(series, sp.Piecewise):
        closed, condition = series.args[0]
        return closed, condition
    return series, sp.true


# ---------------------------------------------------------------------------------------
# 1. Pólya shares sum to a discrete Laplace (Chowdhury & Zhou 2023, Fact 1, Remark 7)
# ---------------------------------------------------------------------------------------


def polya_shares_sum_to_discrete_laplace() -> Proof:
    """``Σ_{i≤n} (γ_i⁺ − γ_i⁻)`` with i.i.d. ``γ ~ Polya(1/n, β)`` is ``Lap_Z(b)``, ``β = e^{−1/b}``.

    Chowdhury & Zhou 2023, Fact 1 (Goryczka & Xiong 2015, Theorem 5.1) and Remark 7, by
    probability generating functions (PGFs), for a symbolic positive integer ``n``,
    ``0 < β < 1`` and ``r > 0``:

    1. The PGF of ``Polya(r, β)`` is ``((1−β)/(1−βz))^r``: sympy sums the PMF series
       ``Σ_x Γ(x+r)/(x! Γ(r)) β^x (1−β)^r z^x`` (its convergence condition is checked on
       ``0 < βz < 1``, which determines the distribution).
    2. The product of ``n`` such PGFs with ``r = 1/n`` is ``(1−β)/(1−βz)``, the PGF of the
       geometric ``Polya(1, β)`` (``P(k) = β^k (1−β)``).
    3. The difference of two independent geometrics has the two-sided PGF
       ``G(z) G(1/z) = (1−β)²/((1−βz)(1−β/z))``.
    4. The discrete Laplace PGF ``Σ_{x∈Z} ((1−β)/(1+β)) β^{|x|} z^x``, summed as two geometric
       series for complex ``z`` in the annulus ``β < |z| < 1/β``, is the same rational
       function; ``(1−β)/(1+β)`` is the constant ``(e^{1/b}−1)/(e^{1/b}+1) = tanh(1/(2b))`` of
       their Definition 4.

    Steps 1–3 hold for real ``z`` in ``(β, 1/β)``, inside the annulus; two Laurent series that
    agree there agree on the annulus (analytic continuation), and Laurent coefficients are
    unique, so the two PMFs are equal. These last two facts of complex analysis, and
    "independent sums multiply PGFs", are the only steps not checked by sympy.

    Returns
    -------
    Proof
        Expressions ``polya_pgf``, ``geometric_pgf``, ``difference_pgf``,
        ``discrete_laplace_pgf``.
    """
    beta = sp.Symbol("beta", positive=True)
    z = sp.Symbol("z")
    r = sp.Symbol("r", positive=True)
    n = sp.Symbol("n", integer=True, positive=True)
    x = sp.Symbol("x", integer=True, nonnegative=True)
    polya_steps, pmf, polya_pgf = _polya_pgf(beta, z, r, x)
    geometric_steps, geometric_pgf = _shares_sum_to_a_geometric(pmf, polya_pgf, beta, r, n, x)
    difference_steps, difference_pgf = _geometric_difference(polya_pgf, geometric_pgf, beta, z, r, n)
    laplace_steps, discrete_laplace_pgf = _discrete_laplace_pgf(difference_pgf, beta, z, x)
    return _conclude(
        "polya_shares_sum_to_discrete_laplace",
        "For every positive integer n and 0 < β < 1, if γ_i⁺, γ_i⁻ (i ≤ n) are 2n i.i.d. "
        "Polya(1/n, β), then Σ_i (γ_i⁺ − γ_i⁻) ~ Lap_Z(b) with β = e^(−1/b) (spec §2.3, Fact 1).",
        {
            "polya_pgf": polya_pgf,
            "geometric_pgf": geometric_pgf,
            "difference_pgf": difference_pgf,
            "discrete_laplace_pgf": discrete_laplace_pgf,
        },
        [*polya_steps, *geometric_steps, *difference_steps, *laplace_steps],
    )


def _polya_pgf(beta: Any, z: Any, r: Any, x: Any) -> tuple[list[Step], Any, Any]:
    """Step 1: the PGF of ``Polya(r, β)`` is ``((1−β)/(1−βz))^r``; the steps, the PMF and the PGF."""
    w = sp.Symbol("w")
    u = sp.Symbol("u", positive=True)
    steps: list[Step] = []
    # Γ(x+r)/(x!Γ(r)) = binomial(x+r-1, x); sum the power series in w = βz.
    pmf = sp.gamma(x + r) / (sp.factorial(x) * sp.gamma(r)) * beta**x * (1 - beta) ** r
    steps.append(
        _identity(
            "Γ(x+r)/(x! Γ(r)) = binomial(x+r−1, x), so Σ_x P(x) z^x = (1−β)^r Σ_x binomial(x+r−1, x) (βz)^x",
            pmf * z**x,
            (1 - beta) ** r * sp.binomial(x + r - 1, x) * (beta * z) ** x,
        )
    )
    closed, condition = _convergent(sp.summation(sp.binomial(x + r - 1, x) * w**x, (x, 0, sp.oo)))
    steps.append(
        _condition(
            "the series Σ binomial(x+r−1, x) w^x converges for every w = u/(1+u) in (0, 1) (u > 0)",
            condition,
            condition.subs(w, u / (1 + u)),
        )
    )
    steps.append(_identity("its sum is (1−w)^(−r)", closed, (1 - w) ** (-r)))
    polya_pgf = (1 - beta) ** r * (1 - beta * z) ** (-r)
    p, q = sp.symbols("p q", positive=True)
    steps.append(
        _identity(
            "for the positive bases p = 1−β, q = 1−βz: p^r q^(−r) = (p/q)^r, the PGF ((1−β)/(1−βz))^r",
            p**r * q ** (-r),
            (p / q) ** r,
        )
    )
    return steps, pmf, polya_pgf


def _shares_sum_to_a_geometric(
    pmf: Any, polya_pgf: Any, beta: Any, r: Any, n: Any, x: Any
) -> tuple[list[Step], Any]:
    """Step 2: ``n`` shares of ``Polya(1/n, β)`` sum to the geometric ``Polya(1, β)``; its PGF."""
    geometric_pgf = polya_pgf.subs(r, 1)
    steps = [
        _identity(
            "n independent Polya(1/n, β) multiply PGFs: ((1−β)/(1−βz))^(n/n) = (1−β)/(1−βz)",
            polya_pgf.subs(r, 1 / n) ** n,
            geometric_pgf,
        ),
        _identity("Polya(1, β) is the geometric P(k) = β^k (1−β)", pmf.subs(r, 1), beta**x * (1 - beta)),
    ]
    return steps, geometric_pgf


def _geometric_difference(
    polya_pgf: Any, geometric_pgf: Any, beta: Any, z: Any, r: Any, n: Any
) -> tuple[list[Step], Any]:
    """Step 3: the difference of two i.i.d. geometrics (and of the ``n``-share sums); its PGF."""
    difference_pgf = (1 - beta) ** 2 / ((1 - beta * z) * (1 - beta / z))
    steps = [
        _identity(
            "E z^(N1−N2) = G(z) G(1/z) = (1−β)²/((1−βz)(1−β/z))",
            geometric_pgf * geometric_pgf.subs(z, 1 / z),
            difference_pgf,
        ),
        _identity(
            "directly: Π_{i≤n} G_{1/n}(z) G_{1/n}(1/z) = (1−β)²/((1−βz)(1−β/z)) for every n",
            (polya_pgf.subs(r, 1 / n) * polya_pgf.subs({r: 1 / n, z: 1 / z}, simultaneous=True)) ** n,
            difference_pgf,
        ),
    ]
    return steps, difference_pgf


def _discrete_laplace_pgf(difference_pgf: Any, beta: Any, z: Any, x: Any) -> tuple[list[Step], Any]:
    """Step 4: the discrete Laplace PGF on the annulus ``β < |z| < 1/β`` is the difference's."""
    k = sp.Symbol("k", integer=True, positive=True)
    w = sp.Symbol("w")
    u, v = sp.symbols("u v", positive=True)
    theta = sp.Symbol("theta", real=True)
    b = sp.Symbol("b", positive=True)
    steps: list[Step] = []
    # x >= 0 and x = -k, k >= 1.
    c = (1 - beta) / (1 + beta)
    nonnegative, condition_pos = _convergent(sp.summation(w**x, (x, 0, sp.oo)))
    negative, condition_neg = _convergent(sp.summation(w**k, (k, 1, sp.oo)))
    # The annulus β < |z| < 1/β, parametrized: β = 1/sqrt((1+u)(1+v)), |z| = sqrt((1+v)/(1+u)).
    annulus = {
        "beta": 1 / sp.sqrt((1 + u) * (1 + v)),
        "z": sp.sqrt((1 + v) / (1 + u)) * sp.exp(sp.I * theta),
    }
    steps.append(
        _condition(
            "Σ_{x≥0} (βz)^x converges on the annulus β < |z| < 1/β (there |βz| = 1/(1+u) < 1)",
            condition_pos,
            condition_pos.subs(w, annulus["beta"] * annulus["z"]),
        )
    )
    steps.append(
        _condition(
            "Σ_{k≥1} (β/z)^k converges on the annulus (there |β/z| = 1/(1+v) < 1)",
            condition_neg,
            condition_neg.subs(w, annulus["beta"] / annulus["z"]),
        )
    )
    discrete_laplace_pgf = c * (nonnegative.subs(w, beta * z) + negative.subs(w, beta / z))
    steps.append(
        _identity(
            "((1−β)/(1+β)) (1/(1−βz) + (β/z)/(1−β/z)) = (1−β)²/((1−βz)(1−β/z))",
            discrete_laplace_pgf,
            difference_pgf,
        )
    )
    steps.append(
        _identity(
            "with β = e^(−1/b): (1−β)/(1+β) = (e^(1/b)−1)/(e^(1/b)+1), the constant of Definition 4",
            c.subs(beta, sp.exp(-1 / b)),
            (sp.exp(1 / b) - 1) / (sp.exp(1 / b) + 1),
        )
    )
    steps.append(
        _identity(
            "and (1−β)/(1+β) = tanh(1/(2b)), the form accounting.noise.DiscreteLaplace uses",
            c.subs(beta, sp.exp(-1 / b)),
            sp.tanh(1 / (2 * b)).rewrite(sp.exp),
        )
    )
    return steps, discrete_laplace_pgf


# ---------------------------------------------------------------------------------------
# 2. Skellam MGF and closure (Chowdhury & Zhou 2023, Definition 5)
# ---------------------------------------------------------------------------------------


def skellam_mgf_and_closure() -> Proof:
    """The Skellam MGF, its symmetric form, closure under sums, mean and variance.

    Chowdhury & Zhou 2023, Definition 5 (after Agarwal, Kairouz & Liu 2021), for symbolic rates
    ``μ1, μ2 > 0``, variances
    ``σ², σ1², σ2² > 0`` and real ``t``:

    1. The Poisson(μ) MGF ``Σ_k e^{−μ} μ^k/k! e^{tk}`` sums to ``exp(μ(e^t − 1))`` (sympy sums
       the series in ``w = e^t > 0``).
    2. ``N1 − N2`` (independent) has MGF ``M_{μ1}(t) M_{μ2}(−t) = exp(μ1(e^t−1) + μ2(e^{−t}−1))``.
    3. At ``μ1 = μ2 = σ²/2`` this is ``exp(σ²(cosh t − 1))``.
    4. Closure: ``M_{Sk(σ1²)} M_{Sk(σ2²)} = M_{Sk(σ1²+σ2²)}``, and in general the rates add.
    5. Mean ``M'(0) = μ1 − μ2`` and variance ``M''(0) − M'(0)² = μ1 + μ2`` (``σ²`` when symmetric).

    Returns
    -------
    Proof
        Expressions ``poisson_mgf``, ``skellam_mgf`` (asymmetric) and ``symmetric_mgf``.
    """
    t = sp.Symbol("t", real=True)
    mu, mu1, mu2, nu1, nu2 = sp.symbols("mu mu1 mu2 nu1 nu2", positive=True)
    var, var1, var2 = sp.symbols("sigma2 sigma1_2 sigma2_2", positive=True)
    w = sp.Symbol("w", positive=True)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    steps: list[Step] = []

    series = sp.summation(sp.exp(-mu) * mu**k / sp.factorial(k) * w**k, (k, 0, sp.oo))
    closed, condition = _convergent(series)
    steps.append(
        _condition("the series Σ_k e^(−μ) (μw)^k/k! converges for every w > 0", condition, condition)
    )
    steps.append(_identity("E w^N = Σ_k e^(−μ) (μw)^k/k! = exp(μ(w−1))", closed, sp.exp(mu * (w - 1))))
    poisson_mgf = closed.subs(w, sp.exp(t))
    steps.append(
        _identity(
            "so at w = e^t the Poisson MGF is exp(μ(e^t − 1))", poisson_mgf, sp.exp(mu * (sp.exp(t) - 1))
        )
    )

    def sk(a: Any, c: Any) -> Any:
        return sp.exp(a * (sp.exp(t) - 1) + c * (sp.exp(-t) - 1))

    skellam_mgf = sk(mu1, mu2)
    steps.append(
        _identity(
            "E e^(t(N1−N2)) = M_{μ1}(t) M_{μ2}(−t) = exp(μ1(e^t−1) + μ2(e^(−t)−1))",
            poisson_mgf.subs(mu, mu1) * poisson_mgf.subs({mu: mu2, t: -t}, simultaneous=True),
            skellam_mgf,
        )
    )

    def sym(s2: Any) -> Any:
        return sp.exp(s2 * (sp.cosh(t) - 1))

    symmetric_mgf = sym(var)
    steps.append(
        _identity(
            "at μ1 = μ2 = σ²/2: exp(σ²/2 (e^t + e^(−t) − 2)) = exp(σ²(cosh t − 1))",
            skellam_mgf.subs({mu1: var / 2, mu2: var / 2}),
            symmetric_mgf.rewrite(sp.exp),
        )
    )
    steps.append(
        _identity(
            "closure: exp(σ1²(cosh t−1)) exp(σ2²(cosh t−1)) = exp((σ1²+σ2²)(cosh t−1))",
            sym(var1) * sym(var2),
            sym(var1 + var2),
        )
    )
    steps.append(
        _identity(
            "closure of the asymmetric form: the rates add",
            sk(mu1, mu2) * sk(nu1, nu2),
            sk(mu1 + nu1, mu2 + nu2),
        )
    )
    mean = sp.diff(skellam_mgf, t).subs(t, 0)
    second = sp.diff(skellam_mgf, t, 2).subs(t, 0)
    steps.append(_identity("mean M'(0) = μ1 − μ2", mean, mu1 - mu2))
    steps.append(_identity("variance M''(0) − M'(0)² = μ1 + μ2", second - mean**2, mu1 + mu2))
    steps.append(
        _identity(
            "symmetric: mean 0 and variance d²/dt² exp(σ²(cosh t − 1)) at 0 = σ²",
            sp.diff(symmetric_mgf, t, 2).subs(t, 0) - sp.diff(symmetric_mgf, t).subs(t, 0) ** 2,
            var,
        )
    )
    return _conclude(
        "skellam_mgf_and_closure",
        "For independent N1 ~ Poisson(μ1), N2 ~ Poisson(μ2): E e^(t(N1−N2)) = "
        "exp(μ1(e^t−1) + μ2(e^(−t)−1)); for Sk(0, σ²) (μ1 = μ2 = σ²/2) it is exp(σ²(cosh t − 1)); "
        "Sk(σ1²) + Sk(σ2²) = Sk(σ1² + σ2²) in distribution; the variance is σ² (spec §2.4).",
        {"poisson_mgf": poisson_mgf, "skellam_mgf": skellam_mgf, "symmetric_mgf": symmetric_mgf},
        steps,
    )


# ---------------------------------------------------------------------------------------
# 3. The discrete Laplace privacy loss (Chowdhury & Zhou 2023, Fact 3)
# ---------------------------------------------------------------------------------------


def discrete_laplace_loss_bounded() -> Proof:
    """The privacy loss of ``Lap_Z(b)`` under a shift ``Δ`` is at most ``Δ/b`` in absolute value.

    Chowdhury & Zhou 2023, Fact 3 (Appendix K): ``L(x) = ln(P(x)/P(x−Δ)) = (|x−Δ| − |x|)/b`` for
    ``P(x) ∝ e^{−|x|/b}``. For integers ``x`` and ``Δ >= 0`` and ``b > 0``, by cases on the
    signs of ``x`` and ``x − Δ``, which cover the integers:

    * ``x >= Δ`` (``x = Δ + k``, ``k >= 0``): ``L = −Δ/b``, so the bound is attained;
    * ``0 <= x < Δ`` (``Δ = x + 1 + k``, ``k >= 0``): ``L = (Δ − 2x)/b`` and
      ``−Δ/b < L <= Δ/b``;
    * ``x < 0`` (``x = −j``, ``j >= 1``): ``L = Δ/b``, attained on the other side.

    Returns
    -------
    Proof
        Expressions ``loss`` (in ``x``, ``Delta``, ``b``) and ``bound``.
    """
    b = sp.Symbol("b", positive=True)
    x = sp.Symbol("x", integer=True)
    delta = sp.Symbol("Delta", integer=True, nonnegative=True)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    j = sp.Symbol("j", integer=True, positive=True)
    steps: list[Step] = []

    def log_pmf(y: Any) -> Any:
        return sp.log((sp.exp(1 / b) - 1) / (sp.exp(1 / b) + 1)) - sp.Abs(y) / b

    loss = (sp.Abs(x - delta) - sp.Abs(x)) / b
    bound = delta / b
    steps.append(
        _identity(
            "ln P(x) − ln P(x−Δ) = (|x−Δ| − |x|)/b (the normalizing constant cancels)",
            sp.expand_log(log_pmf(x) - log_pmf(x - delta)),
            loss,
        )
    )
    cases = (x >= delta) | ((x >= 0) & (x < delta)) | (x < 0)
    steps.append(_condition("the three cases x >= Δ, 0 <= x < Δ, x < 0 cover every x", cases, cases))

    # Case x >= Δ.
    at = loss.subs(x, delta + k)
    steps.append(_identity("x = Δ + k (k >= 0): L = −Δ/b", at, -bound))
    steps.append(_identity("so |L| = Δ/b: the bound is attained for every x >= Δ", sp.Abs(at), bound))
    # Case 0 <= x < Δ, written as Δ = x + 1 + k with x = i >= 0.
    i = sp.Symbol("i", integer=True, nonnegative=True)
    middle = loss.subs(delta, i + 1 + k).subs(x, i)
    steps.append(_identity("0 <= x = i < Δ = i + 1 + k: L = (Δ − 2x)/b", middle, (1 + k - i) / b))
    steps.append(_relation("there L <= Δ/b (Δ/b − L = 2x/b >= 0)", sp.Le, middle, (i + 1 + k) / b))
    steps.append(_relation("and L > −Δ/b (L + Δ/b = 2(Δ−x)/b > 0)", sp.Gt, middle, -(i + 1 + k) / b))
    # Case x < 0.
    below = loss.subs(x, -j)
    steps.append(_identity("x = −j (j >= 1): L = Δ/b, attained for every x < 0", below, bound))
    steps.append(
        _identity(
            "negative shifts by symmetry: L(−x; −Δ) = L(x; Δ), so |L| <= |Δ|/b for every integer Δ",
            loss.subs({x: -x, delta: -delta}, simultaneous=True),
            loss,
        )
    )
    return _conclude(
        "discrete_laplace_loss_bounded",
        "For Lap_Z(b), b > 0, every integer x and every integer Δ >= 0: "
        "|ln(P(x)/P(x−Δ))| = |(|x−Δ| − |x|)/b| <= Δ/b, with equality for x >= Δ and for x <= 0 "
        "(spec §3.1, Fact 3: the discrete Laplace mechanism is (Δ/b, 0)-DP).",
        {"loss": loss, "bound": bound},
        steps,
    )


# ---------------------------------------------------------------------------------------
# 4. The analyzer's modular decoding (Chowdhury & Zhou 2023, Algorithm 1; proof of Theorem 1)
# ---------------------------------------------------------------------------------------


def modular_decoding_lemma() -> Proof:
    """The analyzer decodes ``y = S mod m`` back to ``S`` exactly on ``[−τ, n g + τ]``.

    The analyzer of Chowdhury & Zhou 2023, Algorithm 1 (lines 26–30, whose threshold is strict),
    as used in the proof of Theorem 1 (Appendix D.1), for
    symbolic positive integers ``n, g, τ`` and ``m = n g + 2τ + 1``; the decoder is
    ``z(y) = y − m if y > n g + τ else y``. The range ``[−τ, n g + τ]`` holds exactly ``m``
    integers, and for every integer ``S`` in it ``z(S mod m) = S``:

    * ``0 <= S <= n g + τ``: with ``k = n g + τ − S >= 0``, ``m = S + k + τ + 1``, so sympy's
      ``Mod`` gives ``S mod m = S`` (and ``0 mod m = 0``); ``S`` is not above the threshold.
    * ``S = −j`` with ``1 <= j <= τ`` (``τ = j + k``, ``k >= 0``): sympy's ``Mod`` gives
      ``S mod m = m − j``, which is above the threshold by ``k + 1``; so ``z = −j``.

    Just outside the range decoding fails: ``S = n g + τ + 1`` decodes to ``−τ`` and
    ``S = −τ − 1`` to ``n g + τ`` (errors of ``±m``).

    Returns
    -------
    Proof
        Expressions ``modulus`` (``m``) and ``decoder`` (a ``Piecewise`` in ``y``).
    """
    n, g, tau = sp.symbols("n g tau", integer=True, positive=True)
    y = sp.Symbol("y", integer=True)
    s = sp.Symbol("S", integer=True, positive=True)
    j = sp.Symbol("j", integer=True, positive=True)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    m = n * g + 2 * tau + 1
    top = n * g + tau
    decoder = sp.Piecewise((y - m, y > top), (y, True))
    steps: list[Step] = []

    steps.append(_identity("[−τ, n g + τ] holds (n g + τ) − (−τ) + 1 = m integers", top + tau + 1, m))

    # 0 <= S <= n g + τ.
    steps.append(
        _identity(
            "0 <= S <= n g + τ: with k = n g + τ − S >= 0, m = S + k + τ + 1",
            m,
            s + (top - s) + tau + 1,
        )
    )
    steps.append(
        _identity(
            "so S mod m = Mod(S, S + k + τ + 1) = S for integers S >= 1, k >= 0, τ >= 1",
            sp.Mod(s, s + k + tau + 1, evaluate=False),
            s,
        )
    )
    steps.append(_identity("and 0 mod m = 0", sp.Mod(0, m, evaluate=False), 0))
    in_range = top - k
    steps.append(_relation("y = S = n g + τ − k is not above the threshold n g + τ", sp.Le, in_range, top))
    steps.append(_identity("so the decoder returns z = y = S", decoder.subs(y, in_range), in_range))

    # −τ <= S <= −1, written S = −j, τ = j + k.
    m_b = m.subs(tau, j + k)
    steps.append(
        _identity(
            "S = −j with 1 <= j <= τ = j + k: S mod m = m − j", sp.Mod(-j, m_b, evaluate=False), m_b - j
        )
    )
    steps.append(
        _relation(
            "y = m − j is above the threshold (y − (n g + τ) = k + 1 > 0)",
            sp.Gt,
            m_b - j,
            top.subs(tau, j + k),
        )
    )
    steps.append(
        _identity("so the decoder returns z = y − m = −j = S", decoder.subs(tau, j + k).subs(y, m_b - j), -j)
    )

    # Just outside the range.
    above = top + 1
    steps.append(
        _identity(
            "S = n g + τ + 1 (one above the range): S mod m = S", sp.Mod(above, m, evaluate=False), above
        )
    )
    steps.append(_identity("which decodes to n g + τ + 1 − m = −τ", decoder.subs(y, above), -tau))
    steps.append(_relation("and −τ < n g + τ + 1 = S: decoding fails", sp.Lt, -tau, above))
    below = -tau - 1
    steps.append(
        _identity(
            "S = −τ − 1 (one below the range): S mod m = n g + τ", sp.Mod(below, m, evaluate=False), top
        )
    )
    steps.append(_identity("which decodes to n g + τ", decoder.subs(y, top), top))
    steps.append(_relation("and n g + τ > −τ − 1 = S: decoding fails", sp.Gt, top, below))
    return _conclude(
        "modular_decoding_lemma",
        "For positive integers n, g, τ and m = n g + 2τ + 1, every integer S in [−τ, n g + τ] "
        "satisfies z(S mod m) = S, where z(y) = y − m if y > n g + τ else y (spec §4.2, §9.3); "
        "S = n g + τ + 1 decodes to −τ and S = −τ − 1 to n g + τ.",
        {"modulus": m, "decoder": decoder},
        steps,
    )


# ---------------------------------------------------------------------------------------
# 5. The Rényi divergence of two Gaussians
# ---------------------------------------------------------------------------------------


def gaussian_rdp_closed_form() -> Proof:
    """``D_α(N(Δ, σ²) || N(0, σ²)) = α Δ²/(2σ²)`` for every ``α > 1``.

    Mironov (2017), Proposition 7 (the Gaussian row of Table II), the formula of
    :func:`accounting.bounds.gaussian_rdp`. With ``α = 1 + c``, ``c > 0``, symbolic
    ``Δ, σ > 0`` and real ``x``:

    1. ``p(x)^α q(x)^{1−α} = exp(α(α−1)Δ²/(2σ²)) · φ_{αΔ,σ}(x)``, where ``φ_{μ,σ}`` is the
       ``N(μ, σ²)`` density (completing the square);
    2. ``∫ φ_{μ,σ} = 1`` for real ``μ``, so ``∫ p^α q^{1−α} = exp(α(α−1)Δ²/(2σ²))``
       (sympy integrates over the real line);
    3. ``D_α = ln(∫ p^α q^{1−α})/(α − 1) = αΔ²/(2σ²)``.

    Returns
    -------
    Proof
        Expressions ``integrand`` and ``divergence``.
    """
    x = sp.Symbol("x", real=True)
    mu = sp.Symbol("mu", real=True)
    sigma, delta, c = sp.symbols("sigma Delta c", positive=True)
    alpha = 1 + c
    steps: list[Step] = []

    def density(mean: Any) -> Any:
        return sp.exp(-((x - mean) ** 2) / (2 * sigma**2)) / (sigma * sp.sqrt(2 * sp.pi))

    integrand = density(delta) ** alpha * density(0) ** (1 - alpha)
    shift = sp.exp(alpha * (alpha - 1) * delta**2 / (2 * sigma**2))
    steps.append(
        _identity(
            "p^α q^(1−α) = exp(α(α−1)Δ²/(2σ²)) · φ_{αΔ,σ}(x) (completing the square)",
            integrand,
            shift * density(alpha * delta),
        )
    )
    steps.append(
        _identity("∫ φ_{μ,σ}(x) dx = 1 over the real line", sp.integrate(density(mu), (x, -sp.oo, sp.oo)), 1)
    )
    integral = sp.integrate(shift * density(alpha * delta), (x, -sp.oo, sp.oo))
    steps.append(_identity("so ∫ p^α q^(1−α) dx = exp(α(α−1)Δ²/(2σ²))", integral, shift))
    divergence = sp.log(integral) / (alpha - 1)
    steps.append(
        _identity("D_α = ln(∫ p^α q^(1−α))/(α−1) = αΔ²/(2σ²)", divergence, alpha * delta**2 / (2 * sigma**2))
    )
    return _conclude(
        "gaussian_rdp_closed_form",
        "For α > 1, Δ > 0, σ > 0: D_α(N(Δ, σ²) || N(0, σ²)) = α Δ²/(2σ²) (Mironov 2017, Prop. 7).",
        {"integrand": integrand, "divergence": divergence},
        steps,
    )


# ---------------------------------------------------------------------------------------
# All of them
# ---------------------------------------------------------------------------------------

#: Every proof of this module, by name.
ALL_PROOFS: dict[str, Callable[[], Proof]] = {
    "polya_shares_sum_to_discrete_laplace": polya_shares_sum_to_discrete_laplace,
    "skellam_mgf_and_closure": skellam_mgf_and_closure,
    "discrete_laplace_loss_bounded": discrete_laplace_loss_bounded,
    "modular_decoding_lemma": modular_decoding_lemma,
    "gaussian_rdp_closed_form": gaussian_rdp_closed_form,
}


def prove(name: str) -> Proof:
    """Run one proof by name.

    Parameters
    ----------
    name : str
        A key of :data:`ALL_PROOFS`.

    Returns
    -------
    Proof
        Its result.

    Raises
    ------
    ParameterError
        If ``name`` is not a key of :data:`ALL_PROOFS`.
    """
    if name not in ALL_PROOFS:
        raise ParameterError("name", name, f"one of {', '.join(ALL_PROOFS)}")
    return ALL_PROOFS[name]()


def prove_all() -> dict[str, Proof]:
    """Run every proof of :data:`ALL_PROOFS`.

    Returns
    -------
    dict of str to Proof
        The results, in the order of :data:`ALL_PROOFS`.
    """
    return {name: proof() for name, proof in ALL_PROOFS.items()}

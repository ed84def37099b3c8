"""The ledger records what was released: in every learner family, the noise a run adds to
what it releases is the noise of the event its ledger holds, relative to the event's sensitivity.

Each test runs a small instance, takes the released aggregates minus the exact noiseless ones (the
family's observer, a recording wrapper around what the server receives, or — for the batched MAB
learners, whose aggregates are not observable — a twin run of the same seeds whose noise samplers
draw as usual and return zeros), divides by the true sensitivity of the released query (worked
out here from the papers, not read from the learner), and checks the result against the law of
the event in the run's own ledger (``RunResult.ledgers``) scaled by the event's sensitivity. A
learner that halves its released noise and not its ledger fails; so does one whose ledger
records a sensitivity or a σ that is not what it released.

Statistics (all seeded): every check rejects a correct learner with probability at most
``2 LEVEL = 2·10⁻⁷``, and asserts before it runs that its sample would pass noise of half the
ledger's standard deviation with probability below ``MISS``:

* Gaussian noise: ``Σ (x/ρ)² ~ χ²_N`` exactly (``ρ = σ/Δ`` of the ledger's event), two-sided;
* Laplace noise: ``Σ |x|/b ~ Gamma(N, 1)`` exactly (``|X|/b`` is exponential), two-sided;
* the lattice laws of the distributed MAB protocols (discrete Laplace, Skellam, sums of discrete
  Gaussians, negative-binomial differences): a z-test of the mean of ``x²`` against the law's
  second moment, with the standard error from the law's exact fourth moment (sums of the PMF), at
  ``|z| <= Φ⁻¹(1 - LEVEL) = 5.2``; half the noise puts ``z`` near ``-(3/4) m₂/se``, asserted at
  least twice the threshold (the means of several thousand squares are close to normal there).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats

import accounting.noise as noise_laws
from accounting.mechanisms import AdditiveNoise, DistributedSum, PureDP
from accounting.noise import Gaussian, Laplace, LatticeNoise
from learners import ldp, linear, mab, phased
from learners.environments import ClippedGaussianArms
from learners.errors import ParameterError
from learners.ldp import engine as ldp_engine
from learners.ldp_instances import (
    BernoulliArms,
    Losses,
    QuadraticLoss,
    glm_bandit,
    strongly_convex_quadratic,
    unit_sphere,
)
from learners.ldp_instances import synthetic_linear as ldp_synthetic_linear
from learners.linear_instances import draw_synthetic
from learners.mab.radius import dpse_size
from learners.phased_instances import draw_instance

FloatArray = NDArray[np.float64]

#: One tail's probability of rejecting a correct learner, per check.
LEVEL = 1e-7
#: The largest probability with which a check may accept noise of half the ledger's sd.
MISS = 1e-9


# ---------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------


def _gaussian_check(x: FloatArray, ratio: FloatArray | float, what: str) -> None:
    """``x``: released noise over the true sensitivity; ``ratio``: the ledger's ``σ/Δ`` per sample.

    If the ledger is what was released, ``Σ (x/ρ)²`` is ``χ²_N``; with half the noise, ``χ²_N/4``.
    """
    n = x.size
    lo, hi = stats.chi2.ppf(LEVEL, n), stats.chi2.isf(LEVEL, n)
    assert stats.chi2.sf(4 * lo, n) < MISS, f"{what}: {n} samples cannot catch half the noise"
    stat = float(np.sum((x / ratio) ** 2))
    assert lo <= stat <= hi, (
        f"{what}: the released noise is {math.sqrt(stat / n):.4g} times the ledger's σ/Δ "
        f"(χ² = {stat:.6g} outside [{lo:.6g}, {hi:.6g}], N = {n})"
    )


def _laplace_check(x: FloatArray, ratio: float, what: str) -> None:
    """``x``: released noise over the true sensitivity; ``ratio``: the ledger's Laplace ``b/Δ``.

    ``|X|/b`` is exponential, so ``Σ |x|/ρ ~ Gamma(N, 1)``; with half the noise, ``Gamma(N, 1)/2``.
    """
    n = x.size
    lo, hi = stats.gamma.ppf(LEVEL, n), stats.gamma.isf(LEVEL, n)
    assert stats.gamma.sf(2 * lo, n) < MISS, f"{what}: {n} samples cannot catch half the noise"
    stat = float(np.sum(np.abs(x) / ratio))
    assert lo <= stat <= hi, (
        f"{what}: the released noise is {stat / n:.4g} times the ledger's b/Δ "
        f"(Σ|x|/ρ = {stat:.6g} outside [{lo:.6g}, {hi:.6g}], N = {n})"
    )


def _moment_check(x: FloatArray, m2: float, m4: float, what: str) -> None:
    """``x``: released noise over the true sensitivity; ``m2, m4``: ``E X²`` and ``E X⁴`` of the
    ledger's law over its sensitivity. A z-test of the mean of ``x²`` (module docstring)."""
    n = x.size
    se = math.sqrt((m4 - m2**2) / n)
    crit = float(stats.norm.isf(LEVEL))
    assert 0.75 * m2 / se >= 2 * crit, f"{what}: {n} samples cannot catch half the noise"
    z = (float(np.mean(x**2)) - m2) / se
    assert abs(z) <= crit, (
        f"{what}: the released noise is {math.sqrt(float(np.mean(x**2)) / m2):.4g} times the ledger's "
        f"(z = {z:.3g}, N = {n})"
    )


def _lattice_moments(law: LatticeNoise) -> tuple[float, float]:
    """``E X²`` and ``E X⁴`` of a lattice law, summed from its PMF over ±60 standard deviations."""
    width = int(60 * math.sqrt(law.variance())) + 60
    k = np.arange(-width, width + 1, dtype=np.float64)
    p = np.asarray(law.pmf(k.astype(np.int64)), dtype=np.float64)
    assert abs(float(p.sum()) - 1) < 1e-9
    return float(np.sum(p * k**2)), float(np.sum(p * k**4))


def _gaussian_ratio(mechanism: object) -> float:
    """``σ/Δ`` of a ledger's Gaussian mechanism."""
    assert isinstance(mechanism, AdditiveNoise)
    assert isinstance(mechanism.noise, Gaussian)
    return float(mechanism.noise.sigma) / float(mechanism.sensitivity)


# ---------------------------------------------------------------------------------------
# mab: batched successive elimination (Chowdhury & Zhou 2023), one released batch
# ---------------------------------------------------------------------------------------

MAB_PRIVATE = [
    ("dist-dp-se", {}),
    ("dist-rdp-se", {"scaling": 10}),
    ("shuffle-dp-se", {}),
    ("dist-cdp-se", {"scaling": 10}),
    ("cdp-se", {}),
    ("ldp-se", {}),
    ("dp-se", {}),
]


def _silenced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every noise law of :mod:`accounting.noise` draws as usual (the generators advance alike) and
    returns zeros: a twin run releases the exact aggregates its noisy run added noise to."""
    for law in vars(noise_laws).values():
        if isinstance(law, type) and "sample" in vars(law):
            draw = vars(law)["sample"]

            def zero(self: Any, rng: np.random.Generator, size: Any, draw: Any = draw) -> Any:
                return np.zeros_like(np.asarray(draw(self, rng, size)))

            monkeypatch.setattr(law, "sample", zero)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kwargs"), MAB_PRIVATE)
def test_mab_releases_the_noise_of_its_ledger(
    name: str, kwargs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first batch's aggregates (``l(1)`` users per arm; the horizon ends one round after it, so
    it is the only release) minus the twin run's: in reward units, where one user moves the sum of
    rewards in ``[0, 1]`` by at most 1, the noise of the ledger's event over its sensitivity ``g``
    (the encoding's): the server's (central), the sum of the shares (distributed, shuffle), ``n``
    users' own (local), DP-SE's ``Laplace(1/ε)`` on a sum of sensitivity 1 (Chowdhury & Zhou 2023,
    Theorems 1-6 and §7)."""
    K, R = 10, 400
    learner = mab.make_learner(name, 0.5, **kwargs)
    users = int(dpse_size(learner, np.array([float(K)]), 1)[0]) if name == "dp-se" else learner.eta
    horizon = K * users + 1
    arms = ClippedGaussianArms(tuple(np.linspace(0.3, 0.7, K)))

    def go() -> mab.RunResult:
        tapes = [np.random.default_rng(np.random.SeedSequence(5, spawn_key=(r,))) for r in range(R)]
        return mab.run(learner, arms, horizon, tapes=tapes, rng=np.random.default_rng(105), checkpoints=4)

    res = go()
    with monkeypatch.context() as m:
        _silenced(m)
        exact = go()
    assert dict(res.releases) == {users: R * K}  # one release of every arm of every repetition
    x = ((res.estimates - exact.estimates) * users).ravel()  # noise on the sum of `users` rewards
    events = res.ledgers[users].ledger
    assert all(e.count == 1 for e in events)
    mechanisms = [e.mechanism for e in events if not isinstance(e.mechanism, PureDP)]
    assert len(mechanisms) == 1  # shuffle: the relaxed secure aggregation's PureDP adds no noise
    mechanism = mechanisms[0]
    if isinstance(mechanism, DistributedSum):  # the users' shares sum to the total noise
        m2, m4 = _lattice_moments(mechanism.total_noise)
    else:
        assert isinstance(mechanism, AdditiveNoise)
        if isinstance(mechanism.noise, Laplace):
            _laplace_check(x, float(mechanism.noise.scale) / float(mechanism.sensitivity), name)
            return
        assert isinstance(mechanism.noise, LatticeNoise)
        m2, m4 = _lattice_moments(mechanism.noise)
        if name == "ldp-se":  # each of the `users` users adds the event's noise to its own message
            m2, m4 = users * m2, users * m4 + 3 * users * (users - 1) * m2**2
    g = float(mechanism.sensitivity)
    _moment_check(x, m2 / g**2, m4 / g**4, name)


# ---------------------------------------------------------------------------------------
# linear: protocol P of Private-Fed LinUCB (Zhou & Chowdhury 2024, Algorithm 2)
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("sensitivity", ["replace-one", "add-remove"])
def test_linear_releases_the_noise_of_its_ledger(sensitivity: str) -> None:
    """Every silo's released node minus its raw p-sum (the observer's messages and p-sums): on the bias
    stream ``N(0, σ0²)`` per coordinate, on the covariance ``σ0 (N + Nᵀ)/2`` (diagonal ``σ0²``,
    off-diagonal ``σ0²/2``), against the ledger's two Gaussian events per node. True sensitivities
    (derived here; Zhou & Chowdhury 2024 state ``L = 1``) with rewards clipped to ``[-c, c]`` and
    unit features: replace-one ``2c`` (bias) and ``‖x xᵀ - x'x'ᵀ‖_F <= √2`` (covariance); add-remove
    ``c`` and 1."""
    c = 0.5
    inst = draw_synthetic(np.random.default_rng(2), dim=4, arms=10, agents=4)
    learner = linear.make_learner(
        "ldp-fedlinucb-lazy", 1.0, delta=0.1, batch=5, sensitivity=sensitivity, bound=c
    )
    records: list[linear.SyncRecord] = []
    res = linear.run(
        learner,
        inst,
        160,
        tapes=[np.random.default_rng(s) for s in range(3)],
        rng=np.random.default_rng(11),
        checkpoints=4,
        observer=records.append,
    )
    bias_sens, cov_sens = (2 * c, math.sqrt(2)) if sensitivity == "replace-one" else (c, 1.0)
    events = [e for acc in res.ledgers.values() for e in acc.ledger]
    assert events
    assert all(e.count == 1 for e in events)
    bias = {e.mechanism for e in events[0::2]}  # each node composes its bias event, then its covariance
    cov = {e.mechanism for e in events[1::2]}
    assert len(bias) == len(cov) == 1  # one σ0 for every node
    ratio_b, ratio_c = _gaussian_ratio(bias.pop()), _gaussian_ratio(cov.pop())
    xb, diag, off = [], [], []
    i, j = np.triu_indices(4, 1)
    for rec in records:
        assert rec.messages_bias is not None
        assert rec.psums_bias is not None
        assert rec.messages_cov is not None
        assert rec.psums_cov is not None
        xb.append(((rec.messages_bias - rec.psums_bias) / bias_sens).ravel())
        noise = (rec.messages_cov - rec.psums_cov) / cov_sens
        diag.append(np.diagonal(noise, axis1=-2, axis2=-1).ravel())
        off.append((noise[..., i, j] * math.sqrt(2)).ravel())  # variance σ0²/2: (N_ij + N_ji)/2
    _gaussian_check(np.concatenate(xb), ratio_b, "bias stream")
    _gaussian_check(np.concatenate(diag), ratio_c, "covariance diagonal")
    _gaussian_check(np.concatenate(off), ratio_c, "covariance off-diagonal")


# ---------------------------------------------------------------------------------------
# phased: DP-DPE and DP-PE (Li, Zhou & Ji 2022)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "calibration"),
    [
        ("cdp-dpe", "exact"),
        ("ldp-dpe", "exact"),
        ("cdp-pe", "exact"),
        ("ldp-pe", "exact"),
        ("cdp-dpe", "classic"),
    ],
)
def test_phased_releases_the_noise_of_its_ledger(name: str, calibration: str) -> None:
    """Every phase's released ``ỹ_l`` minus the exact clipped average (DP-DPE) or sums (DP-PE), from
    the observer, over the true ℓ2 sensitivity under replace-one (Li, Zhou & Ji 2022, §4.1-§4.2,
    App. C.2): ``2B√s_l/|U_l|`` of the average (central, eq. 19); ``2B√s_l`` of a client's report, whose
    noise the average divides by ``√|U_l|`` (local, eq. 21); ``2B`` of the vector of sums, one
    client's reward in one sum (DP-PE central), a client's reward (local, a sum of ``T_l(x)``
    clients' noise). Against the ledger's event of the phase."""
    inst = draw_instance(np.random.default_rng(3), arms=40, dim=4)
    B = 0.5
    learner = phased.make_learner(name, 1.0, delta=0.25, calibration=calibration, bound=B)
    records: list[phased.PhaseRecord] = []
    res = phased.run(
        learner,
        inst,
        2**10,
        tapes=[np.random.default_rng(s) for s in range(30)],
        rng=np.random.default_rng(11),
        checkpoints=4,
        observer=records.append,
    )
    xs, ratios = [], []
    for rec in records:
        ledger = res.ledgers[rec.phase].ledger
        assert len(ledger) == 1  # each client reports once, in one phase
        assert ledger[0].count == 1
        valid = rec.support >= 0
        s = valid.sum(axis=1, keepdims=True).astype(np.float64)
        noise = rec.released - rec.average
        if name.endswith("dpe"):
            n = rec.clients
            x = (
                noise / (2 * B * np.sqrt(s) / n)
                if name == "cdp-dpe"
                else noise * math.sqrt(n) / (2 * B * np.sqrt(s))
            )
        else:
            x = noise / (2 * B) if name == "cdp-pe" else noise / (2 * B * np.sqrt(np.maximum(rec.counts, 1)))
        xs.append(x[valid])
        ratios.append(np.full(int(valid.sum()), _gaussian_ratio(ledger[0].mechanism)))
    assert sorted(res.ledgers) == sorted({rec.phase for rec in records})
    _gaussian_check(np.concatenate(xs), np.concatenate(ratios), name)


# ---------------------------------------------------------------------------------------
# ldp: Algorithms 1 and 2 of Zheng et al. (2020), one message per user
# ---------------------------------------------------------------------------------------


class _Received:
    """A one-point base that hands everything to :class:`learners.ldp.UCB` and keeps the messages
    the server receives (what it learns from)."""

    def __init__(self, arms: int) -> None:
        self.inner = ldp.UCB(arms)
        self.messages: list[FloatArray] = []

    @property
    def name(self) -> str:
        return "ucb"

    @property
    def domain(self) -> str:
        return "arms"

    def start(self, repetitions: int, feedback: ldp.Feedback, rng: np.random.Generator) -> Any:
        state, messages = self.inner.start(repetitions, feedback, rng), self.messages

        class State:
            def propose(self) -> Any:
                return state.propose()

            def observe(self, values: FloatArray) -> None:
                messages.append(np.array(values, dtype=np.float64))
                state.observe(values)

        return State()


def _recording(monkeypatch: pytest.MonkeyPatch, cls: type[Any]) -> list[FloatArray]:
    """The loss values an instance of ``cls`` gives the users, round by round (before privacy)."""
    seen: list[FloatArray] = []
    evaluate: Callable[..., Losses] = cls.evaluate

    def recorded(self: Any, *args: Any) -> Losses:
        out = evaluate(self, *args)
        seen.append(np.array(out.values, dtype=np.float64))
        return out

    monkeypatch.setattr(cls, "evaluate", recorded)
    return seen


@pytest.mark.parametrize(("name", "delta"), [("one-point", 1e-3), ("one-point", None), ("two-point", 1e-3)])
def test_ldp_releases_the_noise_of_its_ledger(
    name: str, delta: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each user's message minus its clipped loss, over the true sensitivity of the message (Zheng
    et al. 2020, §3.1 and §3.2; learners.ldp.recipes): Algorithm 1 on Bernoulli arms, a loss
    in ``[0, 1]`` (sensitivity 1; Gaussian, or Laplace at ``δ = None``); Algorithm 2, the difference
    ``f(x_1) - f(x_2)`` clipped to ``±2ρG`` plus ``n_tᵀ(x_1 - x_2)`` (sensitivity ``4ρG``). Against the
    single event of the run's ledger (every user's is the same)."""
    R, T = 40, 250
    rng = np.random.default_rng(7)
    if name == "one-point":
        seen = _recording(monkeypatch, BernoulliArms)
        base = _Received(5)
        learner = ldp.make_learner(name, 1.0, delta=delta, base=base)
        res = ldp.run(
            learner, BernoulliArms(np.linspace(0.2, 0.8, 5)), T, rng=rng, repetitions=R, checkpoints=4
        )
        # the message minus the loss clipped to [0, 1], over the message's sensitivity 1 - 0
        x = (np.stack(base.messages) - np.clip(np.stack(seen)[:, :, 0], 0.0, 1.0)) / 1.0
    else:
        seen = _recording(monkeypatch, QuadraticLoss)
        messages: list[FloatArray] = []
        gradient = ldp.two_point_gradient

        def received(m: FloatArray, u: FloatArray, rho: float) -> FloatArray:
            messages.append(np.array(m, dtype=np.float64))
            return gradient(m, u, rho)

        monkeypatch.setattr(ldp_engine, "two_point_gradient", received)  # where the engine reads it
        inst, rho = strongly_convex_quadratic(3), 0.05
        learner = ldp.make_learner(name, 1.0, delta=delta, rho=rho)
        res = ldp.run(learner, inst, T, rng=rng, repetitions=R, checkpoints=4)
        values = np.stack(seen)
        bound = 2 * rho * inst.lipschitz
        x = (np.stack(messages) - np.clip(values[:, :, 0] - values[:, :, 1], -bound, bound)) / (2 * bound)
    (event,) = res.ledgers[1].ledger
    mechanism = event.mechanism
    assert isinstance(mechanism, AdditiveNoise)
    if isinstance(mechanism.noise, Laplace):
        _laplace_check(x.ravel(), float(mechanism.noise.scale) / float(mechanism.sensitivity), name)
    else:
        _gaussian_check(x.ravel(), _gaussian_ratio(mechanism), name)


def test_ldp_two_point_refuses_a_release_other_than_its_ledgers() -> None:
    """Algorithm 2's released noise is ``σ‖x_1 - x_2‖`` on a difference clipped to ``±bound``: a gap
    whose norm is not the ledger's ``2ρ``, or a clip wider than half the ledger's sensitivity, would
    release another mechanism than the ledger's, and is refused."""
    inst, rho = strongly_convex_quadratic(3), 0.05
    noise = ldp.noise_of(ldp.make_learner("two-point", 1.0, delta=1e-3, rho=rho), inst, 100)
    u = unit_sphere(np.random.default_rng(1), (50,), 3)
    bound = 2 * rho * inst.lipschitz
    ldp.privatize_difference(np.zeros(50), 2 * rho * u, bound, noise, np.random.default_rng(2))
    with pytest.raises(ParameterError, match="gap"):
        ldp.privatize_difference(np.zeros(50), rho * u, bound, noise, np.random.default_rng(2))
    with pytest.raises(ParameterError, match="bound"):
        ldp.privatize_difference(np.zeros(50), 2 * rho * u, 2 * bound, noise, np.random.default_rng(2))


# ---------------------------------------------------------------------------------------
# ldp: Algorithms 5 and 3 of Zheng et al. (2020), three messages per user
# ---------------------------------------------------------------------------------------

LDP_CONTEXTUAL = [
    ("ldp-linucb", "identity", {}),
    ("ldp-linucb", "identity", {"calibration": "classic"}),
    ("ldp-linucb", "identity", {"mode": "code"}),
    ("ldp-glm", "logistic", {}),
    ("ldp-glm", "poisson", {"calibration": "classic"}),
]


@pytest.mark.parametrize(
    ("name", "link", "kwargs"),
    LDP_CONTEXTUAL,
    ids=["linucb-exact", "linucb-classic", "linucb-code", "glm-logistic-exact", "glm-poisson-classic"],
)
def test_ldp_contextual_releases_the_noise_of_its_ledger(
    name: str, link: str, kwargs: dict[str, Any]
) -> None:
    """Each user's messages minus their noiseless values (the observer's running sums, differenced
    round by round; Zheng et al. 2020, §4.1 Algorithm 5, §4.2 Algorithm 3), over the true ℓ2
    sensitivities for contexts of norm at most 1 (learners.ldp.recipes): the upper
    triangle of ``x xᵀ`` with the diagonal, ``√2`` (the lower triangle mirrors it exactly); ``clip(y,
    ±Y) x``, ``2Y``; ``z x`` with ``|z| = |xᵀθ̂| <= 1``, 2; the gradient ``clip(g(xᵀθ̂) - y, ±C) x``,
    ``2C``. Against the events of the run's ledger, one per message in that order."""
    R, T, d, Y, C = 20, 150, 3, 1.5, 0.8
    seed = 17 + LDP_CONTEXTUAL.index((name, link, kwargs))  # fresh normals for every case
    inst = ldp_synthetic_linear(d, 4) if link == "identity" else glm_bandit(link, d, 4)
    bound = {"reward_bound": Y} if name == "ldp-linucb" else {"gradient_bound": C}
    learner = ldp.make_learner(name, 1.0, delta=1e-3, **bound, **kwargs)
    records: list[ldp.ContextualRecord] = []
    res = ldp.run(
        learner,
        inst,
        T,
        rng=np.random.default_rng(seed),
        repetitions=R,
        checkpoints=4,
        observer=records.append,
    )
    assert [rec.round for rec in records] == list(range(1, T + 1))
    assert all(np.array_equal(rec.matrix, rec.matrix.swapaxes(-1, -2)) for rec in records)  # B_t mirrored
    # round t's noise: the noise of the sums at t minus that at t - 1 (the sums start at 0)
    matrix = np.diff(np.stack([rec.matrix - rec.exact_matrix for rec in records]), axis=0, prepend=0.0)
    vector = np.diff(np.stack([rec.vector - rec.exact_vector for rec in records]), axis=0, prepend=0.0)
    iu, ju = np.triu_indices(d)
    released = [
        ("matrix", matrix[..., iu, ju] / math.sqrt(2)),
        ("vector", vector / (2 * Y if name == "ldp-linucb" else 2.0)),
    ]
    if name == "ldp-glm":
        gradient = []
        for rec in records:
            assert rec.gradient is not None
            assert rec.exact_gradient is not None
            gradient.append(rec.gradient - rec.exact_gradient)
        released.append(("gradient", np.stack(gradient) / (2 * C)))
    events = res.ledgers[1].ledger
    assert len(events) == len(released)
    assert all(e.count == 1 for e in events)
    for (what, x), event in zip(released, events, strict=True):
        _gaussian_check(x.ravel(), _gaussian_ratio(event.mechanism), f"{name} {what}")


def test_ldp_observer_is_contextual_only() -> None:
    """The observer records the contextual learners' messages; the others refuse it rather than ignore it."""
    with pytest.raises(ParameterError, match="observer"):
        ldp.run(
            ldp.make_learner("two-point", 1.0, delta=1e-3),
            strongly_convex_quadratic(3),
            10,
            rng=np.random.default_rng(0),
            observer=lambda record: None,
        )

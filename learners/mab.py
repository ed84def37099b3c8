"""Private batched successive elimination for multi-armed bandits, in every trust model.

Algorithm 1 of the distributed MAB paper (Chowdhury & Zhou 2023, §3): batch ``b`` pulls each
active arm ``l(b) = η^b`` times (``η`` = ``growth``, 2 or 4), one new user per pull; the ``l(b)``
rewards of an arm go through the protocol of the algorithm's
:class:`~accounting.calibration.Variant` (:mod:`learners.protocols`, parameters from
:func:`accounting.calibration.protocol_parameters`); the analyzer's estimate ``μ̂ = z / l(b)`` and
the radius ``β(b)`` of eq. (2) eliminate every arm whose UCB is below the largest LCB
(non-strict, so the empirical best arm survives). The last, partial batch is never aggregated nor
released: Algorithm 1 exits at ``T`` without aggregating, since a partial batch carries too little noise.

Algorithms (:data:`ALGORITHMS`):

======================  ==============================  ==========================================
name                    variant (theorem)               noise
======================  ==============================  ==========================================
``dist-dp-se``          ``POLYA_SHARES`` (1)            Pólya shares, secure aggregation, ε-DP
``dist-rdp-se``         ``SKELLAM_SHARES`` (2)          Skellam shares (scale ``s``), RDP
``shuffle-dp-se``       ``SHUFFLED_POLYA`` (3)          Pólya shares at ε/2, shuffling, ε-DP
``dist-cdp-se``         ``DISCRETE_GAUSSIAN_SHARES``    discrete Gaussian shares (scale ``s``),
                        (4)                             zCDP
``cdp-se``              ``CENTRAL_LAPLACE`` (5)         discrete Laplace at a trusted server
``ldp-se``              ``LOCAL_LAPLACE`` (6)           discrete Laplace at every user (local DP)
``dp-se``               —                               Sajed & Sheffet 2019 as the experiments
                                                        run it (§4.7)
``se``                  —                               no privacy (§4.8)
======================  ==============================  ==========================================

**Vectorization.** The state of all ``R`` repetitions is held in arrays with a leading axis ``R``
(active sets ``(R, K)``, estimates, radii); the noise of a batch is one draw for all its
aggregates, and the user-level protocol releases all of a batch's aggregates in one call. The
pulls of a batch are array operations per repetition and arm block, reading the repetition's
reward table (:class:`learners.environments.RewardTable`) :data:`CHUNK` rounds at a time, so
memory stays bounded for any horizon. No Python loop runs over users or rounds.

**Rewards and regret.** Repetition ``r`` reads the table keyed by ``tapes[r]``: independent rewards
per arm and round, as the authors' released code (§7) draws them, and the same table for every
algorithm given a fresh generator of the same seed (common random numbers across algorithms).
The pseudo-regret ``Σ_t Δ_{a_t}`` is exact; the realized regret ``Σ_t r_t(a*) - r_t(a_t)`` reads
the best arm's column of the same table.

**Noise paths.** ``noise="total"`` (the default, fast) draws each aggregate's *total* noise directly
(equal in distribution: ``n`` Pólya(1/n, β) differences sum to ``Lap_Z`` with decay ``β``; Skellam
shares to the Skellam with ``n`` times the rates; local discrete Laplace shares to a difference of
negative binomials; discrete Gaussian shares are summed) and releases ``y = (Σ x̂ + η) mod m`` to
the analyzer; ``noise="shares"`` runs :class:`learners.protocols.Protocol` user by user (every
share, secure aggregation, the shuffler, dropouts with top-up). Both encode every reward with
randomized rounding (``x̂_i``) and decode with the analyzer's ``τ`` rule, so decoding failures
happen as they would in deployment.

**Dropouts** (``noise="shares"``, deviation from the paper, which has none). The survivors of a
batch top up the noise of the users who dropped out, so the release carries exactly the noise that
was accounted; its sum holds the rewards of the ``n'`` survivors only, so the estimate is
``μ̂ = z / n'`` and the radius of eq. (2) is taken with ``n'`` users (Hoeffding over ``n'``
rewards, the noise bound ``N`` over ``n'``), per arm. Dividing by ``l(b)`` would bias every
estimate by the dropout fraction.

**Privacy: the ledger is written while the run runs.** Each release composes its events into an
:class:`~accounting.accountant.Accountant` at the moment it is made (:meth:`Protocol.release`, or
:meth:`Protocol.account` on the fast path; DP-SE's Laplace event likewise). Every user takes part
in one batch of one arm, so a user's whole ledger is the release of their batch (parallel
composition over unique users, Chowdhury & Zhou (2023), §2; returning users would need their
App. I): the run keeps one ledger per released batch size, with the number of releases of that
size (:attr:`RunResult.ledgers`). The partial last batch is never released
and never appears. :attr:`RunResult.privacy` answers those ledgers — the guarantee of what was
released — and states the closed form of the variant's theorem beside it only where the theorem's
hypotheses hold (Theorems 4, 5 and 6, App. F and H, assume ``ε < 1``). :func:`exact_privacy` answers
them by the tightest exact route whatever route ``privacy`` was asked for (the results folder
reports both, :mod:`learners.results`): for Dist-RDP-SE at ``ε = 1`` the theorem's closed form
(Lemma 3 and Lemma 10) is ``(5.23, 10^-6)``-DP, the exact answer of the same ledgers ``4.89``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, cached_property
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from accounting.accountant import PUBLISHED, ROUTES, Accountant, Event
from accounting.accountant import route_name as accounting_route_name
from accounting.answers import Question, answer
from accounting.errors import UnsupportedError
from accounting.mechanisms import AdditiveNoise, DistributedSum
from accounting.neighbouring import Neighbouring
from accounting.noise import DiscreteLaplace, Laplace, Polya
from accounting.papers.distributed_dp_mab import ProtocolParameters, Variant, protocol_parameters
from learners import privacy
from learners.environments import MABInstance, RewardTable
from learners.errors import ParameterError, ParameterTypeError, ProtocolError
from learners.protocols import BIG_MODULUS, Protocol, analyze, encode

__all__ = [
    "ALGORITHMS",
    "CHUNK",
    "EXACT_BUDGET",
    "NOISE_PATHS",
    "Algorithm",
    "Exact",
    "Learner",
    "Privacy",
    "RunResult",
    "confidence_radius",
    "exact_privacy",
    "make_learner",
    "privacy_of",
    "route_name",
    "run",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

#: Rounds of one repetition processed at once (bounds the memory of a batch: ~10 arrays of this).
CHUNK = 2**21


@dataclass(frozen=True)
class Algorithm:
    """An entry of :data:`ALGORITHMS`."""

    #: The protocol variant of the distributed MAB paper (``None`` for ``dp-se`` and ``se``).
    variant: Variant | None
    #: The display label of the paper's figures.
    label: str
    #: Whether the algorithm takes an ε (every one but ``se``).
    private: bool = True

    @property
    def scaled(self) -> bool:
        """Whether it takes a scaling factor ``s`` (Skellam and discrete Gaussian shares)."""
        return self.variant is not None and self.variant.scaled


#: The algorithms: name -> (variant, display label, ...). The names are what configs and the CLI use.
ALGORITHMS: dict[str, Algorithm] = {
    "dist-dp-se": Algorithm(Variant.POLYA_SHARES, "Dist-DP-SE"),
    "dist-rdp-se": Algorithm(Variant.SKELLAM_SHARES, "Dist-RDP-SE"),
    "shuffle-dp-se": Algorithm(Variant.SHUFFLED_POLYA, "Shuffle-DP-SE"),
    "dist-cdp-se": Algorithm(Variant.DISCRETE_GAUSSIAN_SHARES, "Dist-CDP-SE"),
    "cdp-se": Algorithm(Variant.CENTRAL_LAPLACE, "CDP-SE"),
    "ldp-se": Algorithm(Variant.LOCAL_LAPLACE, "LDP-SE"),
    "dp-se": Algorithm(None, "DP-SE"),
    "se": Algorithm(None, "SE", private=False),
}

#: ``"total"``: each aggregate's total noise in one draw; ``"shares"``: the user-level protocol.
NOISE_PATHS = ("total", "shares")


def _real(name: str, value: object, low: float, high: float = math.inf, *, open_low: bool = True) -> float:
    """A real in ``(low, high]`` (``[low, high]`` with ``open_low=False``), by accounting's validator."""
    x = v.real(name, value)
    if not ((x > low if open_low else x >= low) and x <= high):
        lo = "(" if open_low else "["
        hi = f"{high:g}]" if math.isfinite(high) else "inf)"
        raise ParameterError(name, value, f"a real number in {lo}{low:g}, {hi}")
    return x


@dataclass(frozen=True)
class Learner:
    """One algorithm with all its settings (a value; build it with :func:`make_learner`).

    Attributes
    ----------
    name : str
        A key of :data:`ALGORITHMS`.
    epsilon : float or None
        The privacy level ε (``None`` only for ``"se"``).
    scale : float or None
        The scaling factor ``s >= 1`` of the Skellam and discrete Gaussian variants (Theorems 2
        and 4; ``None`` otherwise).
    growth : int or None
        ``η`` in ``l(b) = η^b`` (2 or 4; Figures 1–3, 5 use 4, Figure 4 uses 2). For ``dp-se`` it is
        the ``dc`` of ``Δ_e = dc^{-e}`` (the authors' code uses 2 in every figure). ``None``: 4, and 2 for
        ``dp-se``.
    forgetting : bool
        Estimate from the current batch only (Algorithm 1). ``False`` uses all past batches of the
        arm: ``μ̂ = Σ_b z_b / Σ_b n_b`` with radius ``sqrt(ln(4|Φ|b²/p)/(2L)) + Σ_b N_b / L``,
        ``L = Σ_b n_b`` (``n_b`` the users whose rewards are in ``z_b``).
    p_beta : float
        ``p`` in the radius β of eq. (2) (experiments: 0.1).
    p_tau : float or None
        ``p`` in the analyzer's accuracy ``τ`` (``None``: the theory's ``1/T``; the released code
        uses 0.1).
    crs : float
        Multiplier of the confidence radius (experiments: 1).
    noise : {"total", "shares"}
        See the module docstring.
    exact : bool
        Draw noise with the exact integer samplers (slow; for the ``"shares"`` path and audits).
    dropout : float
        With ``noise="shares"``: the fraction of each aggregate's users (rounded down, chosen at
        random) whose message never arrives; the survivors top the noise up
        (:class:`~learners.protocols.Protocol`) and the estimate divides by the survivors (see the
        module docstring). Below 1/2, so secure aggregation's majority threshold can always
        recover the dropped users' masks.
    """

    name: str
    epsilon: float | None = None
    scale: float | None = None
    growth: int | None = None
    forgetting: bool = True
    p_beta: float = 0.1
    p_tau: float | None = None
    crs: float = 1.0
    noise: str = "total"
    exact: bool = False
    dropout: float = 0.0

    def __post_init__(self) -> None:
        if self.name not in ALGORITHMS:
            raise ParameterError("algorithm", self.name, "one of " + ", ".join(ALGORITHMS))
        algorithm = ALGORITHMS[self.name]
        if algorithm.private:
            if self.epsilon is None:
                raise ParameterError("epsilon", None, f"a privacy level ε > 0 (required by '{self.name}')")
            object.__setattr__(self, "epsilon", _real("epsilon", self.epsilon, 0.0))
        elif self.epsilon is not None:
            raise ParameterError("epsilon", self.epsilon, f"None for the non-private '{self.name}'")
        if algorithm.scaled:
            if self.scale is None:
                raise ParameterError("scale", None, f"a scaling factor s >= 1 (required by '{self.name}')")
            object.__setattr__(self, "scale", _real("scale", self.scale, 1.0, open_low=False))
        elif self.scale is not None:
            raise ParameterError("scale", self.scale, f"None ('{self.name}' has no scaling factor s)")
        if self.growth is None:
            object.__setattr__(self, "growth", 2 if self.name == "dp-se" else 4)
        growth = v.integer("growth", self.growth)
        if growth not in (2, 4):
            raise ParameterError("growth", self.growth, "2 or 4 (batch size l(b) = growth**b)")
        object.__setattr__(self, "growth", growth)
        if not isinstance(self.forgetting, bool):
            raise ParameterTypeError("forgetting", self.forgetting, "a bool")
        object.__setattr__(self, "p_beta", _real("p_beta", self.p_beta, 0.0, 1.0))
        if self.p_tau is not None:
            object.__setattr__(self, "p_tau", _real("p_tau", self.p_tau, 0.0, 1.0))
        object.__setattr__(self, "crs", _real("crs", self.crs, 0.0))
        if self.noise not in NOISE_PATHS:
            raise ParameterError("noise", self.noise, "one of " + ", ".join(NOISE_PATHS))
        if not isinstance(self.exact, bool):
            raise ParameterTypeError("exact", self.exact, "a bool")
        if self.exact and self.noise != "shares":
            raise ParameterError(
                "exact", self.exact, "False unless noise='shares' (exact samplers draw shares)"
            )
        object.__setattr__(self, "dropout", _real("dropout", self.dropout, 0.0, 0.5, open_low=False))
        if self.dropout >= 0.5:
            raise ParameterError("dropout", self.dropout, "a fraction in [0, 1/2)")
        if self.dropout and self.noise != "shares":
            raise ParameterError("dropout", self.dropout, "0 unless noise='shares' (dropouts are user-level)")

    @property
    def variant(self) -> Variant | None:
        """The protocol variant of the distributed MAB paper (``None`` for ``dp-se`` and ``se``)."""
        return ALGORITHMS[self.name].variant

    @property
    def eta(self) -> int:
        """The resolved ``growth``."""
        assert self.growth is not None
        return self.growth

    @property
    def label(self) -> str:
        """A display label such as ``Dist-RDP-SE(s=10)``."""
        base = ALGORITHMS[self.name].label
        return f"{base}(s={self.scale:g})" if self.scale is not None else base


def make_learner(name: str, epsilon: float | None = None, **params: Any) -> Learner:
    """A validated :class:`Learner`; unknown settings are an error naming them."""
    known = set(Learner.__dataclass_fields__) - {"name", "epsilon"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ParameterError(unknown[0], params[unknown[0]], "one of " + ", ".join(sorted(known)))
    return Learner(name, epsilon, **params)


# ---------------------------------------------------------------------------------------
# Parameters of one batch
# ---------------------------------------------------------------------------------------


def _variant(learner: Learner) -> Variant:
    variant = learner.variant
    assert variant is not None
    return variant


@cache
def _params(learner: Learner, n: int, horizon: int) -> ProtocolParameters:
    assert learner.epsilon is not None
    return protocol_parameters(
        _variant(learner), learner.epsilon, n, horizon, scale=learner.scale, p=learner.p_tau
    )


@cache
def _protocol(learner: Learner, n: int, horizon: int) -> Protocol:
    return Protocol(_params(learner, n, horizon), exact=learner.exact)


def _dpse_noise(learner: Learner) -> Laplace:
    """DP-SE's noise on a sum of rewards in ``[0, 1]``: ``Laplace(1/ε)`` (Sajed & Sheffet 2019; spec
    §4.7), the scale exact."""
    assert learner.epsilon is not None
    return Laplace(1 / Fraction(learner.epsilon))


def _dpse_event(noise: Laplace) -> Event:
    """DP-SE's release: the sum of rewards (sensitivity 1: one user's reward in ``[0, 1]``) plus
    ``noise``, the very law the release drew from (Sajed & Sheffet 2019, as the authors' code runs it; the
    ledger holds what was drawn, never a stand-in)."""
    return Event(AdditiveNoise(noise, 1.0))


# ---------------------------------------------------------------------------------------
# Privacy: the run's ledgers, answered
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Privacy:
    """What a run spent: its ledgers answered, and the variant's theorem where it applies.

    Attributes
    ----------
    model : str
        ``"distributed"``, ``"shuffle"``, ``"central"``, ``"local"`` or ``"none"``.
    notion : str
        The guarantee the variant's theorem states: ``"pure"`` (ε-DP), ``"rdp"`` (Theorem 2),
        ``"zcdp"`` (Theorem 4), or ``"none"``.
    epsilon : float
        The certified ε of the run: the largest, over the released batch sizes, of the ε of that
        size's ledger (a user is in one batch: parallel composition). ``inf`` for ``"se"``; 0 if
        nothing was released.
    delta : float
        The δ that goes with ``epsilon`` (0 for the pure notion, answered by the pure route).
    batches : tuple of (int, float, str)
        ``(n, ε, route)`` for each released batch size ``n``: the ledger's ε and the route that
        certified it (an :class:`~accounting.accountant.Accountant` route, or the published bound
        on the released mechanism the accountant fell back to, see ``message``).
    theorem : int or None
        The theorem of the distributed MAB paper the variant cites (``None``: ``dp-se``, ``se``).
    theorem_holds : bool
        Whether the theorem's hypotheses hold at this ε (Theorems 4, 5 and 6 assume ``ε < 1``;
        Chowdhury & Zhou (2023), App. F and H). Always ``True`` for ``dp-se``, ``False`` for ``se``.
    theorem_epsilon : float or None
        The theorem's own closed form, worst over the released batches, where its hypotheses
        hold: ε for the pure variants and DP-SE, Lemma 3 at the actual ``g`` converted by
        Lemma 10 (Theorem 2), Lemma 4's ρ converted (Theorem 4). ``None`` where they do not.
    rho : float or None
        Theorem 4's ρ (Lemma 4, worst batch) where the theorem holds.
    statement : str
        The variant and what its theorem says.
    message : str
        Empty when the theorem holds and every ledger was answered by the accountant; otherwise
        what does not hold and where the reported numbers come from.
    """

    model: str
    notion: str
    epsilon: float
    delta: float
    batches: tuple[tuple[int, float, str], ...]
    theorem: int | None
    theorem_holds: bool
    theorem_epsilon: float | None
    rho: float | None
    statement: str
    message: str = ""


_MODELS = {
    Variant.POLYA_SHARES: "distributed",
    Variant.SKELLAM_SHARES: "distributed",
    Variant.SHUFFLED_POLYA: "shuffle",
    Variant.DISCRETE_GAUSSIAN_SHARES: "distributed",
    Variant.CENTRAL_LAPLACE: "central",
    Variant.LOCAL_LAPLACE: "local",
}

_STATEMENTS = {
    Variant.POLYA_SHARES: "Theorem 1: (ε, 0)-DP; Pólya shares sum to Lap_Z(g/ε) under secure aggregation",
    Variant.SKELLAM_SHARES: "Theorem 2: RDP of the Skellam sum by Lemma 3 (integer orders, actual g), "
    "converted to (ε, δ) by Lemma 10",
    Variant.SHUFFLED_POLYA: "Theorem 3: (ε, 0)-DP via shuffling; ε/2 for the modular sum plus ε/2 for "
    "relaxed SecAgg",
    Variant.DISCRETE_GAUSSIAN_SHARES: "Theorem 4: ρ-zCDP of the discrete Gaussian sum by Lemma 4, "
    "converted to (ε, δ) (CKS 2020); assumes ε < 1",
    Variant.CENTRAL_LAPLACE: "Theorem 5: (ε, 0) central DP; the trusted server adds Lap_Z(g/ε); "
    "assumes ε < 1",
    Variant.LOCAL_LAPLACE: "Theorem 6: (ε, 0) local DP; every message carries Lap_Z(g/ε); assumes ε < 1",
}

#: The published bound on the mechanism each non-pure variant releases, an accountant route:
#: Lemma 3 (Agarwal, Kairouz & Liu 2021, Thm 3.5; integer orders, actual ``g``) and Lemma 4
#: (Kairouz, Liu & Steinke 2021a, Prop. 13). Theorems 2 and 4 are these lemmas instantiated
#: (so the accountant evaluates the lemmas directly, with each batch's actual n and g); the lemmas hold at
#: every ε, it is Theorem 4 that assumes ``ε < 1``.
_PUBLISHED = {
    Variant.SKELLAM_SHARES: "published:skellam-akl",
    Variant.DISCRETE_GAUSSIAN_SHARES: "published:ddg-kls",
}


def _answer(
    events: tuple[Event, ...], neighbouring: Neighbouring, dps: int, delta: float, route: str
) -> tuple[float, str] | None:
    """The accountant's certified ε of a ledger by ``route`` (``None`` if it cannot account it),
    through :func:`accounting.answers.answer` (memoized, cached on disk)."""
    try:
        got = answer(Question(events, neighbouring, dps, delta, route))
    except UnsupportedError:
        return None
    return float(got), route if route.startswith("published") else got.route


def route_name(route: object) -> str:
    """``route`` if it names an accountant route (the accountant's own check, so both agree).

    Raises
    ------
    ParameterError, ParameterTypeError
        Naming ``route`` and the valid routes.
    """
    if not isinstance(route, str):
        raise ParameterTypeError("route", route, "an accounting route name (" + ", ".join(ROUTES) + ")")
    return accounting_route_name(route)


def _check_ledgers(learner: object, ledgers: object, delta: object) -> tuple[float, list[int]]:
    """The checked ``delta`` and the sorted batch sizes of ``ledgers`` (see :func:`privacy_of`)."""
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.mab.Learner")
    d = _real("delta", delta, 0.0, 1.0)
    if d >= 1:
        raise ParameterError("delta", delta, "a probability in (0, 1)")
    if not isinstance(ledgers, Mapping):
        raise ParameterTypeError("ledgers", ledgers, "a mapping of batch size to accounting Accountant")
    sizes = sorted(v.integer("ledgers", n, minimum=1) for n in ledgers)
    for n in sizes:
        if not isinstance(ledgers[n], Accountant):
            raise ParameterTypeError(f"ledgers[{n}]", ledgers[n], "an accounting.accountant.Accountant")
    return d, sizes


def privacy_of(
    learner: Learner,
    ledgers: Mapping[int, Accountant],
    delta: float = 1e-6,
    route: str = "auto",
    budget: float | None = None,
) -> Privacy:
    """The privacy of a run from its ledgers: one per released batch size (parallel composition).

    Each ledger is answered by the :class:`~accounting.accountant.Accountant`: by the pure route
    for the pure variants and DP-SE (``δ = 0``), by ``route`` at ``delta`` for the RDP and zCDP
    variants. Where the accountant cannot answer a ledger by ``route`` (a Skellam sum too wide for
    its exact sums), it is answered by the published bound on its mechanism (Lemma 3 or 4, which
    hold at every ε) and ``message`` says so. The theorem's closed form is reported beside it
    only where the theorem's hypotheses hold.

    Parameters
    ----------
    learner : Learner
    ledgers : mapping of int to Accountant
        The ledger of one user of each released batch size (:attr:`RunResult.ledgers`).
    delta : float
        δ in ``(0, 1)`` of the ``(ε, δ)`` report of the RDP and zCDP variants.
    route : str
        The accountant route for the RDP and zCDP variants: ``"auto"`` (the tightest exact route;
        a discrete Gaussian sum over a batch of ~10^5 users takes minutes), or a cheaper one such
        as ``"published"`` (Lemma 3 / Lemma 4 on the released mechanism).
    budget : float, optional
        With ``route="auto"``, the largest estimated cost (:meth:`Accountant.pld_cost`) of a ledger
        answered exactly; costlier ones by the published bound (``message`` says so). ``None``:
        no limit (a run with ``exact_privacy = "cheap"``, a quick run, passes
        :data:`learners.privacy.CHEAP_BUDGET`).
    """
    d, sizes = _check_ledgers(learner, ledgers, delta)
    how = route_name(route)
    if budget is not None:
        budget = _real("budget", budget, 0.0, open_low=False)
    if learner.name == "se":
        return Privacy(
            "none", "none", math.inf, 0.0, (), None, False, None, None,
            "no privacy (non-private elimination)", "a non-private run: nothing is guaranteed",
        )  # fmt: skip
    assert learner.epsilon is not None
    variant = learner.variant
    notion = variant.notion if variant is not None else "pure"
    pure = notion == "pure"
    published = _PUBLISHED.get(variant) if variant is not None else None
    # each ledger by the route ("auto" without a budget: the exact answer at any cost), Lemma 3 / 4
    # where the route refuses it
    answered = privacy.exact(
        {n: ledgers[n] for n in sizes},
        d,
        "pure" if pure else how,
        pure=pure,
        fallback=published,
        budget=budget,
    )
    per = list(answered.batches)
    holds = variant.hypotheses_hold(learner.epsilon) if variant is not None else True
    theorem_epsilon: float | None = None
    rho: float | None = None
    notes: list[str] = []
    if holds and published is None:
        theorem_epsilon = learner.epsilon if sizes else 0.0  # (ε, 0)-DP: Theorems 1, 3, 5, 6, DP-SE
    elif holds and published is not None:
        closed = [
            _answer(ledgers[n].ledger, ledgers[n].neighbouring, ledgers[n].dps, d, published) for n in sizes
        ]
        theorem_epsilon = max((c[0] if c is not None else math.inf for c in closed), default=0.0)
        if variant is Variant.DISCRETE_GAUSSIAN_SHARES:
            kls = PUBLISHED[published.split(":", 1)[1]]
            rho = max(
                (
                    kls.value(e.mechanism, None)
                    for n in sizes
                    for e in ledgers[n].ledger
                    if isinstance(e.mechanism, DistributedSum)
                ),
                default=None,
            )
    else:
        assert variant is not None
        notes.append(
            f"Theorem {variant.theorem} assumes ε < 1 (Chowdhury & Zhou 2023) and this run has "
            f"ε = {learner.epsilon:g}: "
            "its hypotheses do not hold, so its closed form is not reported; epsilon is the guarantee "
            "of what was released, answered from the run's ledgers"
        )
    if answered.message:
        notes.append(answered.message)
    statement = (
        _STATEMENTS[variant]
        if variant is not None
        else "DP-SE (Sajed & Sheffet 2019): (ε, 0) central DP, Laplace(1/ε) on each sum of rewards"
    )
    return Privacy(
        model=_MODELS[variant] if variant is not None else "central",
        notion=notion,
        epsilon=max((e for _, e, _ in per), default=0.0),
        delta=0.0 if pure else d,
        batches=tuple(per),
        theorem=variant.theorem if variant is not None else None,
        theorem_holds=holds,
        theorem_epsilon=theorem_epsilon,
        rho=rho,
        statement=statement,
        message="; ".join(notes),
    )


#: The budget of :func:`exact_privacy` (:data:`learners.privacy.EXACT_BUDGET`).
EXACT_BUDGET = privacy.EXACT_BUDGET

#: The exact guarantee of a run's ledgers (:class:`learners.privacy.Exact`).
Exact = privacy.Exact


def exact_privacy(
    learner: Learner,
    ledgers: Mapping[int, Accountant],
    delta: float = 1e-6,
    budget: float | None = EXACT_BUDGET,
    mode: str = "auto",
) -> privacy.Exact:
    """The exact guarantee of a run's ledgers: one per released batch size (parallel composition).

    The pure variants and DP-SE are answered by the pure route (``δ = 0``): their theorems are
    pure ε-DP and the pure ε of the ledger is exact. The RDP and zCDP variants (Skellam and
    discrete Gaussian sums) are answered at ``delta`` by ``mode`` (:func:`learners.privacy.exact`:
    ``"auto"``, the accountant's tightest exact route, whatever the route :func:`privacy_of` was
    asked for; ``"cheap"``; or a route). A ledger the route cannot answer (a Skellam sum too wide
    for the exact sums), or whose estimated cost (:meth:`Accountant.pld_cost`) exceeds the mode's
    budget, is answered by the published bound on its mechanism (Lemma 3 or 4, which hold at
    every ε) and ``message`` says so.

    Parameters
    ----------
    learner : Learner
    ledgers : mapping of int to Accountant
        The ledger of one user of each released batch size (:attr:`RunResult.ledgers`).
    delta : float
        δ in ``(0, 1)`` of the ``(ε, δ)`` report of the RDP and zCDP variants.
    budget : float or None
        The largest estimated cost that mode ``"auto"`` answers exactly (:data:`EXACT_BUDGET`;
        ``None``: no limit).
    mode : str
        An exact mode of :mod:`learners.privacy` other than ``"off"``.
    """
    d, sizes = _check_ledgers(learner, ledgers, delta)
    if budget is not None:
        budget = _real("budget", budget, 0.0, open_low=False)
    if learner.name == "se":
        return privacy.Exact(
            math.inf, 0.0, "none", (math.inf, math.inf), (), "a non-private run: nothing is guaranteed"
        )
    variant = learner.variant
    return privacy.exact(
        {n: ledgers[n] for n in sizes},
        d,
        mode,
        pure=variant is None or variant.notion == "pure",
        fallback=_PUBLISHED.get(variant) if variant is not None else None,
        budget=budget,
    )


@dataclass(frozen=True, eq=False)
class RunResult:
    """The outcome of :func:`run` for ``R`` repetitions (arrays read-only).

    Attributes
    ----------
    learner : Learner
    horizon : int
    rounds : numpy.ndarray of int64, shape (C,)
        Checkpoints: regret after this many rounds.
    pseudo_regret : numpy.ndarray of float64, shape (R, C)
        ``Σ_{s <= t} Δ_{a_s}``.
    realized_regret : numpy.ndarray of float64, shape (R, C)
        ``Σ_{s <= t} r_s(a*) - r_s(a_s)``, with the rewards of every arm drawn independently at
        every round (the repetition's :class:`~learners.environments.RewardTable`).
    released : numpy.ndarray of int64, shape (R,)
        Aggregates released per repetition.
    final_arms : numpy.ndarray of int64, shape (R,)
        Active arms left at the end.
    estimates : numpy.ndarray of float64, shape (R, K)
        The last released estimate ``μ̂`` of each arm (``nan`` for an arm never released).
    batch_sizes : tuple of int
        The distinct batch sizes released in some repetition.
    releases : mapping of int to int
        Aggregates released of each batch size (over arms and repetitions).
    bits : int
        Bits each user sends (the largest over released batches; 0 without a protocol).
    delta : float
        The δ of :attr:`privacy`.
    route : str
        The accountant route :attr:`privacy` answers the RDP and zCDP ledgers by.
    dropped, topped_up : numpy.ndarray of int64, shape (R,)
        Users who dropped out, and shares the survivors drew for them (``noise="shares"``).
    """

    learner: Learner
    horizon: int
    rounds: IntArray
    pseudo_regret: FloatArray
    realized_regret: FloatArray
    released: IntArray
    final_arms: IntArray
    estimates: FloatArray
    batch_sizes: tuple[int, ...]
    releases: Mapping[int, int]
    bits: int
    delta: float
    route: str
    dropped: IntArray
    topped_up: IntArray
    _ledgers: Mapping[int, Accountant] = field(repr=False)

    @property
    def ledgers(self) -> dict[int, Accountant]:
        """The ledger of one user of each released batch size (copies: the run's own are its record).

        Written while the run ran: each release composed its events into the ledger of its batch
        size when it was made. Releases of one size are identical (same parameters), so one
        ledger per size holds all a user of such a batch spent; :attr:`releases` counts them.
        """
        return {n: acc.copy() for n, acc in self._ledgers.items()}

    def ledger(self, batch_size: int) -> Accountant:
        """The ledger of one user of a released batch of ``batch_size`` (a copy)."""
        n = v.integer("batch_size", batch_size, minimum=1)
        if n not in self._ledgers:
            raise ParameterError(
                "batch_size",
                batch_size,
                "a released batch size: one of " + ", ".join(map(str, self.batch_sizes)),
            )
        return self._ledgers[n].copy()

    @cached_property
    def privacy(self) -> Privacy:
        """What the run spent (:func:`privacy_of` on its ledgers), computed on first access.

        Answering a ledger exactly can take long for a wide lattice (a Skellam or discrete Gaussian
        sum over a large batch); answers are memoized per process, so a ledger is answered once.
        """
        return privacy_of(self.learner, self._ledgers, self.delta, self.route)


# ---------------------------------------------------------------------------------------
# Confidence radii
# ---------------------------------------------------------------------------------------


def _noise_bound(learner: Learner, log2: FloatArray, n: int, horizon: int) -> FloatArray:
    """``N``: a ``1 - 2q`` bound on ``|n_a(b)|`` (noise + rounding error of the sum, in reward
    units), with ``log2 = ln(2/q)`` (the noise and rounding terms of the theorems' proofs,
    Chowdhury & Zhou (2023), App. D-H, some constants our reconstruction; ``g`` is the actual
    precision)."""
    eps = learner.epsilon
    variant = learner.variant
    if variant is None or eps is None:
        return np.zeros_like(log2)
    if variant is Variant.SHUFFLED_POLYA:
        eps = eps / 2
    root = np.sqrt(log2)
    if variant in (Variant.POLYA_SHARES, Variant.SHUFFLED_POLYA, Variant.CENTRAL_LAPLACE):
        return np.asarray(math.sqrt(2) / eps * root + log2 / eps, dtype=np.float64)
    if variant is Variant.SKELLAM_SHARES:
        g = _params(learner, n, horizon).g
        assert learner.scale is not None
        return np.asarray((2 / eps + math.sqrt(2) / (learner.scale * eps)) * root + math.sqrt(2) / g * log2)
    if variant is Variant.DISCRETE_GAUSSIAN_SHARES:
        assert learner.scale is not None
        return np.asarray(math.sqrt(2) * (1 + 1 / learner.scale) / eps * root, dtype=np.float64)
    # Theorem 6, local discrete Laplace (Lemma 5 with c = 1.6, Chowdhury & Zhou (2023), App. H.2)
    local = 1.6 / eps * np.maximum(np.sqrt(2 * n * log2), 2 * log2)
    return np.asarray(math.sqrt(2) / eps * root + local, dtype=np.float64)


def confidence_radius(learner: Learner, active: ArrayLike, batch: int, size: int, horizon: int) -> FloatArray:
    """``β(b)`` of eq. (2) (Chowdhury & Zhou (2023), §3, Lemma 2) with forgetting, for ``active`` arms
    ``|Φ(b)|`` (an array).

    ``crs·( sqrt(ln(4|Φ|b²/p)/(2l)) + N(p/(|Φ|b²))/l )`` with ``N`` from the variant's theorem; for
    ``dp-se`` DP-SE's radius as the authors' code computes it (with ``R_e = size``). ``size`` is the number
    of users whose rewards the estimate holds (``l(b)``, or the survivors of a batch with dropouts).
    """
    k = np.asarray(active, dtype=np.float64)
    pulls = v.integer("size", size, minimum=1)
    b = v.integer("batch", batch, minimum=1)
    hoeffding, noise = _radius_terms(learner, k, b, pulls, v.integer("horizon", horizon, minimum=2))
    return _radius(learner.crs, hoeffding, noise, np.float64(pulls))


def _radius(crs: float, hoeffding: FloatArray, noise: FloatArray, pulls: Any) -> FloatArray:
    """``crs·( sqrt(L/(2 l)) + N/l )`` for ``l`` pulls with Hoeffding log term ``L`` and noise bound ``N``."""
    return np.asarray(crs * (np.sqrt(hoeffding / (2 * pulls)) + noise / pulls), dtype=np.float64)


def _radius_terms(
    learner: Learner, k: FloatArray, b: int, size: int, horizon: int
) -> tuple[FloatArray, FloatArray]:
    """``(L, N)``: the log term of Hoeffding and the noise bound of batch ``b`` of ``size`` pulls."""
    p = learner.p_beta
    if learner.name == "dp-se":
        assert learner.epsilon is not None
        return np.log(8 * k * b * b / p), np.log(4 * k * b * b / p) / learner.epsilon
    return np.log(4 * k * b * b / p), _noise_bound(learner, np.log(2 * k * b * b / p), size, horizon)


def _dpse_size(learner: Learner, k: FloatArray, e: int) -> IntArray:
    """``R_e`` of DP-SE (Sajed & Sheffet 2019, in the authors' code's form): pulls per arm in epoch ``e``,
    ``Δ_e = dc^{-e}``."""
    assert learner.epsilon is not None
    p = learner.p_beta
    gap = float(learner.eta) ** -e
    hoeffding = 32 * np.log(8 * k * e * e / p) / gap**2
    privacy = 8 * np.log(4 * k * e * e / p) / (gap * learner.epsilon)
    # A tiny ε or p_beta makes R_e overflow int64 (even inf): no run has 2^62 rounds, so cap it there.
    return (1 + np.minimum(np.maximum(hoeffding, privacy), 2.0**62).astype(np.int64)).astype(np.int64)


# ---------------------------------------------------------------------------------------
# The engine
# ---------------------------------------------------------------------------------------


@dataclass
class _Segment:
    """The pulls of one repetition in one batch: per-arm sums and the realized regret."""

    sum_x: FloatArray
    sum_xhat: IntArray | None
    values: FloatArray | None
    realized_at: FloatArray  # realized regret of the segment after each requested offset
    realized: float  # over the whole segment


def _segment(
    table: RewardTable,
    start: int,
    arms: IntArray,
    size: int,
    pulls: int,
    best: int,
    offsets: IntArray,
    g: int | None,
    rng: np.random.Generator,
    keep: bool,
) -> _Segment:
    """Pull ``arms`` in blocks of ``size`` (block ``j`` is arm ``arms[j]``) for ``pulls`` rounds.

    Round ``i`` of the segment is round ``start + i`` of the repetition: its reward is read from the
    table's column of the arm pulled, and the best arm's column gives the realized regret, at most
    :data:`CHUNK` rounds at a time; with ``g`` every reward is also encoded (randomized rounding
    from ``rng``).
    """
    k = arms.size
    sum_x = np.zeros(k)
    sum_xhat = np.zeros(k, dtype=np.int64) if g is not None else None
    values = np.zeros((k, size)) if keep else None
    realized_at = np.zeros(offsets.size)
    running = 0.0
    for c0 in range(0, pulls, CHUNK):
        c1 = min(c0 + CHUNK, pulls)
        blocks = np.arange(c0 // size, (c1 - 1) // size + 1)
        lo = np.maximum(c0, blocks * size)
        hi = np.minimum(c1, (blocks + 1) * size)
        x = np.empty(c1 - c0)
        diff = np.zeros(c1 - c0)
        for j, a0, a1 in zip(blocks.tolist(), lo.tolist(), hi.tolist(), strict=True):
            arm = int(arms[j])
            rewards = table.rewards(arm, start + a0, start + a1)
            x[a0 - c0 : a1 - c0] = rewards
            if arm != best:  # r_t(a*) - r_t(a*) = 0 on the best arm's own blocks
                diff[a0 - c0 : a1 - c0] = table.rewards(best, start + a0, start + a1) - rewards
        starts = lo - c0
        sum_x[blocks] += np.add.reduceat(x, starts)
        if sum_xhat is not None:
            assert g is not None
            sum_xhat[blocks] += np.add.reduceat(encode(x, g, rng), starts)
        if values is not None:
            values.reshape(-1)[c0:c1] = x
        cum = np.cumsum(diff)
        inside = (offsets > c0) & (offsets <= c1)
        realized_at[inside] = running + cum[offsets[inside] - c0 - 1]
        running += float(cum[-1])
    return _Segment(sum_x, sum_xhat, values, realized_at, running)


def _pseudo(gaps: FloatArray, size: int, offsets: IntArray) -> FloatArray:
    """Pseudo-regret after ``offsets`` rounds of blocks of ``size`` pulls with these ``gaps``."""
    k = gaps.size
    cum = np.concatenate(([0.0], np.cumsum(gaps * size)))
    j = offsets // size
    return np.asarray(cum[j] + gaps[np.minimum(j, k - 1)] * (offsets - j * size), dtype=np.float64)


def _total_noise(learner: Learner, p: ProtocolParameters, rng: np.random.Generator, count: int) -> IntArray:
    """``count`` draws of one aggregate's total noise (equal in law to the sum of all shares)."""
    if learner.variant is Variant.CENTRAL_LAPLACE:
        assert p.server_noise is not None
        return np.asarray(p.server_noise.sample(rng, count), dtype=np.int64)
    assert p.share is not None
    if learner.variant is Variant.LOCAL_LAPLACE:
        # n i.i.d. Lap_Z shares: each a difference of geometrics, so the sum is NB(n) - NB(n).
        assert isinstance(p.share, DiscreteLaplace)
        nb = Polya(p.users, math.exp(-1 / float(p.share.scale)))
        return np.asarray(nb.sample(rng, count) - nb.sample(rng, count), dtype=np.int64)
    # Pólya(1/n, β) differences sum to Lap_Z with decay β (Fact 1), Skellam shares to the Skellam
    # with n times the rates, discrete Gaussian shares to their n-fold sum: DistributedSum's law.
    total = DistributedSum(p.share, p.users, p.g).total_noise
    return np.asarray(total.sample(rng, count), dtype=np.int64)


class _State:
    """The learner's state for all repetitions (leading axis ``R``), and the run's ledgers."""

    def __init__(
        self, learner: Learner, means: FloatArray, horizon: int, rounds: IntArray, tables: list[RewardTable]
    ) -> None:
        R, K = means.shape
        self.learner = learner
        self.horizon = horizon
        self.rounds = rounds
        self.tables = tables
        self.gaps = means.max(axis=1, keepdims=True) - means
        self.best = np.argmax(means, axis=1)
        self.active = np.ones((R, K), dtype=bool)
        self.t = np.zeros(R, dtype=np.int64)
        self.pseudo_total = np.zeros(R)
        self.realized_total = np.zeros(R)
        self.pseudo = np.zeros((R, rounds.size))
        self.realized = np.zeros((R, rounds.size))
        self.done = np.zeros(R, dtype=bool)
        self.released = np.zeros(R, dtype=np.int64)
        self.dropped = np.zeros(R, dtype=np.int64)
        self.topped_up = np.zeros(R, dtype=np.int64)
        self.estimates = np.full((R, K), np.nan)
        self.bits = 0
        # one ledger per released batch size, written at release time, and the releases it covers
        self.ledgers: dict[int, Accountant] = {}
        self.releases: dict[int, int] = {}
        # cumulative estimates (forgetting=False): per-arm sums and users, per-repetition noise bound
        self.z_sum = np.zeros((R, K))
        self.pulls_sum = np.zeros((R, K))
        self.noise_sum = np.zeros(R)

    def offsets(self, r: int, pulls: int) -> tuple[IntArray, IntArray]:
        """Checkpoint indices inside the next ``pulls`` rounds of repetition ``r``, and their offsets."""
        t0 = int(self.t[r])
        lo, hi = np.searchsorted(self.rounds, [t0 + 1, t0 + pulls + 1])
        idx = np.arange(lo, hi)
        return idx, (self.rounds[idx] - t0).astype(np.int64)

    def advance(
        self, r: int, arms: IntArray, size: int, pulls: int, seg: _Segment, idx: IntArray, offsets: IntArray
    ) -> None:
        """Record ``pulls`` rounds of blocks of ``size`` (checkpoints ``idx`` at ``offsets``)."""
        pseudo = _pseudo(self.gaps[r, arms], size, np.append(offsets, pulls))
        self.pseudo[r, idx] = self.pseudo_total[r] + pseudo[:-1]
        self.realized[r, idx] = self.realized_total[r] + seg.realized_at
        self.pseudo_total[r] += float(pseudo[-1])
        self.realized_total[r] += seg.realized
        self.t[r] += pulls

    def record(self, n: int, ledger: Accountant, releases: int) -> None:
        """Keep the ledger of a batch-release of size ``n`` that released ``releases`` aggregates.

        Every release of size ``n`` has the same parameters, hence the same events: the first one
        is the ledger of a user of any of them, and later ones are checked against it.
        """
        known = self.ledgers.get(n)
        if known is None:
            self.ledgers[n] = ledger
        elif known.ledger != ledger.ledger:  # pragma: no cover - parameters depend on n only
            raise ProtocolError(f"two releases of batches of {n} users composed different events")
        self.releases[n] = self.releases.get(n, 0) + releases


def _check_run(
    learner: object,
    instances: object,
    horizon: object,
    tapes: object,
    rng: object,
    checkpoints: object,
) -> tuple[list[MABInstance], int, list[np.random.Generator], IntArray]:
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.mab.Learner (see make_learner)")
    if not isinstance(tapes, Sequence) or not tapes:
        raise ParameterError("tapes", tapes, "a non-empty sequence of numpy Generators (one per repetition)")
    for i, gen in enumerate(tapes):
        if not isinstance(gen, np.random.Generator):
            raise ParameterTypeError(f"tapes[{i}]", gen, "a numpy.random.Generator")
    R = len(tapes)
    if isinstance(instances, MABInstance):
        insts = [instances] * R
    elif isinstance(instances, Sequence) and len(instances) == R:
        insts = list(instances)
        for i, inst in enumerate(insts):
            if not isinstance(inst, MABInstance):
                raise ParameterTypeError(f"instances[{i}]", inst, "a learners.environments.MABInstance")
    else:
        raise ParameterError("instances", instances, f"one MABInstance or a sequence of R={R} of them")
    K = insts[0].arms
    if any(inst.arms != K for inst in insts):
        raise ParameterError("instances", [i.arms for i in insts], "instances with the same number of arms")
    T = v.integer("horizon", horizon, minimum=2)
    if T < K:
        raise ParameterError("horizon", horizon, f"an integer >= K = {K} (every arm is pulled once)")
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    C = v.integer("checkpoints", checkpoints, minimum=1)
    rounds = np.unique(-(-np.arange(1, min(C, T) + 1, dtype=np.int64) * T // min(C, T)))
    return insts, T, list(tapes), rounds


def run(
    learner: Learner,
    instances: MABInstance | Sequence[MABInstance],
    horizon: int,
    *,
    tapes: Sequence[np.random.Generator],
    rng: np.random.Generator,
    checkpoints: int = 1000,
    delta: float = 1e-6,
    route: str = "auto",
) -> RunResult:
    """Run ``learner`` for ``R = len(tapes)`` repetitions of ``horizon`` rounds.

    Parameters
    ----------
    learner : Learner
        The algorithm and its settings (:func:`make_learner`).
    instances : MABInstance or sequence of MABInstance
        One instance for every repetition, or one per repetition (same ``K``).
    horizon : int
        ``T >= K``.
    tapes : sequence of numpy.random.Generator
        Repetition ``r`` reads the reward table keyed by two words drawn from ``tapes[r]``
        (:meth:`~learners.environments.RewardTable.draw`): give every algorithm a fresh generator
        from the same seed and they see the same rewards (common random numbers).
    rng : numpy.random.Generator
        The randomness of the protocol (rounding, noise, masks, dropouts) for all repetitions.
    checkpoints : int
        Regret is recorded after ``ceil(c T / C)`` rounds, ``c = 1..C``.
    delta : float
        δ in ``(0, 1)`` of the ``(ε, δ)`` report of the RDP and zCDP variants.
    route : str
        The accountant route :attr:`RunResult.privacy` answers the RDP and zCDP ledgers by (see
        :func:`privacy_of`; the pure variants are answered by the pure route).

    Returns
    -------
    RunResult
    """
    insts, T, gens, rounds = _check_run(learner, instances, horizon, tapes, rng, checkpoints)
    d = _real("delta", delta, 0.0, 1.0)
    if d >= 1:
        raise ParameterError("delta", delta, "a probability in (0, 1)")
    how = route_name(route)
    means = np.stack([np.asarray(inst.means, dtype=np.float64) for inst in insts])
    tables = [RewardTable.draw(inst, gen) for inst, gen in zip(insts, gens, strict=True)]
    st = _State(learner, means, T, rounds, tables)
    b = 0
    while not st.done.all():
        b += 1
        k = st.active.sum(axis=1)
        for last in np.flatnonzero(~st.done & (k == 1)).tolist():
            _finish(st, last, rng)
        live = np.flatnonzero(~st.done)
        if not live.size:
            break
        if learner.name == "dp-se":
            sizes = _dpse_size(learner, k[live].astype(np.float64), b)
        else:
            sizes = np.full(live.size, learner.eta**b, dtype=np.int64)
        g = _params(learner, int(sizes[0]), T).g if learner.variant is not None else None
        complete: list[int] = []
        segments: dict[int, _Segment] = {}
        for i, r in enumerate(live.tolist()):
            arms = np.flatnonzero(st.active[r])
            size = int(sizes[i])
            want = arms.size * size
            pulls = int(min(want, T - st.t[r]))
            idx, offsets = st.offsets(r, pulls)
            seg = _segment(
                st.tables[r], int(st.t[r]), arms, size, pulls, int(st.best[r]), offsets, g, rng,
                keep=learner.noise == "shares" and pulls == want,
            )  # fmt: skip
            st.advance(r, arms, size, pulls, seg, idx, offsets)
            if pulls < want:
                st.done[r] = True  # the partial last batch: never aggregated, never released
            else:
                complete.append(r)
                segments[r] = seg
        if complete:
            _release(st, b, np.array(complete), sizes[np.searchsorted(live, complete)], segments, rng)
        st.done |= st.t >= T

    def frozen(a: NDArray[Any]) -> NDArray[Any]:
        a.setflags(write=False)
        return a

    return RunResult(
        learner=learner,
        horizon=T,
        rounds=frozen(rounds),
        pseudo_regret=frozen(st.pseudo),
        realized_regret=frozen(st.realized),
        released=frozen(st.released),
        final_arms=frozen(st.active.sum(axis=1).astype(np.int64)),
        estimates=frozen(st.estimates),
        batch_sizes=tuple(sorted(st.releases)),
        releases=MappingProxyType(dict(sorted(st.releases.items()))),
        bits=st.bits,
        delta=d,
        route=how,
        dropped=frozen(st.dropped),
        topped_up=frozen(st.topped_up),
        _ledgers=MappingProxyType(dict(sorted(st.ledgers.items()))),
    )


def _finish(st: _State, r: int, rng: np.random.Generator) -> None:
    """One arm left: pull it until ``T`` (nothing is released: no decision depends on it)."""
    arm = np.flatnonzero(st.active[r])
    remaining = int(st.horizon - st.t[r])
    idx, offsets = st.offsets(r, remaining)
    if arm[0] == st.best[r]:
        seg = _Segment(np.zeros(1), None, None, np.zeros(offsets.size), 0.0)
    else:
        table, start, best = st.tables[r], int(st.t[r]), int(st.best[r])
        seg = _segment(table, start, arm, remaining, remaining, best, offsets, None, rng, False)
    st.advance(r, arm, remaining, remaining, seg, idx, offsets)
    st.done[r] = True


def _dropouts(rng: np.random.Generator, shape: tuple[int, ...], fraction: float) -> BoolArray:
    """``floor(fraction · n)`` random users of each of the ``shape[0]`` aggregates drop out."""
    order = np.argsort(rng.random(shape), axis=1)
    return np.asarray(order < math.floor(fraction * shape[1]), dtype=np.bool_)


def _release(
    st: _State,
    b: int,
    reps: IntArray,
    sizes: IntArray,
    segments: dict[int, _Segment],
    rng: np.random.Generator,
) -> None:
    """Aggregate, account, estimate and eliminate for the repetitions ``reps`` that finished batch ``b``.

    Each released aggregate's events are composed into a ledger here, as it is released: one
    ledger per batch-release (all its aggregates, over arms and repetitions, have the same
    parameters; a user is in one of them), kept per batch size by :meth:`_State.record`.
    """
    learner = st.learner
    active = st.active[reps]
    k = active.sum(axis=1).astype(np.float64)
    per_rep = active.sum(axis=1)
    z = np.zeros(active.shape)
    sum_x = np.zeros(active.shape)
    for i, r in enumerate(reps.tolist()):
        sum_x[i, active[i]] = segments[r].sum_x
    # users whose rewards each estimate holds: l(b), or the survivors of a batch with dropouts
    users = np.where(active, sizes[:, None], 0).astype(np.float64)
    if learner.name == "se":
        z = sum_x
    elif learner.name == "dp-se":
        # one law, built once: it draws the released noise and is the ledger's event
        law = _dpse_noise(learner)
        z[active] = sum_x[active] + law.sample(rng, int(active.sum()))
        for n in np.unique(sizes).tolist():
            st.record(int(n), Accountant().compose(_dpse_event(law)), int(per_rep[sizes == n].sum()))
    else:
        n = int(sizes[0])
        protocol = _protocol(learner, n, st.horizon)
        # the protocol's own parameters: the fast path's total noise is drawn from the very object
        # whose mechanisms protocol.account composes into the ledger
        p = protocol.params
        st.bits = max(st.bits, p.bits)
        ledger = Accountant()
        if learner.noise == "total":
            xhat = np.zeros(active.shape, dtype=np.int64)
            for i, r in enumerate(reps.tolist()):
                seg_xhat = segments[r].sum_xhat
                assert seg_xhat is not None
                xhat[i, active[i]] = seg_xhat
            noisy = xhat[active] + _total_noise(learner, p, rng, int(active.sum()))
            if p.m >= BIG_MODULUS:  # residues of a modulus this large need Python integers
                noisy = noisy.astype(object)
            z[active] = analyze(np.mod(noisy, p.m), n, p.g, p.tau, p.m)
            protocol.account(ledger)  # the release just made: what the protocol would compose
        else:
            # every aggregate of the batch, over repetitions and arms, in one protocol release
            blocks = [segments[r].values for r in reps.tolist()]
            values = np.concatenate([x for x in blocks if x is not None])
            dropped = _dropouts(rng, values.shape, learner.dropout) if learner.dropout else None
            rel = protocol.release(values, rng, accountant=ledger, dropped=dropped)
            z[active] = rel.estimate
            users[active] = n - rel.dropped
            first = np.concatenate(([0], np.cumsum(per_rep)[:-1]))
            st.dropped[reps] += np.add.reduceat(rel.dropped, first)
            st.topped_up[reps] += np.add.reduceat(rel.topped_up.sum(axis=1), first)
        st.record(n, ledger, int(active.sum()))
    st.released[reps] += per_rep
    hoeffding, noise = _radius_terms(learner, k, b, int(sizes[0]), st.horizon)
    if learner.forgetting:
        sums, pulls, bound = z, users, noise
    else:
        st.z_sum[reps] += z
        st.pulls_sum[reps] += users
        st.noise_sum[reps] += noise
        sums, pulls, bound = st.z_sum[reps], st.pulls_sum[reps], st.noise_sum[reps]
    pulls = np.where(active, pulls, 1.0)  # inactive arms: no estimate (avoid 0/0)
    mu = sums / pulls
    beta = _radius(learner.crs, hoeffding[:, None], bound[:, None], pulls)
    lcb = np.where(active, mu - beta, -np.inf)
    keep = active & (mu + beta >= lcb.max(axis=1, keepdims=True))
    st.estimates[reps] = np.where(active, mu, st.estimates[reps])
    st.active[reps] = keep

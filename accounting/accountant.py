"""The :class:`Accountant`: the one door every guarantee goes through.

An *event* describes what happened — a mechanism (:class:`~accounting.mechanisms.AdditiveNoise`,
:class:`~accounting.mechanisms.DistributedSum`, a vector sum bounded in ℓ2,
:class:`~accounting.mechanisms.DistributedVectorSum`, whose guarantee is an RDP curve), a cited guarantee
(:class:`~accounting.mechanisms.PureDP`, :class:`~accounting.mechanisms.ApproxDP`), an
:class:`Event` (a mechanism self-composed ``count`` times) or a :class:`Composed` group of
events — and the accountant decides how to account it, following the split of Google's
``dp_accounting`` (``DpEvent`` / ``PrivacyAccountant``). What it cannot account under its
neighbouring relation it refuses up front (:meth:`Accountant.supports`,
:class:`~accounting.errors.UnsupportedEventError`).

**Neighbouring relation.** Every event is accounted under the ledger's relation
(:class:`~accounting.neighbouring.Neighbouring`; replace-one by default, where
``dp_accounting`` defaults to add-or-remove): each mechanism is asked through
:meth:`~accounting.mechanisms.Mechanism.under`, which gives its worst pairs under that relation
(a distributed sum under add-remove loses the removed user's noise share too), and a cited
guarantee is accepted only under the relation of its theorem.

**Routes.** Every answer is a certified :class:`~accounting.certified.Enclosure` that names its
route:

``"pld"``
    exact privacy-loss distributions: one event once is answered exactly
    (:mod:`accounting.divergence`, or the cited guarantee's worst-case pair); compositions of
    Gaussian mechanisms exactly (they are again a Gaussian mechanism); compositions of symmetric
    log-concave lattice mechanisms by certified PLD convolution (:mod:`accounting.pld`).
``"rdp"``
    exact Rényi curves summed over the events, converted by Lemma 10 (Canonne–Kamath–Steinke
    2020 / Balle et al. 2020) optimised over real orders.
``"zcdp"``
    ρ of each event summed, converted by the CKS optimal conversion.
``"pure"``
    pure ε summed (only when every event has one).
``"published"`` or ``"published:<name>"``
    the closed form of a paper (:data:`PUBLISHED`), each event by the named bound (or by the
    first that applies to it), cited guarantees by their cited values: the guarantee a theorem
    states, which the exact routes never exceed.
``"auto"``
    the smallest certified upper bound among the exact routes it tries, chosen by expected cost
    (:meth:`Accountant._answer`): the PLD route first when it is within budget (its precision
    raised for a tiny δ), the RDP route unless the PLD's enclosure already leaves no route more
    than :data:`AUTO_MARGIN` to win; the answer says which won and what each gave
    (``candidates``).

Cited ``(ε_i, δ_i)`` guarantees with ``δ_i > 0`` have no Rényi, zCDP or pure form: the routes other
than ``"pld"`` account them by basic composition (Dwork et al. 2006; Dwork & Roth 2014,
Thm 3.16), ``ε = ε_rest(δ - Σδ_i) + Σε_i``.

**One composition.** Every sum of the ledger — pure ε, ρ, RDP curves at an order, the ε and δ of
basic composition — is :func:`accounting.composition.sum_up`: summed exactly and rounded up once
(:meth:`Accountant.pure_epsilon`, :meth:`Accountant.rho`, :meth:`Accountant.rdp` expose them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any, Literal

from mpmath import mp

from accounting import bounds, composition, conversion
from accounting import validate as v
from accounting.certified import DEFAULT_DPS, Enclosure, float_down
from accounting.composition import RdpCurve, sum_up
from accounting.errors import (
    AccountingError,
    ParameterError,
    ParameterTypeError,
    UnsupportedError,
    UnsupportedEventError,
)
from accounting.mechanisms import (
    AdditiveNoise,
    AddRemoveSum,
    ApproxDP,
    DistributedSum,
    DistributedVectorSum,
    Mechanism,
    PureDP,
)
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    TAIL_SUM_SIGMA,
    Binomial,
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Geometric,
    Laplace,
    LatticeNoise,
    NoiseDistribution,
    Polya,
    Skellam,
    SumOfDiscreteGaussians,
)
from accounting.storage import digest, strict_json_loads
from accounting.subsampling import PoissonSampled, SampledWithoutReplacement

__all__ = [
    "PUBLISHED",
    "ROUTES",
    "Accountant",
    "Composed",
    "Event",
    "Neighbouring",
    "PublishedBound",
    "SelfComposed",
    "event_from_dict",
    "event_to_dict",
    "route_name",
]

#: ``"auto"`` computes the PLD route first when its estimated cost (:meth:`Accountant.pld_cost`,
#: 1-3.5 s per unit measured) is at most this, and otherwise only when the RDP route failed. Chosen
#: so that the PLD route and then the RDP route (a few seconds for lattice noise) finish within
#: about 20 s: 10^9 Skellam releases (3.9 units) took 12 s, 10^12 (5.2 units) 28 s.
AUTO_PLD_BUDGET = 5.0

#: ``"auto"`` skips the RDP route when the PLD's enclosure ``[lo, hi]`` has ``hi <= lo (1 + margin)``:
#: no certified route can then improve on it by more than this relative margin.
AUTO_MARGIN = 1e-3

ROUTES = ("auto", "pld", "rdp", "zcdp", "pure", "published")
"""The routes; ``"published:<name>"`` selects one bound of :data:`PUBLISHED`."""

_EVENTS = (
    "an AdditiveNoise, DistributedSum, DistributedVectorSum, PureDP, ApproxDP, PoissonSampled, "
    "SampledWithoutReplacement, "
    "Event or Composed"
)

Release = Mechanism | PoissonSampled | SampledWithoutReplacement
"""What one ledger entry runs: a mechanism, a cited guarantee, or a release on a sampled batch."""


def _is_release(x: object) -> bool:
    return isinstance(x, Mechanism | PoissonSampled | SampledWithoutReplacement) and not isinstance(
        x, AddRemoveSum
    )


@dataclass(frozen=True)
class Event:
    """A mechanism applied ``count`` times, adaptively (``dp_accounting``'s ``SelfComposedDpEvent``)."""

    mechanism: Release
    count: int = 1

    def __post_init__(self) -> None:
        if not _is_release(self.mechanism):
            raise ParameterTypeError("mechanism", self.mechanism, _EVENTS)
        object.__setattr__(self, "count", v.integer("count", self.count, minimum=1))


SelfComposed = Event


@dataclass(frozen=True, init=False)
class Composed:
    """Events run one after another, adaptively (``dp_accounting``'s ``ComposedDpEvent``)."""

    events: tuple[Release | Event | Composed, ...]

    def __init__(self, events: Iterable[Release | Event | Composed]) -> None:
        items = tuple(events)
        for i, e in enumerate(items):
            if not (_is_release(e) or isinstance(e, Event | Composed)):
                raise ParameterTypeError(f"events[{i}]", e, _EVENTS)
        object.__setattr__(self, "events", items)


EventLike = Release | Event | Composed


def flatten(event: object, count: int = 1) -> list[Event]:
    """The ledger entries of ``event`` run ``count`` times (a :class:`Composed` group repeated
    ``count`` times is its members each ``count`` times more: the order of adaptive composition
    does not change any route's answer)."""
    k = v.integer("count", count, minimum=1)
    if isinstance(event, Event):
        return [Event(event.mechanism, event.count * k)]
    if isinstance(event, Composed):
        return [Event(e.mechanism, e.count * k) for item in event.events for e in flatten(item)]
    if _is_release(event):
        return [Event(event, k)]  # type: ignore[arg-type]
    raise ParameterTypeError("event", event, _EVENTS)


# -- published closed forms -------------------------------------------------------------------

Notion = Literal["rdp-integer", "zcdp", "pure"]


@dataclass(frozen=True)
class PublishedBound:
    """A closed form a paper proves for a family of mechanisms, selectable as a route.

    ``value(mechanism, alpha)`` is an upper bound (a float rounded up) on the mechanism's RDP at
    the integer order ``alpha`` (``notion == "rdp-integer"``), its ρ (``"zcdp"``) or its pure ε
    (``"pure"``; ``alpha`` is then ``None``). Parameters that a closed form needs as floats are
    rounded toward less noise (a larger bound).
    """

    name: str
    citation: str
    notion: Notion
    applies: Callable[[Mechanism], bool]
    value: Callable[[Mechanism, int | None], float]


def _central_noise(m: Mechanism) -> tuple[NoiseDistribution, float] | None:
    if isinstance(m, DistributedVectorSum):
        return m.total_noise, m.l2
    if isinstance(m, DistributedSum):
        try:
            return m.total_noise, m.sensitivity
        except UnsupportedError:
            return None
    if isinstance(m, AdditiveNoise):
        return m.noise, m.sensitivity
    return None


def _noise_is(
    kind: type[NoiseDistribution], extra: Callable[[Any], bool] = lambda _: True
) -> Callable[[Mechanism], bool]:
    def applies(m: Mechanism) -> bool:
        central = _central_noise(m)
        return central is not None and isinstance(central[0], kind) and extra(central[0])

    return applies


def _noise(m: Mechanism) -> Any:
    central = _central_noise(m)
    assert central is not None
    return central[0]


def _sens(m: Mechanism) -> Any:
    central = _central_noise(m)
    assert central is not None
    return central[1]


def _query(m: Mechanism) -> dict[str, Any]:
    """The sensitivity arguments of a lattice closed form: the integer ``Δ``, or a vector's ℓ2 and shape."""
    if isinstance(m, DistributedVectorSum):
        return m.bound_arguments
    return {"sensitivity": int(_sens(m))}


def _down(x: float | Fraction) -> float:
    """A parameter as a float rounded down (less noise: a larger bound)."""
    if isinstance(x, Fraction):
        with mp.workdps(40):
            exact = mp.mpf(x.numerator) / x.denominator
            f = float_down(exact)
            # mpf division rounds to nearest at 40 digits: step down if the float may exceed x.
            return f if Fraction(f) <= x else math.nextafter(f, -math.inf)
    return float(x)


def _skellam_symmetric(n: Skellam) -> bool:
    return Fraction(n.mu1) == Fraction(n.mu2) and n.offset == 0


PUBLISHED: dict[str, PublishedBound] = {
    b.name: b
    for b in (
        PublishedBound(
            "skellam-akl",
            "Agarwal, Kairouz & Liu 2021 (Skellam mechanism) RDP bound; Lemma 3 of the distributed "
            "MAB paper, at integer orders",
            "rdp-integer",
            _noise_is(Skellam, _skellam_symmetric),
            lambda m, a: bounds.skellam_rdp_akl(int(a or 2), _down(Fraction(_noise(m).mu1) * 2), **_query(m)),
        ),
        PublishedBound(
            "ddg-kls",
            "Kairouz, Liu & Steinke 2021 Prop. 13 (sum of discrete Gaussians); Lemma 4 of the "
            "distributed MAB paper",
            "zcdp",
            _noise_is(SumOfDiscreteGaussians),
            lambda m, _: bounds.sum_discrete_gaussians_rho_kls(
                _down(_noise(m).sigma), _noise(m).count, **_query(m)
            ),
        ),
        PublishedBound(
            "discrete-gaussian-cks",
            "Canonne, Kamath & Steinke 2020 Thm 14: ρ = Δ²/(2σ²)",
            "zcdp",
            _noise_is(DiscreteGaussian),
            lambda m, _: bounds.discrete_gaussian_rho_cks(_down(_noise(m).sigma), int(_sens(m))),
        ),
        PublishedBound(
            "gaussian",
            "Mironov 2017 Prop. 7: ρ = Δ²/(2σ²)",
            "zcdp",
            _noise_is(Gaussian),
            lambda m, _: bounds.gaussian_rdp(2.0, _down(_noise(m).sigma), float(_sens(m))) / 2,
        ),
        PublishedBound(
            "discrete-laplace",
            "the discrete Laplace mechanism: ε = Δ/b (Ghosh, Roughgarden & Sundararajan 2009)",
            "pure",
            _noise_is(DiscreteLaplace),
            lambda m, _: float(AdditiveNoise(_noise(m), _sens(m)).pure_epsilon().upper),
        ),
        PublishedBound(
            "laplace",
            "the Laplace mechanism: ε = Δ/b (Dwork, McSherry, Nissim & Smith 2006)",
            "pure",
            _noise_is(Laplace),
            lambda m, _: bounds.laplace_pure_epsilon(_down(_noise(m).scale), float(_sens(m))),
        ),
    )
}
"""Published closed forms, by route name (``route="published:<name>"``)."""


def route_name(route: object) -> str:
    """``route`` if it names a route of :meth:`Accountant.epsilon` (:data:`ROUTES` or
    ``"published:<name>"``), else a :class:`ParameterError` naming ``route`` and the valid ones."""
    if isinstance(route, str):
        if route in ROUTES:
            return route
        if route.startswith("published:") and route.split(":", 1)[1] in PUBLISHED:
            return route
    valid = ", ".join(ROUTES) + ", or published:<" + "|".join(PUBLISHED) + ">"
    raise ParameterError("route", route, "one of " + valid)


# -- the accountant ---------------------------------------------------------------------------


class Accountant:
    """Composes events and answers ``epsilon(delta)`` and ``delta(epsilon)``, certified.

    Parameters
    ----------
    neighbouring : Neighbouring or str
        The relation every event is accounted under (``"replace-one"`` by default; the
        sensitivities of additive-noise events are stated for it).
    dps : int
        Working precision of the exact computations (the project's one default).

    Examples
    --------
    >>> from accounting import Accountant, AdditiveNoise, Gaussian
    >>> float(Accountant().compose(AdditiveNoise(Gaussian(1.0)), 10).epsilon(1e-5))  # doctest: +SKIP
    """

    def __init__(
        self, neighbouring: Neighbouring | str = Neighbouring.REPLACE_ONE, dps: int = DEFAULT_DPS
    ) -> None:
        self.neighbouring = Neighbouring.parse(neighbouring)
        self.dps = v.dps("dps", dps)
        self._events: list[Event] = []
        self._views: list[Mechanism] = []

    # -- the ledger ---------------------------------------------------------------------
    @property
    def ledger(self) -> tuple[Event, ...]:
        """The events composed so far, in order."""
        return tuple(self._events)

    def copy(self) -> Accountant:
        """An independent ledger with the same relation, precision and events (composing into one
        leaves the other as it was)."""
        out = Accountant(self.neighbouring, self.dps)
        out._events = list(self._events)
        out._views = list(self._views)
        return out

    def _views_of(self, entries: list[Event]) -> list[Mechanism]:
        views: list[Mechanism] = []
        for e in entries:
            try:
                release = e.mechanism
                if isinstance(release, Mechanism):
                    views.append(release.under(self.neighbouring))
                else:
                    views.append(SampledView(release, self.neighbouring))
            except UnsupportedEventError:
                raise
            except UnsupportedError as err:
                raise UnsupportedEventError(str(err)) from None
        return views

    def _check_ledger(self, events: list[Event], views: list[Mechanism]) -> None:
        alone = [i for i, m in enumerate(views) if isinstance(m, AddRemoveSum)]
        if alone and (len(events) > 1 or events[0].count > 1):
            raise UnsupportedEventError(
                "a distributed sum under add-remove can be accounted only as a single release: "
                "removing a user also removes a noise share, its pairs have no certified dominating "
                "pair (PLD) or Rényi tail bound here, so a composition with it is refused"
            )

    def supports(self, event: object, count: int = 1) -> bool:
        """Whether :meth:`compose` would accept ``event`` (under this ledger's relation)."""
        try:
            entries = flatten(event, count)
            views = self._views_of(entries)
            self._check_ledger(self._events + entries, self._views + views)
        except (UnsupportedError, ParameterError, TypeError):
            return False
        return True

    def compose(self, event: EventLike, count: int = 1) -> Accountant:
        """Record ``event`` run ``count`` more times; returns ``self`` for chaining.

        Raises
        ------
        UnsupportedEventError
            When the event cannot be accounted under this ledger's relation (nothing is recorded).
        """
        entries = flatten(event, count)
        views = self._views_of(entries)
        self._check_ledger(self._events + entries, self._views + views)
        self._events.extend(entries)
        self._views.extend(views)
        return self

    # -- the ledger's sums (one composition code path) -----------------------------------
    def pure_epsilon(self) -> float:
        """``Σ count·ε_i`` of the events' pure ε, summed exactly and rounded up (``inf`` if any has none)."""
        return sum_up((e.count, m.pure_epsilon(self.dps).hi) for e, m in self._pairs())

    def rho(self) -> float:
        """``Σ count·ρ_i`` (zCDP), summed exactly and rounded up (``inf`` if any event is not zCDP)."""
        return sum_up((e.count, m.zcdp_rho(self.dps).hi) for e, m in self._pairs())

    def rdp(self, alpha: float) -> float:
        """``Σ count·D_α`` of the events at order ``alpha``, summed exactly and rounded up."""
        a = v.order("alpha", alpha)
        return self._rdp_curve(self._pairs(), strict=True)[0].at(a) if self._events else 0.0

    def _pairs(self) -> list[tuple[Event, Mechanism]]:
        return list(zip(self._events, self._views, strict=True))

    # -- answers ------------------------------------------------------------------------
    def epsilon(self, delta: float, route: str = "auto") -> Enclosure:
        """The smallest certified ε with the composition ``(ε, δ)``-DP, by ``route``."""
        d = v.open_unit("delta", delta)
        return self._answer(route_name(route), d, True)

    def delta(self, epsilon: float, route: str = "auto") -> Enclosure:
        """The smallest certified δ with the composition ``(ε, δ)``-DP, by ``route``."""
        e = v.nonnegative("epsilon", epsilon)
        return self._answer(route_name(route), e, False)

    def _answer(self, route: str, at: float, want_epsilon: bool) -> Enclosure:
        """One route's answer, or for ``"auto"`` the smallest over the routes tried (rule below).

        ``"auto"`` tries ``"pure"`` (free) and the certified routes by expected cost:

        1. the PLD route first, when every event has a dominating pair and its estimated cost
           (:meth:`pld_cost`, about a second per unit on the reference machine) is at most
           :data:`AUTO_PLD_BUDGET`; its precision is raised for a tiny δ (:meth:`_pld`);
        2. the RDP route, unless the PLD's enclosure ``[lo, hi]`` is finite with
           ``hi <= lo (1 + AUTO_MARGIN)``: every certified upper bound is at least the true ε,
           hence at least ``lo``, so no route can win by more than that margin;
        3. the PLD route after all when it was over budget and the RDP route failed.

        The answer names its route and what each route tried gave (``candidates``); the reasons
        of routes that refused are in the error when none answers.
        """
        if not self._events:
            return Enclosure.exact(0).answered("pure" if route == "auto" else route)
        if route != "auto":
            return self._by(route, at, want_epsilon).answered(route)
        tried: dict[str, Enclosure] = {}
        reasons: list[str] = []

        def attempt(name: str) -> None:
            try:
                tried[name] = self._by(name, at, want_epsilon)
            except UnsupportedError as err:
                reasons.append(f"{name}: {err}")

        attempt("pure")
        pld_first = self._pld_applies() and self.pld_cost() <= AUTO_PLD_BUDGET
        if pld_first:
            attempt("pld")
        exact = tried.get("pld")
        settled = (  # hi <= lo (1 + margin), compared exactly (not at mpmath's ambient precision)
            exact is not None
            and mp.isfinite(exact.hi)
            and mp.fsub(exact.hi, exact.lo, exact=True) <= mp.fmul(exact.lo, AUTO_MARGIN, exact=True)
        )
        if not settled:
            attempt("rdp")
        if not pld_first and "rdp" not in tried and self._pld_applies():
            attempt("pld")
        if not tried:
            raise UnsupportedError("no route can account this ledger (" + "; ".join(reasons) + ")")
        best = min(tried, key=lambda k: tried[k].hi)
        return tried[best].answered(best, {k: e.upper for k, e in tried.items()})

    def pld_cost(self) -> float:
        """A rough cost of the PLD route, in seconds on the reference machine (2 cores).

        A single release with a closed form (Gaussian, Laplace, a discrete Gaussian answered from
        its tails) and a ledger of Gaussian mechanisms cost nothing. Otherwise, per distinct event:
        its lattice window (about 20 µs per point for the certified PMFs, losses and grid) or a
        continuous pair's cells, then ``2 log2(count)`` products of grids of at most
        :data:`accounting.pld.MAX_GRID_POINTS` points (about 1 µs per point each). Measured, a unit
        is 1-3.5 s (10^9 Skellam releases: 3.9 units, 12 s); :data:`AUTO_PLD_BUDGET` and
        ``learners.mab.EXACT_BUDGET`` are in these units. ``inf`` beyond
        :data:`accounting.pld.MAX_COMPOSITIONS`, which the route refuses. It only orders the routes;
        every answer is certified whatever it says.
        """
        from accounting import pld

        if self._single() and _closed_form(self._views[0]):
            return 0.0
        if all(isinstance(_noise_of(m), Gaussian) for m in self._views):
            return 0.0  # composed in closed form (pld.gaussian_equivalent_sigma), any count
        total = 0.0
        for e, m in self._pairs():
            if e.count > pld.MAX_COMPOSITIONS:
                return math.inf
            noise = _noise_of(m)
            points = 2.0**14  # cells of a continuous or subsampled pair, cited atoms
            if isinstance(noise, DiscreteLaplace) and isinstance(m, AdditiveNoise):
                points = float(m.sensitivity) + 1  # closed-form atoms, no window
            elif isinstance(noise, LatticeNoise) and isinstance(m, AdditiveNoise):
                points = 24 * math.sqrt(noise.variance()) + 2 * float(m.sensitivity) + 1
            grid = min(pld.MAX_GRID_POINTS, points * 8 * max(1.0, math.sqrt(e.count)))
            total += 2e-5 * min(points, 1e12) + 2 * max(1, e.count.bit_length()) * 1e-6 * grid
        return total

    def _by(self, route: str, at: float, want_epsilon: bool) -> Enclosure:
        """The answer of one route, with cited ``(ε, δ)`` guarantees by basic composition."""
        pairs = self._pairs()
        if route == "pld" and self._single():
            m = pairs[0][1]
            try:
                return m.epsilon(at, self.dps) if want_epsilon else m.delta(at, self.dps)
            except UnsupportedError:
                # Too wide for the exact single-shot sum (a huge discrete Laplace scale): the grid
                # PLD has closed-form atoms for it.
                if not _symmetric_lattice(m):
                    raise
        if route == "pld" and len(pairs) == 1 and isinstance(pairs[0][1], PureDP | ApproxDP):
            return _kov(pairs[0][1], pairs[0][0].count, at, want_epsilon)
        if route == "pld":
            return self._pld(pairs, at, want_epsilon)
        approx = [(e, m) for e, m in pairs if isinstance(m, ApproxDP) and m.dlt > 0]
        rest = [(e, m) for e, m in pairs if not (isinstance(m, ApproxDP) and m.dlt > 0)]
        if not approx:
            return self._route(route, rest, at, want_epsilon)
        eps_c = sum_up((e.count, m.eps) for e, m in approx if isinstance(m, ApproxDP))
        dlt_c = sum_up((e.count, m.dlt) for e, m in approx if isinstance(m, ApproxDP))
        if want_epsilon:
            left = _subtract_down(at, dlt_c)
            if left <= 0:
                raise UnsupportedError(
                    f"the cited (ε, δ) guarantees already spend δ = {dlt_c!r} >= {at!r} (basic composition)"
                )
            inner = self._route(route, rest, left, True) if rest else Enclosure.exact(0)
            return Enclosure(inner.lo, mp.mpf(sum_up([inner.hi, eps_c])))
        left_eps = _subtract_down(at, eps_c)
        if left_eps < 0:
            raise UnsupportedError(
                f"the cited (ε, δ) guarantees already spend ε = {eps_c!r} > {at!r} (basic composition)"
            )
        inner = self._route(route, rest, left_eps, False) if rest else Enclosure.exact(0)
        return Enclosure(inner.lo, mp.mpf(min(1.0, sum_up([inner.hi, dlt_c]))))

    def _route(
        self, route: str, pairs: list[tuple[Event, Mechanism]], at: float, want_epsilon: bool
    ) -> Enclosure:
        if route == "pure":
            total = sum_up((e.count, m.pure_epsilon(self.dps).hi) for e, m in pairs)
            if math.isinf(total):
                raise UnsupportedError("an event has no pure-DP guarantee")
            return _pure_answer(total, at, want_epsilon)
        if route == "zcdp":
            rho = sum_up((e.count, m.zcdp_rho(self.dps).hi) for e, m in pairs)
            if math.isinf(rho):
                raise UnsupportedError("an event is not zCDP (its D_α/α is unbounded)")
            return _zcdp_answer(rho, at, want_epsilon)
        if route == "rdp":
            curve, terms = self._rdp_curve(pairs)
            answer = _rdp_answer(curve, at, want_epsilon, self._search(pairs))
            if mp.isinf(answer.hi) or (not want_epsilon and answer.hi >= 1):
                refused = sorted({reason for term in terms for reason in term.refused})
                why = (
                    "the exact Rényi sums were refused at every order tried: " + "; ".join(refused)
                    if refused
                    else "an event's Rényi divergence is infinite at every order tried (P is not "
                    "absolutely continuous with respect to Q)"
                )
                raise UnsupportedError(f"the RDP route certifies nothing here: {why}")
            return answer
        if route == "pld":
            return self._pld(pairs, at, want_epsilon)
        return self._published(route, pairs, at, want_epsilon)

    # -- routes -------------------------------------------------------------------------
    def _single(self) -> bool:
        return len(self._events) == 1 and self._events[0].count == 1

    def _pld_applies(self) -> bool:
        """Whether every event has a certified dominating pair (the PLD route can compose them)."""
        if self._single():
            return True
        from accounting import pld

        for e, m in self._pairs():
            if isinstance(m, AddRemoveSum):
                return False
            try:
                pld.dominating_pairs(e.mechanism, self.neighbouring)
            except UnsupportedError:
                return False
        return True

    def _rdp_curve(
        self, pairs: list[tuple[Event, Mechanism]], strict: bool = False
    ) -> tuple[RdpCurve, list[_RdpOf]]:
        """The ledger's RDP curve and its events' terms (which record the orders refused)."""
        terms = [_RdpOf(m, self.dps, strict) for _, m in pairs]
        curves = [RdpCurve.from_function(t).scale(e.count) for t, (e, _) in zip(terms, pairs, strict=True)]
        total = curves[0]
        for c in curves[1:]:
            total = total + c
        return total, terms

    @staticmethod
    def _search(pairs: list[tuple[Event, Mechanism]]) -> dict[str, Any]:
        """How hard the RDP route searches orders: closed forms are cheap, exact lattice sums are not.

        For lattice noise the orders stop at 256 (sums get costly beyond) and the search is coarse
        (24 grid points, refinement to 1e-4): any order gives a valid bound, so this only costs a
        little tightness, which the PLD route does not lose.
        """
        closed = all(
            isinstance(m, PureDP | ApproxDP | DistributedVectorSum)
            or isinstance(_noise_of(m), Gaussian | Laplace)
            for _, m in pairs
        ) and not any(isinstance(m, SampledView) for _, m in pairs)
        if closed:
            return {"alpha_max": 1e6}
        return {"alpha_max": 256.0, "grid_points": 24, "rtol": 1e-4}

    def _pld(self, pairs: list[tuple[Event, Mechanism]], at: float, want_epsilon: bool) -> Enclosure:
        from accounting import pld

        if any(isinstance(m, AddRemoveSum) for _, m in pairs):
            raise UnsupportedEventError("a distributed sum under add-remove composes by no certified PLD")
        items = [(e.mechanism, e.count) for e, _ in pairs]
        # The PLD resolves probabilities to about 10^-dps: ask for δ or ε at a δ below that and
        # it answers ∞ (10 discrete Gaussians of σ = 3 at δ = 1e-50). Raise the precision to
        # resolve the δ asked for (or, for δ(ε), the δ found) with 8 digits to spare.
        dps = max(self.dps, math.ceil(-math.log10(at)) + 8) if want_epsilon else self.dps
        dist = pld.compose_events(items, self.neighbouring, dps=dps)
        if want_epsilon:
            return dist.epsilon(at)
        answer = dist.delta(at)
        if 0 < answer.hi < mp.mpf(10) ** (8 - dps):
            needed = math.ceil(-float(mp.log10(answer.hi))) + self.dps + 8
            answer = pld.compose_events(items, self.neighbouring, dps=needed).delta(at)
        return answer

    def _published(
        self, route: str, pairs: list[tuple[Event, Mechanism]], at: float, want_epsilon: bool
    ) -> Enclosure:
        name = route.split(":", 1)[1] if ":" in route else None
        pure: list[tuple[int, float]] = []
        rhos: list[tuple[int, float]] = []
        curves: list[RdpCurve] = []
        for e, m in pairs:
            if isinstance(m, PureDP | ApproxDP):
                pure.append((e.count, m.eps))
                curves.append(RdpCurve.from_pure(m.eps).scale(e.count))
                continue
            chosen = [PUBLISHED[name]] if name else list(PUBLISHED.values())
            bound = next((b for b in chosen if b.applies(m)), None)
            if bound is None:
                raise UnsupportedError(
                    f"no published bound{' ' + repr(name) if name else ''} applies to {e.mechanism!r}"
                )
            if bound.notion == "pure":
                eps = bound.value(m, None)
                pure.append((e.count, eps))
                curves.append(RdpCurve.from_pure(eps).scale(e.count))
            elif bound.notion == "zcdp":
                rho = bound.value(m, None)
                rhos.append((e.count, rho))
                curves.append(RdpCurve.from_zcdp(rho).scale(e.count))
            else:
                curves.append(
                    RdpCurve.from_function(_PublishedRdp(bound, m), integer_only=True).scale(e.count)
                )
        if len(pure) == len(pairs):
            return _pure_answer(sum_up(pure), at, want_epsilon)
        if len(rhos) == len(pairs):
            return _zcdp_answer(sum_up(rhos), at, want_epsilon)
        total = curves[0]
        for c in curves[1:]:
            total = total + c
        return _rdp_answer(total, at, want_epsilon, {"alpha_min": 2.0} if total.integer_only else {})

    # -- serialization ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The ledger as plain data (JSON-ready): relation, precision, events and ``sha256``, a
        hash of the rest, so :meth:`from_dict` detects a ledger edited after it was written."""
        data: dict[str, Any] = {
            "format": "dpcert-ledger/1",
            "neighbouring": self.neighbouring.value,
            "dps": self.dps,
            "events": [{"count": e.count, "mechanism": mechanism_to_dict(e.mechanism)} for e in self._events],
        }
        data["sha256"] = _ledger_digest(data)
        return data

    def to_json(self, indent: int | None = 2) -> str:
        """The ledger as JSON; :meth:`from_json` rebuilds an equal accountant."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: object) -> Accountant:
        """Rebuild an accountant from :meth:`to_dict` output (validating everything).

        A ledger with a ``sha256`` must match it (a σ, an ε or a count edited by hand is refused);
        one without (written before the hash existed, or by hand) is accepted as it stands. Every
        malformed ledger is a :class:`ParameterError` / :class:`ParameterTypeError` naming the field.
        """
        if not isinstance(data, dict):
            raise ParameterError("ledger", data, "a JSON object (dpcert-ledger/1)")
        if data.get("format") != "dpcert-ledger/1":
            raise ParameterError("format", data.get("format"), "'dpcert-ledger/1'")
        for key in data:
            if key not in _LEDGER_FIELDS:
                valid = "no such field; a ledger has " + ", ".join(_LEDGER_FIELDS)
                raise ParameterError(str(key), data[key], valid)
        if "sha256" in data:
            stated = data["sha256"]
            try:
                actual: str | None = _ledger_digest(data)
            except (TypeError, ValueError, RecursionError):
                actual = None
            if stated != actual:
                raise ParameterError(
                    "sha256",
                    stated,
                    "the hash of the ledger's content: the ledger was changed after it was written (an "
                    "edited σ, ε or count?); write it again with Accountant.to_json, or delete the sha256 "
                    "field to account it as it stands",
                )
        acc = cls(Neighbouring.parse(data.get("neighbouring")), data.get("dps", DEFAULT_DPS))
        events = data.get("events")
        if not isinstance(events, list):
            raise ParameterError("events", events, "a list of {count, mechanism} objects")
        for i, item in enumerate(events):
            if not isinstance(item, dict) or set(item) != {"count", "mechanism"}:
                raise ParameterError(f"events[{i}]", item, "an object with exactly 'count' and 'mechanism'")
            count = v.count(f"events[{i}].count", item["count"])
            try:
                release = mechanism_from_dict(item["mechanism"])
            except RecursionError:
                raise ParameterError(
                    f"events[{i}].mechanism", "...", "a mechanism nested a few levels deep, not thousands"
                ) from None
            except (KeyError, IndexError, AttributeError) as err:  # a malformed field deeper down
                raise ParameterError(
                    f"events[{i}].mechanism", item["mechanism"], f"the fields of a mechanism ({err!r})"
                ) from None
            acc.compose(release, count)
        return acc

    @classmethod
    def from_json(cls, text: str) -> Accountant:
        """Inverse of :meth:`to_json` (a key given twice in one object is refused, naming it)."""
        if not isinstance(text, str | bytes | bytearray):
            raise ParameterTypeError("ledger", text, "JSON text")
        try:
            data = strict_json_loads(text)
        except (json.JSONDecodeError, RecursionError, UnicodeDecodeError) as err:
            raise ParameterError("ledger", text[:40], f"JSON text ({type(err).__name__})") from None
        return cls.from_dict(data)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Accountant):
            return NotImplemented
        return (self.neighbouring, self.dps, self._events) == (other.neighbouring, other.dps, other._events)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Accountant({self.neighbouring.value}, {len(self._events)} events)"


_LEDGER_FIELDS = ("format", "neighbouring", "dps", "events", "sha256")


def _ledger_digest(data: dict[str, Any]) -> str:
    """``sha256:`` of a ledger's fields other than ``sha256``, as canonical JSON."""
    return digest({k: val for k, val in data.items() if k != "sha256"})


# -- helpers of the routes ------------------------------------------------------------------


@dataclass(frozen=True)
class SampledView(Mechanism):
    """A release on a sampled batch, answering as a :class:`Mechanism` under one relation.

    Its pairs are the subsampled event's dominating pairs (:mod:`accounting.subsampling`); an
    event with none under the relation is refused when the view is made (up front).
    """

    release: PoissonSampled | SampledWithoutReplacement
    neighbouring: Neighbouring

    def __post_init__(self) -> None:
        self.release.dominating_pairs(self.neighbouring)  # raises UnsupportedEventError

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.release.epsilon(delta, self.neighbouring, dps)

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.release.delta(epsilon, self.neighbouring, dps)

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.release.rdp(alpha, self.neighbouring, dps)

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.release.pure_epsilon(self.neighbouring, dps)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """``∞`` unless the release has a pure ε (a subsampled ρ is not computed here)."""
        v.positive("rtol", rtol)
        pure = self.pure_epsilon(dps)
        if mp.isinf(pure.hi):
            return Enclosure(mp.inf, mp.inf)
        return Enclosure(mp.zero, mp.mpf(conversion.pure_to_zcdp(pure.upper)))


def _closed_form(m: Mechanism) -> bool:
    """Whether the PLD route answers ``m`` released once by a closed form."""
    noise = _noise_of(m)
    if isinstance(noise, DiscreteGaussian):
        return Fraction(noise.sigma) >= TAIL_SUM_SIGMA
    return isinstance(noise, Gaussian | Laplace)


def _noise_of(m: Mechanism) -> NoiseDistribution | None:
    return m.noise if isinstance(m, AdditiveNoise) else None


def _symmetric_lattice(m: Mechanism) -> bool:
    noise = _noise_of(m)
    return isinstance(noise, LatticeNoise) and noise.symmetric and noise.log_concave


def _subtract_down(a: float, b: float) -> float:
    """``a - b`` rounded down (what is left of a budget: never more than there is)."""
    return float_down(mp.mpf(a) - mp.mpf(b)) if a != b else 0.0


def _kov(m: PureDP | ApproxDP, k: int, at: float, want_epsilon: bool) -> Enclosure:
    """``k`` runs of one cited ``(ε, δ)`` guarantee, exactly: Kairouz, Oh & Viswanath 2015 Thm 3.3
    (:func:`accounting.composition.advanced_composition_kov`, the optimal composition)."""
    eps, dlt = m.eps, (m.dlt if isinstance(m, ApproxDP) else 0.0)
    if want_epsilon:
        try:
            return Enclosure.from_rounded_up(composition.advanced_composition_kov(eps, dlt, k, at))
        except ParameterError:  # δ below 1 - (1 - δ_i)^k: no finite ε
            return Enclosure(mp.inf, mp.inf)
    return Enclosure.from_rounded_up(composition.advanced_composition_kov_delta(eps, dlt, k, at))


def _pure_answer(total: float, at: float, want_epsilon: bool) -> Enclosure:
    if want_epsilon:
        return Enclosure(mp.zero, mp.mpf(total)) if total else Enclosure.exact(0)
    if total <= at:
        return Enclosure.exact(0)
    raise UnsupportedError(f"the pure route certifies δ = 0 only for ε >= {total!r}")


def _zcdp_answer(rho: float, at: float, want_epsilon: bool) -> Enclosure:
    value = conversion.zcdp_to_dp_cks(rho, at) if want_epsilon else conversion.zcdp_delta_cks(rho, at)
    return Enclosure(mp.zero, mp.mpf(value))


def _rdp_answer(curve: RdpCurve, at: float, want_epsilon: bool, search: dict[str, Any]) -> Enclosure:
    value = curve.epsilon(at, **search) if want_epsilon else curve.delta(at, **search)
    return Enclosure(mp.zero, mp.mpf(value))


@dataclass(frozen=True)
class _RdpOf:
    """One event's exact RDP at an order, rounded up.

    Where the exact sum is refused at an order (``UnsupportedError``) the value is ``inf``, so that
    the optimiser moves to other orders, and the reason is kept in ``refused``: a route whose
    every order was refused says why instead of answering ``∞`` (``strict`` raises at once).
    """

    mechanism: Mechanism
    dps: int
    strict: bool = False
    refused: list[str] = field(default_factory=list, compare=False, hash=False)

    def __call__(self, alpha: float) -> float:
        try:
            return self.mechanism.rdp(alpha, self.dps).upper
        except UnsupportedEventError:
            raise
        except UnsupportedError as err:
            if self.strict:
                raise
            if len(self.refused) < 4:
                self.refused.append(f"{self.mechanism!r}: {err}")
            return math.inf  # an order too large to sum exactly: the optimiser moves elsewhere


@dataclass(frozen=True)
class _PublishedRdp:
    bound: PublishedBound
    mechanism: Mechanism

    def __call__(self, alpha: float) -> float:
        return self.bound.value(self.mechanism, int(alpha))


# -- (de)serialization of noise, mechanisms and events ----------------------------------------

_NOISE_TYPES: dict[str, type[NoiseDistribution]] = {
    cls.__name__: cls
    for cls in (
        DiscreteLaplace,
        Geometric,
        Polya,
        Skellam,
        DiscreteGaussian,
        SumOfDiscreteGaussians,
        Binomial,
        CenteredBinomial,
        Laplace,
        Gaussian,
    )
}


def _encode(value: object) -> object:
    if isinstance(value, Fraction):
        return {"fraction": f"{value.numerator}/{value.denominator}"}
    return value


def _decode(value: object) -> object:
    if isinstance(value, dict) and set(value) == {"fraction"}:
        try:
            return Fraction(str(value["fraction"]))
        except (ValueError, ZeroDivisionError):
            raise ParameterError("fraction", value["fraction"], "a fraction 'p/q'") from None
    return value


def noise_to_dict(noise: NoiseDistribution) -> dict[str, Any]:
    """A noise distribution as plain data (exact: Fractions as ``"p/q"``)."""
    name = type(noise).__name__
    if name not in _NOISE_TYPES:
        raise ParameterError("noise", noise, "a distribution of accounting.noise")
    return {"type": name} | {f.name: _encode(getattr(noise, f.name)) for f in fields(noise)}  # type: ignore[arg-type]


def noise_from_dict(data: object) -> NoiseDistribution:
    """Inverse of :func:`noise_to_dict`."""
    if not isinstance(data, dict):
        raise ParameterError("noise", data, "an object with a 'type'")
    kind = data.get("type")
    if kind not in _NOISE_TYPES:
        raise ParameterError("type", kind, "one of " + ", ".join(sorted(_NOISE_TYPES)))
    params: dict[str, Any] = {k: _decode(val) for k, val in data.items() if k != "type"}
    try:
        if kind == "Skellam":
            return Skellam.from_rates(params["mu1"], params["mu2"], params.get("offset", 0))
        if kind == "DiscreteLaplace":
            if params.get("decay") is not None:
                return DiscreteLaplace(decay=params["decay"])
            return DiscreteLaplace(params["scale"])
        if kind == "Geometric":
            return Geometric(params["beta"])
        return _NOISE_TYPES[kind](**params)
    except (KeyError, TypeError) as err:
        if isinstance(err, AccountingError | ParameterTypeError):
            raise
        raise ParameterError("noise", data, f"the fields of {kind} ({err})") from None


def mechanism_to_dict(mechanism: Release) -> dict[str, Any]:
    """A mechanism, a cited guarantee or a sampled release as plain data."""
    if isinstance(mechanism, PoissonSampled | SampledWithoutReplacement):
        return {
            "type": type(mechanism).__name__,
            "rate": _encode(mechanism.rate),
            "mechanism": mechanism_to_dict(mechanism.mechanism),
        }
    if isinstance(mechanism, AdditiveNoise):
        return {
            "type": "AdditiveNoise",
            "noise": noise_to_dict(mechanism.noise),
            "sensitivity": mechanism.sensitivity,
        }
    if isinstance(mechanism, DistributedSum):
        return {
            "type": "DistributedSum",
            "share": noise_to_dict(mechanism.share),
            "users": mechanism.users,
            "sensitivity": mechanism.sensitivity,
        }
    if isinstance(mechanism, DistributedVectorSum):
        return {
            "type": "DistributedVectorSum",
            "share": noise_to_dict(mechanism.share),
            "users": mechanism.users,
            "dimension": mechanism.dimension,
            "l2": mechanism.l2,
            "l1": mechanism.l1,
        }
    if isinstance(mechanism, PureDP):
        return {
            "type": "PureDP",
            "epsilon": mechanism.eps,
            "source": mechanism.source,
            "neighbouring": mechanism.neighbouring.value,
        }
    if isinstance(mechanism, ApproxDP):
        return {
            "type": "ApproxDP",
            "epsilon": mechanism.eps,
            "delta": mechanism.dlt,
            "source": mechanism.source,
            "neighbouring": mechanism.neighbouring.value,
        }
    raise ParameterError("mechanism", mechanism, _EVENTS)


_FIELDS = {
    "AdditiveNoise": {"type", "noise", "sensitivity"},
    "DistributedSum": {"type", "share", "users", "sensitivity"},
    "DistributedVectorSum": {"type", "share", "users", "dimension", "l2", "l1"},
    "PureDP": {"type", "epsilon", "source", "neighbouring"},
    "ApproxDP": {"type", "epsilon", "delta", "source", "neighbouring"},
    "PoissonSampled": {"type", "rate", "mechanism"},
    "SampledWithoutReplacement": {"type", "rate", "mechanism"},
}


def mechanism_from_dict(data: object) -> Release:
    """Inverse of :func:`mechanism_to_dict`."""
    if not isinstance(data, dict):
        raise ParameterError("mechanism", data, "an object with a 'type'")
    kind = data.get("type")
    if kind not in _FIELDS:
        raise ParameterError("type", kind, "one of " + ", ".join(repr(k) for k in _FIELDS))
    required = _FIELDS[kind] - {"neighbouring", "l1"}  # l1 of a vector sum is optional
    if not required <= set(data) or not set(data) <= _FIELDS[kind]:
        raise ParameterError("mechanism", data, f"the fields of {kind} ({', '.join(sorted(_FIELDS[kind]))})")
    relation = data.get("neighbouring", Neighbouring.REPLACE_ONE.value)
    if kind == "AdditiveNoise":
        return AdditiveNoise(noise_from_dict(data["noise"]), data["sensitivity"])
    if kind == "DistributedSum":
        return DistributedSum(noise_from_dict(data["share"]), data["users"], data["sensitivity"])
    if kind == "DistributedVectorSum":
        share = noise_from_dict(data["share"])
        return DistributedVectorSum(share, data["users"], data["dimension"], data["l2"], data.get("l1"))
    if kind == "PureDP":
        return PureDP(data["epsilon"], data["source"], relation)
    if kind in ("PoissonSampled", "SampledWithoutReplacement"):
        inner = mechanism_from_dict(data["mechanism"])
        if not isinstance(inner, AdditiveNoise | DistributedSum):
            raise ParameterError("mechanism", data["mechanism"], "an AdditiveNoise or DistributedSum")
        sampled = PoissonSampled if kind == "PoissonSampled" else SampledWithoutReplacement
        return sampled(inner, _decode(data["rate"]))  # type: ignore[arg-type]
    return ApproxDP(data["epsilon"], data["delta"], data["source"], relation)


def event_to_dict(event: EventLike) -> dict[str, Any]:
    """Any event as plain data: a mechanism, a self-composed :class:`Event`, a :class:`Composed` group."""
    if isinstance(event, Event):
        return {"type": "SelfComposed", "count": event.count, "event": mechanism_to_dict(event.mechanism)}
    if isinstance(event, Composed):
        return {"type": "Composed", "events": [event_to_dict(e) for e in event.events]}
    return mechanism_to_dict(event)


def event_from_dict(data: object, _depth: int = 0) -> EventLike:
    """Inverse of :func:`event_to_dict`."""
    if _depth > 64:
        raise ParameterError("events", "...", "at most 64 levels of nested Composed events")
    if isinstance(data, dict) and data.get("type") == "SelfComposed":
        if set(data) != {"type", "count", "event"}:
            raise ParameterError("event", data, "the fields of SelfComposed (count, event)")
        return Event(mechanism_from_dict(data["event"]), data["count"])
    if isinstance(data, dict) and data.get("type") == "Composed":
        items = data.get("events")
        if set(data) != {"type", "events"} or not isinstance(items, list):
            raise ParameterError("event", data, "the fields of Composed (events: a list)")
        return Composed(event_from_dict(e, _depth + 1) for e in items)
    return mechanism_from_dict(data)

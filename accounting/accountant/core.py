"""The :class:`Accountant`: the ledger of events and the routes that answer for it.

See :mod:`accounting.accountant` for the events, the neighbouring relation and the routes.
"""

from __future__ import annotations

import json
import math
from contextlib import nullcontext
from typing import Any

from mpmath import mp

from accounting import validate as v
from accounting.accountant.events import Event, EventLike, flatten
from accounting.accountant.published import PUBLISHED
from accounting.accountant.routes import (
    PublishedRdp,
    RdpOf,
    SampledView,
    closed_form,
    kov,
    noise_of,
    pure_answer,
    rdp_answer,
    route_name,
    subtract_down,
    symmetric_lattice,
    zcdp_answer,
)
from accounting.accountant.serialization import check_ledger, ledger_entries, ledger_to_dict
from accounting.certified import DEFAULT_DPS, Enclosure
from accounting.composition import RdpCurve, sum_up
from accounting.errors import (
    ParameterError,
    ParameterTypeError,
    RouteRefusedError,
    UnsupportedError,
    UnsupportedEventError,
)
from accounting.integrity import verify
from accounting.mechanisms import (
    AdditiveNoise,
    AddRemoveSum,
    ApproxDP,
    DistributedVectorSum,
    Mechanism,
    PureDP,
)
from accounting.neighbouring import Neighbouring
from accounting.noise import DiscreteLaplace, Gaussian, Laplace, LatticeNoise
from accounting.storage import strict_json_loads

__all__ = ["AUTO_MARGIN", "AUTO_PLD_BUDGET", "AUTO_REFINEMENTS", "AUTO_REFINE_POINTS", "Accountant"]

#: ``"auto"`` computes the PLD route first when its estimated cost (:meth:`Accountant.pld_cost`,
#: 1-3.5 s per unit measured) is at most this, and otherwise only when the RDP route failed. Chosen
#: so that the PLD route and then the RDP route (a few seconds for lattice noise) finish within
#: about 20 s: 10^9 Skellam releases (3.9 units) took 12 s, 10^12 (5.2 units) 28 s.
AUTO_PLD_BUDGET = 5.0

#: ``"auto"`` skips the RDP route when the PLD's enclosure ``[lo, hi]`` has ``hi <= lo (1 + margin)``:
#: no certified route can then improve on it by more than this relative margin.
AUTO_MARGIN = 1e-3

#: ``"auto"`` refines a PLD enclosure wider than :data:`AUTO_MARGIN` by halving the grid spacing,
#: at most :data:`AUTO_REFINEMENTS` times, while the composed grids stay at most this many points
#: (a few Poisson-sampled lattice releases: grids of thousands of points, refined in well under a
#: second, where the RDP route's exact Rényi sums took 13-120 s). Decided from grid sizes, not
#: from a clock: the same ledger gets the same answer on any machine.
AUTO_REFINE_POINTS = 2**16
AUTO_REFINEMENTS = 6


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
        self._pld_points = 0  # the size of the last PLD route's composed grids (see _answer)

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
           :data:`AUTO_PLD_BUDGET`; its precision is raised for a tiny δ (:meth:`_pld`). An
           enclosure wider than :data:`AUTO_MARGIN` whose grids are small is refined (the spacing
           halved, see :data:`AUTO_REFINE_POINTS`); the answer is the intersection of the
           enclosures found, each certified;
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
            try:
                return self._by(route, at, want_epsilon).answered(route)
            except UnsupportedError as err:
                if route != "pure":
                    raise
                # The route asked cannot account the ledger: a choice of the caller's, named as such.
                raise RouteRefusedError(
                    "route", route, f"a route that accounts every event ('auto', 'pld' or 'rdp'): {err}"
                ) from None
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
            self._pld_points = 0
            attempt("pld")
            for refine in range(1, AUTO_REFINEMENTS + 1):
                first = tried.get("pld")
                if first is None or _settled(first) or not 0 < 2 * self._pld_points <= AUTO_REFINE_POINTS:
                    break
                try:
                    finer = self._by("pld", at, want_epsilon, refine)
                except UnsupportedError:  # a spacing finer than the pair's cells can take
                    break
                tried["pld"] = Enclosure(max(first.lo, finer.lo), min(first.hi, finer.hi))
        exact = tried.get("pld")
        if exact is None or not _settled(exact):
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

        if self._single() and closed_form(self._views[0]):
            return 0.0
        if all(isinstance(noise_of(m), Gaussian) for m in self._views):
            return 0.0  # composed in closed form (pld.gaussian_equivalent_sigma), any count
        total = 0.0
        for e, m in self._pairs():
            if e.count > pld.MAX_COMPOSITIONS:
                return math.inf
            noise = noise_of(m)
            points = 2.0**14  # cells of a continuous or subsampled pair, cited atoms
            if isinstance(noise, DiscreteLaplace) and isinstance(m, AdditiveNoise):
                points = float(m.sensitivity) + 1  # closed-form atoms, no window
            elif isinstance(noise, LatticeNoise) and isinstance(m, AdditiveNoise):
                points = 24 * math.sqrt(noise.variance()) + 2 * float(m.sensitivity) + 1
            grid = min(pld.MAX_GRID_POINTS, points * 8 * max(1.0, math.sqrt(e.count)))
            total += 2e-5 * min(points, 1e12) + 2 * max(1, e.count.bit_length()) * 1e-6 * grid
        return total

    def _by(self, route: str, at: float, want_epsilon: bool, refine: int = 0) -> Enclosure:
        """The answer of one route, with cited ``(ε, δ)`` guarantees by basic composition (the PLD
        route's grid spacing halved ``refine`` times)."""
        pairs = self._pairs()
        if route == "pld" and self._single():
            m = pairs[0][1]
            try:
                return m.epsilon(at, self.dps) if want_epsilon else m.delta(at, self.dps)
            except UnsupportedError:
                # Too wide for the exact single-shot sum (a huge discrete Laplace scale): the grid
                # PLD has closed-form atoms for it.
                if not symmetric_lattice(m):
                    raise
        if route == "pld" and len(pairs) == 1 and isinstance(pairs[0][1], PureDP | ApproxDP):
            return kov(pairs[0][1], pairs[0][0].count, at, want_epsilon)
        if route == "pld":
            return self._pld(pairs, at, want_epsilon, refine)
        approx = [(e, m) for e, m in pairs if isinstance(m, ApproxDP) and m.dlt > 0]
        rest = [(e, m) for e, m in pairs if not (isinstance(m, ApproxDP) and m.dlt > 0)]
        if not approx:
            return self._route(route, rest, at, want_epsilon)
        eps_c = sum_up((e.count, m.eps) for e, m in approx if isinstance(m, ApproxDP))
        dlt_c = sum_up((e.count, m.dlt) for e, m in approx if isinstance(m, ApproxDP))
        if want_epsilon:
            left = subtract_down(at, dlt_c)
            if left <= 0:
                raise UnsupportedError(
                    f"the cited (ε, δ) guarantees already spend δ = {dlt_c!r} >= {at!r} (basic composition)"
                )
            inner = self._route(route, rest, left, True, refine) if rest else Enclosure.exact(0)
            return Enclosure(inner.lo, mp.mpf(sum_up([inner.hi, eps_c])))
        left_eps = subtract_down(at, eps_c)
        if left_eps < 0:
            raise UnsupportedError(
                f"the cited (ε, δ) guarantees already spend ε = {eps_c!r} > {at!r} (basic composition)"
            )
        inner = self._route(route, rest, left_eps, False, refine) if rest else Enclosure.exact(0)
        return Enclosure(inner.lo, mp.mpf(min(1.0, sum_up([inner.hi, dlt_c]))))

    def _no_pure(self, pairs: list[tuple[Event, Mechanism]]) -> str:
        """Which event of the ledger has no pure-DP guarantee: its index (from 0) and what it is."""
        for e, m in pairs:
            if math.isinf(m.pure_epsilon(self.dps).hi):
                index = next(i for i, x in enumerate(self._events) if x is e)
                what = " ".join(repr(e.mechanism).split())
                what = what if len(what) <= 160 else what[:157] + "..."
                return f"event {index} ({what}, {e.count} time(s)) has no pure-DP guarantee"
        return "an event has no pure-DP guarantee"

    def _route(
        self, route: str, pairs: list[tuple[Event, Mechanism]], at: float, want_epsilon: bool, refine: int = 0
    ) -> Enclosure:
        if route == "pure":
            total = sum_up((e.count, m.pure_epsilon(self.dps).hi) for e, m in pairs)
            if math.isinf(total):
                raise UnsupportedError(self._no_pure(pairs))
            return pure_answer(total, at, want_epsilon)
        if route == "zcdp":
            rho = sum_up((e.count, m.zcdp_rho(self.dps).hi) for e, m in pairs)
            if math.isinf(rho):
                raise UnsupportedError("an event is not zCDP (its D_α/α is unbounded)")
            return zcdp_answer(rho, at, want_epsilon)
        if route == "rdp":
            curve, terms = self._rdp_curve(pairs)
            answer = rdp_answer(curve, at, want_epsilon, self._search(pairs))
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
            return self._pld(pairs, at, want_epsilon, refine)
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
    ) -> tuple[RdpCurve, list[RdpOf]]:
        """The ledger's RDP curve and its events' terms (which record the orders refused)."""
        terms = [RdpOf(m, self.dps, strict) for _, m in pairs]
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
            or isinstance(noise_of(m), Gaussian | Laplace)
            for _, m in pairs
        ) and not any(isinstance(m, SampledView) for _, m in pairs)
        if closed:
            return {"alpha_max": 1e6}
        return {"alpha_max": 256.0, "grid_points": 24, "rtol": 1e-4}

    def _pld(
        self, pairs: list[tuple[Event, Mechanism]], at: float, want_epsilon: bool, refine: int = 0
    ) -> Enclosure:
        """The PLD route (its default spacing halved ``refine`` times); records the size of the
        composed grids in ``_pld_points`` for :meth:`_answer`'s refinement.

        A ledger asked at more than :data:`DEFAULT_DPS` digits is also answered at the default
        precision, and the answer is the intersection of the two (both certified): more digits
        resolve smaller probabilities, but the wider tails they keep can make the grids coarsen
        sooner (a Skellam(30) ledger's upper end rose by 2e-7 at 30 digits), and the same
        question must not get a looser answer when asked more precisely — above all not one
        above a target that :func:`accounting.calibration.calibrate` certified at the default.
        """
        answer = self._pld_at(self.dps, pairs, at, want_epsilon, refine)
        if self.dps > DEFAULT_DPS:
            points = self._pld_points
            default = self._pld_at(DEFAULT_DPS, pairs, at, want_epsilon, refine)
            self._pld_points = points
            answer = Enclosure(max(answer.lo, default.lo), min(answer.hi, default.hi))
        return answer

    def _pld_at(
        self, precision: int, pairs: list[tuple[Event, Mechanism]], at: float, want_epsilon: bool, refine: int
    ) -> Enclosure:
        """The PLD route's answer at ``precision`` digits (raised to resolve a tiny δ)."""
        from accounting import pld
        from accounting.pld import exact_products

        if any(isinstance(m, AddRemoveSum) for _, m in pairs):
            raise UnsupportedEventError("a distributed sum under add-remove composes by no certified PLD")
        items = [(e.mechanism, e.count) for e, _ in pairs]
        # The PLD resolves probabilities to about 10^-dps: ask for δ or ε at a δ below that and
        # it answers ∞ (10 discrete Gaussians of σ = 3 at δ = 1e-50). Raise the precision to
        # resolve the δ asked for (or, for δ(ε), the δ found) with 8 digits to spare.
        # Long compositions take float products (accounting.pld.products.compose_rows), whose
        # certified slack is far below a usual δ; at a δ it would loosen, compose exactly instead.
        dps = max(precision, math.ceil(-math.log10(at)) + 8) if want_epsilon else precision

        def composed(digits: int, slack: float = pld.FLOAT_SLACK, exact: bool = False) -> pld.ComposedPLD:
            with exact_products() if exact else nullcontext():
                return pld.compose_events(items, self.neighbouring, dps=digits, refine=refine, slack=slack)

        if want_epsilon:
            # ε(δ): float products and windows may move a share of the δ asked, if what that costs
            # in ε is at most EPSILON_RTOL of it; else a share narrowed to fit (what it costs is
            # about proportional), else exact products
            share = pld.EPSILON_SLACK_SHARE
            for _ in range(2):
                dist = composed(dps, at * share)
                answer = dist.epsilon(at)
                room = pld.EPSILON_RTOL * float(answer.hi)
                loose = dist.epsilon_looseness(at)
                if loose <= room:
                    break
                share *= max(2.0**-20, room / loose / 2) if math.isfinite(loose) else 2.0**-10
            else:
                dist = composed(dps, at * pld.SLACK_SHARE, exact=True)
                answer = dist.epsilon(at)
            self._pld_points = dist.points
            return answer
        dist = composed(dps)
        answer = dist.delta(at)
        if 0 < answer.hi < mp.mpf(10) ** (8 - dps):
            dps = math.ceil(-float(mp.log10(answer.hi))) + precision + 8
            dist = composed(dps)
            answer = dist.delta(at)
        if dist.loose_at(float(answer.hi)):
            dist = composed(dps, exact=True)
            answer = dist.delta(at)
        self._pld_points = dist.points
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
                    RdpCurve.from_function(PublishedRdp(bound, m), integer_only=True).scale(e.count)
                )
        if len(pure) == len(pairs):
            return pure_answer(sum_up(pure), at, want_epsilon)
        if len(rhos) == len(pairs):
            return zcdp_answer(sum_up(rhos), at, want_epsilon)
        total = curves[0]
        for c in curves[1:]:
            total = total + c
        return rdp_answer(total, at, want_epsilon, {"alpha_min": 2.0} if total.integer_only else {})

    # -- serialization ------------------------------------------------------------------
    def to_dict(self, key: bytes | None = None) -> dict[str, Any]:
        """The ledger as plain data (JSON-ready): relation, precision, events and ``sha256``, a
        hash of the rest, so :meth:`from_dict` detects a ledger edited after it was written; with
        a secret ``key``, also its HMAC-SHA256 (``hmac``, :mod:`accounting.integrity`), which
        :meth:`from_dict` with the same key checks."""
        return ledger_to_dict(self.neighbouring, self.dps, self._events, key)

    def to_json(self, indent: int | None = 2, key: bytes | None = None) -> str:
        """The ledger as JSON (signed with ``key`` if given); :meth:`from_json` rebuilds an equal
        accountant."""
        return json.dumps(self.to_dict(key), indent=indent)

    @classmethod
    def from_dict(cls, data: object, key: bytes | None = None) -> Accountant:
        """Rebuild an accountant from :meth:`to_dict` output (validating everything).

        A ledger with a ``sha256`` must match it (a σ, an ε or a count edited by hand is refused);
        one without (written before the hash existed, or by hand) is accepted as it stands. With a
        ``key``, the ledger must carry a signature under it (:func:`accounting.integrity.verify`).
        Every malformed ledger is a :class:`ParameterError` / :class:`ParameterTypeError` naming
        the field.
        """
        ledger = check_ledger(data)
        if key is not None:
            verify(ledger, key=key)
        acc = cls(Neighbouring.parse(ledger.get("neighbouring")), ledger.get("dps", DEFAULT_DPS))
        for release, count in ledger_entries(ledger):
            acc.compose(release, count)
        return acc

    @classmethod
    def from_json(cls, text: str, key: bytes | None = None) -> Accountant:
        """Inverse of :meth:`to_json` (a key given twice in one object is refused, naming it; a
        signing ``key`` as in :meth:`from_dict`)."""
        if not isinstance(text, str | bytes | bytearray):
            raise ParameterTypeError("ledger", text, "JSON text")
        try:
            data = strict_json_loads(text)
        except (json.JSONDecodeError, RecursionError, UnicodeDecodeError) as err:
            raise ParameterError("ledger", text[:40], f"JSON text ({type(err).__name__})") from None
        return cls.from_dict(data, key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Accountant):
            return NotImplemented
        return (self.neighbouring, self.dps, self._events) == (other.neighbouring, other.dps, other._events)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Accountant({self.neighbouring.value}, {len(self._events)} events)"


def _settled(answer: Enclosure) -> bool:
    """``hi <= lo (1 + AUTO_MARGIN)``, compared exactly (not at mpmath's ambient precision)."""
    return bool(
        mp.isfinite(answer.hi)
        and mp.fsub(answer.hi, answer.lo, exact=True) <= mp.fmul(answer.lo, AUTO_MARGIN, exact=True)
    )

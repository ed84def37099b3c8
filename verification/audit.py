"""Black-box empirical auditing: a lower bound on ε from samples of a mechanism.

Given a way to sample a mechanism's output on two neighbouring inputs ``D`` and ``D'``,
:func:`audit` returns a number ``ε_lb`` such that, with probability at least the stated
confidence over the auditor's own randomness, the mechanism is *not* ``(ε, δ)``-DP for
any ``ε < ε_lb``. It never needs the mechanism's code, only its outputs.

The method is the standard one of empirical privacy auditing (Jagielski, Ullman & Oprea
2020, "Auditing Differentially Private Machine Learning: How Private is Private SGD?";
Nasr et al. 2021, "Adversary Instantiation"):

1. Draw ``samples`` outputs on each side, in chunks (each chunk from its own stream
   spawned by :class:`numpy.random.SeedSequence`), reduce each output to a scalar by a
   *statistic*, and count them into histograms. Only counts are kept, so ``10^8`` samples
   per side need the memory of one chunk.
2. *Selection* (the first ``selection_fraction`` of every chunk): choose a distinguishing
   event ``S`` and a direction among the threshold sets ``{T >= t}``, ``{T <= t}`` and the
   sets of bins with the largest likelihood ratio (ordered by the ratios of a held-out
   pilot sample), maximizing the ε bound computed with simultaneous (Bonferroni) Wilson
   intervals on the selection half, so sparse tail events do not win by chance.
3. *Estimation* (the rest, never seen by step 2): bound ``p = P[M(D) ∈ S]`` from below and
   ``q = P[M(D') ∈ S]`` from above by one-sided Clopper–Pearson intervals (Clopper &
   Pearson 1934), each at level ``1 - α/2`` with ``α = 1 - confidence`` (a union bound),
   and report ``ε_lb = ln((p_lo - δ) / q_hi)``, clipped at 0 and rounded down. An
   ``(ε, δ)``-DP mechanism has ``p <= e^ε q + δ`` for every event, so ``ε_lb <= ε`` with
   probability at least ``confidence``: no double dipping, because ``S`` was fixed before
   the estimation half was looked at.

For integer statistics the histograms also give a plug-in estimate of the privacy-loss
distribution (:class:`PluginPLD`), as a diagnostic (it carries no confidence statement).

The chunks can run on a Dask cluster: pass a :class:`distributed.Client` or a scheduler
address as ``scheduler``; each chunk is a task with its own spawned seed and returns only
its histograms, so the result is identical to the local run with the same seed.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

import mpmath
import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.mechanisms import AdditiveNoise
from accounting.noise import LatticeNoise, NoiseDistribution
from accounting.search import largest
from learners.protocols import Protocol
from verification.errors import ParameterError, ParameterTypeError, VerificationError

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "AdditivePair",
    "AuditResult",
    "CoordinateDifference",
    "EventCounts",
    "PluginPLD",
    "Projection",
    "ProtocolPair",
    "SamplePair",
    "Statistic",
    "additive_pair",
    "audit",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "protocol_pair",
]

#: ``sample_pair(rng, size) -> (outputs on D, outputs on D')``, each of shape ``(size,)`` or ``(size, d)``.
SamplePair = Callable[[np.random.Generator, int], tuple[NDArray[Any], NDArray[Any]]]
#: Reduces outputs of shape ``(size,)`` or ``(size, d)`` to scalars of shape ``(size,)``.
Statistic = Callable[[NDArray[Any]], NDArray[Any]]

Verdict = Literal["consistent", "violation", "no claim"]


# ---------------------------------------------------------------------------------------
# Neighbouring pairs and statistics (picklable values, so they can travel to Dask workers)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdditivePair:
    """``(X, X + Δ)`` with ``X ~ noise``: an additive mechanism on a query moved by its sensitivity.

    The worst neighbour of symmetric log-concave noise is the full shift ``Δ``
    (see :mod:`accounting.mechanisms`). Build it with :func:`additive_pair`, which validates.
    """

    noise: NoiseDistribution
    sensitivity: float

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
        first = self.noise.sample(rng, size)
        second = self.noise.sample(rng, size)
        shift = int(self.sensitivity) if isinstance(self.noise, LatticeNoise) else self.sensitivity
        return first, np.add(second, shift)


def additive_pair(noise: NoiseDistribution, sensitivity: float = 1) -> AdditivePair:
    """A sample pair for ``q(D) + X`` versus ``q(D') + X`` with ``q(D') = q(D) + Δ``.

    Parameters
    ----------
    noise : NoiseDistribution
        A distribution from :mod:`accounting.noise` (its ``sample(rng, size)`` is used).
    sensitivity : int or float
        ``Δ``: an integer ``>= 1`` for lattice noise, a real ``> 0`` for continuous noise
        (validated by :class:`accounting.mechanisms.AdditiveNoise`, whose claim this audits).

    Returns
    -------
    AdditivePair
        ``sample_pair(rng, size) -> (X, X' + Δ)`` with independent ``X, X' ~ noise``.
    """
    if not isinstance(noise, NoiseDistribution):
        raise ParameterError("noise", noise, "a distribution from accounting.noise")
    mechanism = AdditiveNoise(noise, sensitivity)  # one place validates sensitivity
    return AdditivePair(noise, mechanism.sensitivity)


@dataclass(frozen=True)
class ProtocolPair:
    """The server's view of one batch of a :class:`learners.protocols.Protocol` on neighbouring inputs.

    ``D`` has every user's value ``0``; ``D'`` replaces user 0's value by ``1``, so the encoded sum
    moves by exactly ``g`` (the sensitivity the protocol accounts). Each call runs the whole
    protocol (encoding, noise shares, secure aggregation or shuffler) for ``size`` repetitions of
    each input and returns the views ``yhat`` (the modular sums the server learns).
    Build it with :func:`protocol_pair`.
    """

    protocol: Protocol

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
        n = self.protocol.params.users
        first = np.zeros((size, n))
        second = first.copy()
        second[:, 0] = 1.0
        return self.protocol.release(first, rng).view, self.protocol.release(second, rng).view


def protocol_pair(protocol: Protocol) -> ProtocolPair:
    """A sample pair of the server's view of ``protocol`` on neighbouring batches (see :class:`ProtocolPair`).

    Parameters
    ----------
    protocol : learners.protocols.Protocol
        The protocol to audit (its parameters come from :mod:`accounting.calibration`).

    Returns
    -------
    ProtocolPair
    """
    if not isinstance(protocol, Protocol):
        raise ParameterTypeError("protocol", protocol, "a learners.protocols.Protocol")
    return ProtocolPair(protocol)


@dataclass(frozen=True)
class Projection:
    """The statistic ``T(x) = <w, x>`` for vector outputs of shape ``(size, d)``."""

    weights: tuple[float, ...]

    def __call__(self, outputs: NDArray[Any]) -> NDArray[np.float64]:
        x = np.asarray(outputs, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(self.weights):
            raise VerificationError(
                f"Projection with {len(self.weights)} weights needs outputs of shape (size, "
                f"{len(self.weights)}); got {x.shape}"
            )
        return np.asarray(x @ np.asarray(self.weights, dtype=np.float64), dtype=np.float64)

    def __str__(self) -> str:
        shown = ", ".join(f"{w:.3g}" for w in self.weights[:4]) + (", ..." if len(self.weights) > 4 else "")
        return f"<({shown}), x>"


@dataclass(frozen=True)
class CoordinateDifference:
    """The statistic ``T(x) = x[first] - x[second]`` for vector outputs.

    Noise shared by two coordinates cancels in their difference (spec §4.7).
    """

    first: int
    second: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "first", v.integer("first", self.first, minimum=0))
        object.__setattr__(self, "second", v.integer("second", self.second, minimum=0))
        if self.first == self.second:
            raise ParameterError("second", self.second, f"a coordinate other than first={self.first}")

    def __call__(self, outputs: NDArray[Any]) -> NDArray[Any]:
        x = np.asarray(outputs)
        if x.ndim != 2 or x.shape[1] <= max(self.first, self.second):
            raise VerificationError(
                f"CoordinateDifference({self.first}, {self.second}) needs outputs of shape "
                f"(size, d) with d > {max(self.first, self.second)}; got {x.shape}"
            )
        return np.asarray(x[:, self.first] - x[:, self.second])

    def __str__(self) -> str:
        return f"x[{self.first}] - x[{self.second}]"


def _identity(outputs: NDArray[Any]) -> NDArray[Any]:
    return outputs


def _statistic_name(statistic: Statistic) -> str:
    if statistic is _identity:
        return "x"
    if any("__str__" in vars(k) for k in type(statistic).__mro__[:-1]):  # it names itself
        return str(statistic)
    return f"{getattr(statistic, '__name__', type(statistic).__name__)}(x)"


# ---------------------------------------------------------------------------------------
# Clopper–Pearson and the ε lower bound
# ---------------------------------------------------------------------------------------


def clopper_pearson_lower(hits: int, trials: int, alpha: float) -> float:
    """One-sided Clopper–Pearson lower bound: ``P[p >= bound] >= 1 - alpha``.

    Clopper & Pearson 1934: the ``alpha`` quantile of ``Beta(k, n - k + 1)`` (0 when ``k = 0``).
    """
    if hits <= 0:
        return 0.0
    from scipy.stats import beta  # here, not at module level: importing scipy.stats takes a second

    return float(beta.ppf(alpha, hits, trials - hits + 1))


def clopper_pearson_upper(hits: int, trials: int, alpha: float) -> float:
    """One-sided Clopper–Pearson upper bound: ``P[p <= bound] >= 1 - alpha``.

    The ``1 - alpha`` quantile of ``Beta(k + 1, n - k)`` (1 when ``k = n``).
    """
    if hits >= trials:
        return 1.0
    from scipy.stats import beta

    return float(beta.ppf(1 - alpha, hits + 1, trials - hits))


def epsilon_lower_bound(
    first_hits: int, second_hits: int, trials: int, *, delta: float = 0.0, confidence: float = 0.95
) -> float:
    """``ε_lb = ln((p_lo - δ) / q_hi)`` for an event fixed before these counts were drawn.

    ``p_lo`` is the Clopper–Pearson lower bound of ``P[M(D) ∈ S]`` from ``first_hits`` of
    ``trials``, ``q_hi`` the upper bound of ``P[M(D') ∈ S]`` from ``second_hits``, each at
    level ``1 - (1 - confidence)/2`` so that both hold together with probability at least
    ``confidence`` (union bound). An ``(ε, δ)``-DP mechanism has ``p <= e^ε q + δ``, hence
    ``ε >= ε_lb`` at that confidence. Clipped at 0 (a lower bound on ε is never negative)
    and rounded down by two ulps (``beta.ppf`` is accurate to a few ulps; a lower bound must
    not round up).

    Parameters
    ----------
    first_hits, second_hits : int
        Outputs in ``S`` among ``trials`` samples on ``D`` and on ``D'``.
    trials : int
        Samples per side in the estimation half.
    delta : float
        The ``δ`` of the claim, in ``[0, 1)``.
    confidence : float
        In ``(0, 1)``.
    """
    n = v.integer("trials", trials, minimum=1)
    k1 = v.integer("first_hits", first_hits, minimum=0)
    k2 = v.integer("second_hits", second_hits, minimum=0)
    if k1 > n:
        raise ParameterError("first_hits", first_hits, f"an integer in [0, trials={n}]")
    if k2 > n:
        raise ParameterError("second_hits", second_hits, f"an integer in [0, trials={n}]")
    d = _delta(delta)
    alpha = 1 - v.open_unit("confidence", confidence)
    p_lo = clopper_pearson_lower(k1, n, alpha / 2)
    q_hi = clopper_pearson_upper(k2, n, alpha / 2)
    if p_lo - d <= 0:
        return 0.0
    value = math.log((p_lo - d) / q_hi)
    if value <= 0:
        return 0.0
    return math.nextafter(math.nextafter(value, -math.inf), -math.inf)


def _delta(delta: object) -> float:
    d = v.nonnegative("delta", delta)
    if not d < 1:
        raise ParameterError("delta", delta, "a real number in [0, 1)")
    return d


def _evidence(first_hits: int, second_hits: int, trials: int, delta: float, claimed: float) -> float:
    """The largest confidence at which the lower bound still exceeds ``claimed`` (0 if none).

    ``1 - evidence`` is the p-value of the test "the mechanism is (claimed, δ)-DP" on this
    event (the bound decreases in the confidence; the project's one search, to 1e-12).
    """

    def above(c: float) -> bool:
        return epsilon_lower_bound(first_hits, second_hits, trials, delta=delta, confidence=c) > claimed

    lo, hi = 1e-12, 1 - 1e-12
    if not above(lo):
        return 0.0
    if above(hi):
        return hi
    return largest(above, lo, hi, rtol=1e-12)


# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventCounts:
    """The estimation-half counts behind ``ε_lb``: ``first`` hits of ``S`` on the side bounded below."""

    first: int
    second: int
    trials: int


@dataclass(frozen=True)
class PluginPLD:
    """The plug-in privacy-loss distribution of an integer statistic (histogram ratios).

    A diagnostic only: no confidence statement, and biased upwards in sparse tails.
    ``loss(x) = ln(P_D(x) / P_D'(x))`` on bins seen on both sides (all samples, both halves).
    A bin is one integer, or a range of them when the statistic spans more than ``max_bins``;
    the two end bins also hold everything beyond the range fixed by the pilot.

    Attributes
    ----------
    support : int
        Bins seen on either side.
    shared : int
        Bins seen on both sides (where the loss is finite).
    min_count : int
        Bins with at least this many samples on both sides count as well sampled.
    max_abs_loss : float
        ``max |loss(x)|`` over well-sampled bins (0 if none).
    mean_loss : float
        Plug-in ``KL(P_D || P_D')`` over shared bins (the mean of the PLD).
    mean_loss_reverse : float
        Plug-in ``KL(P_D' || P_D)``.
    mass_first_only, mass_second_only : float
        Fraction of the samples on ``D`` (resp. ``D'``) in bins never seen on the other
        side: evidence of an infinite privacy loss when large.
    delta_at_claimed : float or None
        Plug-in hockey-stick divergence ``max over both orders of Σ max(0, p - e^ε q)`` at
        the claimed ε (None without a claim).
    """

    support: int
    shared: int
    min_count: int
    max_abs_loss: float
    mean_loss: float
    mean_loss_reverse: float
    mass_first_only: float
    mass_second_only: float
    delta_at_claimed: float | None


@dataclass(frozen=True)
class AuditResult:
    """The outcome of :func:`audit`.

    Attributes
    ----------
    epsilon_lower : float
        ``ε_lb``: with probability at least ``confidence``, the mechanism is not
        ``(ε, delta)``-DP for any ``ε < ε_lb``.
    delta, confidence : float
        As given.
    claimed_epsilon : float or None
        The claim checked, if any.
    verdict : str
        ``"consistent"`` (``ε_lb <= claimed``), ``"violation"``, or ``"no claim"``.
    evidence : float or None
        The largest confidence level at which ``ε_lb`` still exceeds the claim
        (``1 - evidence`` is a p-value of "the claim holds"); ``>= confidence`` exactly for a
        violation. None without a claim.
    event : str
        The distinguishing event ``S``, chosen on the selection half.
    direction : str
        ``"D/D'"`` when ``P[M(D) ∈ S]`` was bounded below and ``P[M(D') ∈ S]`` above,
        ``"D'/D"`` for the reverse.
    counts : EventCounts
        Estimation-half counts of ``S`` (numerator side first).
    samples : int
        Samples per side (selection plus estimation; the pilot is extra).
    selection_samples, estimation_samples, pilot_samples : int
        Per side.
    chunks : int
        Number of chunks (tasks).
    bins : int
        Bins of the statistic's histogram.
    statistic : str
        The statistic ``T`` the events are sets of.
    seed : int
        The root entropy: ``audit(..., seed=result.seed)`` reproduces the result.
    seconds : float
        Wall-clock time.
    scheduler : str
        ``"local"`` or the Dask scheduler's address.
    plug_in_pld : PluginPLD or None
        For integer statistics.
    """

    epsilon_lower: float
    delta: float
    confidence: float
    claimed_epsilon: float | None
    verdict: Verdict
    evidence: float | None
    event: str
    direction: str
    counts: EventCounts
    samples: int
    selection_samples: int
    estimation_samples: int
    pilot_samples: int
    chunks: int
    bins: int
    statistic: str
    seed: int
    seconds: float
    scheduler: str
    plug_in_pld: PluginPLD | None

    @property
    def violation(self) -> bool:
        """Whether the claim is refuted at the stated confidence."""
        return self.verdict == "violation"

    def summary(self) -> str:
        """A few human-readable lines."""
        claim = ""
        if self.claimed_epsilon is not None:
            claim = f" (claimed {self.claimed_epsilon:.6g}: "
            if self.violation:
                claim += f"VIOLATION, evidence {self.evidence:.6g})"
            else:
                claim += "consistent)"
        c = self.counts
        lines = [
            f"ε >= {self.epsilon_lower:.6g} at δ = {self.delta:g}, confidence {self.confidence:.0%}{claim}",
            f"event: {self.event} [{self.direction}], hits {c.first} vs {c.second} of {c.trials} per side",
            f"samples: {self.samples} per side ({self.selection_samples} selection, "
            f"{self.estimation_samples} estimation, pilot {self.pilot_samples}), {self.chunks} chunk(s) "
            f"on {self.scheduler}, {self.seconds:.2f} s",
        ]
        pld = self.plug_in_pld
        if pld is not None:
            lines.append(
                f"plug-in PLD: mean loss {pld.mean_loss:.4g}, max |loss| {pld.max_abs_loss:.4g} "
                f"(bins with >= {pld.min_count} per side), mass seen on one side only "
                f"{pld.mass_first_only:.3g} (D) / {pld.mass_second_only:.3g} (D')"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable dictionary of every field (``seed`` as a decimal string)."""
        out = asdict(self)
        out["seed"] = str(self.seed)  # SeedSequence entropy exceeds JSON's safe integers
        return out


# ---------------------------------------------------------------------------------------
# Binning: a statistic's values -> bin indices, fixed on the pilot
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _IntegerBins:
    """Integers in ``[lo, lo + bins*width)`` in bins of ``width``; values beyond go to the end bins.

    Clipping is monotone, so threshold events on bins are threshold events on the values.
    """

    lo: int
    width: int
    bins: int

    def index(self, values: NDArray[Any]) -> NDArray[np.intp]:
        x = np.asarray(values).astype(np.int64, copy=False)
        return np.clip((x - self.lo) // self.width, 0, self.bins - 1).astype(np.intp)

    def at_least(self, b: int) -> str:
        return f">= {self.lo + b * self.width}"

    def at_most(self, b: int) -> str:
        return f"<= {self.lo + (b + 1) * self.width - 1}"

    def values(self, b: int) -> str:
        first = self.lo + b * self.width
        last = first + self.width - 1
        if b == 0:
            return f"<= {last}"
        if b == self.bins - 1:
            return f">= {first}"
        return str(first) if self.width == 1 else f"[{first}, {last}]"


@dataclass(frozen=True)
class _EdgeBins:
    """Real values in the bins ``(-inf, e0), [e0, e1), ..., [e_last, inf)`` (quantiles of the pilot)."""

    edges: tuple[float, ...]

    @property
    def bins(self) -> int:
        return len(self.edges) + 1

    def index(self, values: NDArray[Any]) -> NDArray[np.intp]:
        x = np.asarray(values, dtype=np.float64)
        return np.searchsorted(np.asarray(self.edges), x, side="right").astype(np.intp)

    def at_least(self, b: int) -> str:
        return f">= {self.edges[b - 1]!r}"

    def at_most(self, b: int) -> str:
        return f"< {self.edges[b]!r}"

    def values(self, b: int) -> str:
        lo = "-inf" if b == 0 else repr(self.edges[b - 1])
        hi = "inf" if b == len(self.edges) else repr(self.edges[b])
        return f"[{lo}, {hi})"


def _integer_bins(values: NDArray[Any], max_bins: int) -> _IntegerBins:
    lo, hi = int(values.min()), int(values.max())
    # Room beyond the pilot's range: later chunks reach further into the tails.
    margin = max(16, (hi - lo) // 2)
    lo, hi = lo - margin, hi + margin
    span = hi - lo + 1
    width = -(-span // max_bins)
    return _IntegerBins(lo, width, -(-span // width))


def _edge_bins(values: NDArray[Any], float_bins: int) -> _EdgeBins:
    x = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise VerificationError("the statistic returned NaN or infinite values on the pilot sample")
    qs = np.quantile(x, np.linspace(0, 1, float_bins + 1)[1:-1], method="inverted_cdf")
    return _EdgeBins(tuple(float(e) for e in np.unique(qs)))


# ---------------------------------------------------------------------------------------
# Sampling in chunks
# ---------------------------------------------------------------------------------------


def _outputs(pair: object, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
    if not (isinstance(pair, tuple) and len(pair) == 2):
        raise VerificationError(f"sample_pair must return a pair of arrays; got {type(pair).__name__}")
    a, b = (np.asarray(x) for x in pair)
    for name, x in (("D", a), ("D'", b)):
        if x.ndim not in (1, 2) or x.shape[0] != size:
            raise VerificationError(
                f"sample_pair(rng, {size}) returned outputs on {name} of shape {x.shape}: "
                f"expected ({size},) or ({size}, d)"
            )
    if a.shape != b.shape:
        raise VerificationError(f"outputs on D and D' differ in shape: {a.shape} versus {b.shape}")
    return a, b


def _reduce(statistic: Statistic, outputs: NDArray[Any]) -> NDArray[Any]:
    t = np.asarray(statistic(outputs))
    if t.shape != (outputs.shape[0],):
        raise VerificationError(
            f"the statistic must map {outputs.shape[0]} outputs to shape ({outputs.shape[0]},); got {t.shape}"
            + (" (vector outputs need a statistic, e.g. CoordinateDifference)" if t.ndim == 2 else "")
        )
    if t.dtype.kind == "b":
        t = t.astype(np.int64)
    return t


@dataclass(frozen=True)
class _Job:
    """Everything a chunk needs (shipped once to Dask workers)."""

    sample_pair: SamplePair
    statistic: Statistic
    binning: _IntegerBins | _EdgeBins
    selection_fraction: float


Histograms = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]


def _count_chunk(job: _Job, seed: np.random.SeedSequence, size: int) -> Histograms:
    """Histograms (selection D, selection D', estimation D, estimation D') of one chunk."""
    rng = np.random.default_rng(seed)
    a, b = _outputs(job.sample_pair(rng, size), size)
    split = round(size * job.selection_fraction)
    n = job.binning.bins
    out = []
    for part in (slice(0, split), slice(split, size)):
        for x in (a, b):
            idx = job.binning.index(_reduce(job.statistic, x[part]))
            out.append(np.bincount(idx, minlength=n).astype(np.int64))
    return out[0], out[1], out[2], out[3]


def _chunk_sizes(samples: int, chunk: int) -> list[int]:
    full, rest = divmod(samples, chunk)
    return [chunk] * full + ([rest] if rest else [])


def _run_local(
    job: _Job, seeds: Sequence[np.random.SeedSequence], sizes: Sequence[int]
) -> Iterator[Histograms]:
    for seed, size in zip(seeds, sizes, strict=True):
        yield _count_chunk(job, seed, size)


def _distributed() -> Any:
    """The :mod:`distributed` module (imported on first use: it is an optional dependency)."""
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - the dask extra is not installed
        raise VerificationError(
            "a scheduler was given but dask.distributed is not installed (pip install 'dpcert[dask]')"
        ) from exc
    return distributed


def _run_dask(
    job: _Job, seeds: Sequence[np.random.SeedSequence], sizes: Sequence[int], client: Any
) -> Iterator[Histograms]:
    as_completed = _distributed().as_completed
    shipped = client.scatter(job, broadcast=True)
    futures = [
        client.submit(_count_chunk, shipped, seed, size, pure=False)
        for seed, size in zip(seeds, sizes, strict=True)
    ]
    try:
        # The client's own loop: with a client made from an address (set_as_default=False),
        # as_completed would otherwise look for a default client and find none.
        for future in as_completed(futures, loop=client.loop):
            result: Histograms = future.result()
            future.release()
            yield result
    finally:
        client.cancel(futures)


def _client(scheduler: object) -> tuple[Any, bool, str]:
    """A Dask client for ``scheduler`` (an address or a client), whether we own it, and its address."""
    if isinstance(scheduler, str):
        if not scheduler:
            raise ParameterError("scheduler", scheduler, "None, a Dask scheduler address or a Client")
        return _distributed().Client(scheduler, set_as_default=False), True, scheduler
    if hasattr(scheduler, "submit") and hasattr(scheduler, "scatter"):
        address = getattr(getattr(scheduler, "scheduler", None), "address", None) or "dask"
        return scheduler, False, str(address)
    raise ParameterTypeError("scheduler", scheduler, "None, a Dask scheduler address (str) or a Client")


# ---------------------------------------------------------------------------------------
# Event selection (first half) and the bound (second half)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Event:
    mask: NDArray[np.bool_]
    reverse: bool
    description: str
    score: float


def _wilson(hits: NDArray[np.float64], n: int, z: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson score bounds (one-sided at ``z``): a fast, smooth stand-in for Clopper–Pearson.

    Used only to *rank* candidate events on the selection half (any rule is valid there);
    it penalizes events with few samples, as the final Clopper–Pearson bound will.
    """
    p = hits / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def _candidates(
    num: NDArray[np.int64], den: NDArray[np.int64], ratio: NDArray[np.float64] | None
) -> Iterator[tuple[str, NDArray[np.int64], NDArray[np.int64], NDArray[np.intp]]]:
    """Families of nested events as (kind, cumulative num counts, cumulative den counts, order).

    Each family lists bins in an order; the k-th event is the first k + 1 bins of it. The
    likelihood-ratio order comes from the pilot, not from the counts ranked here: ranked by
    their own noisy ratios, the top bins of the selection half always look better than they are.
    """
    n = num.size
    up = np.arange(n - 1, -1, -1, dtype=np.intp)  # {T >= t}: bins from the top down
    down = np.arange(n, dtype=np.intp)  # {T <= t}
    families = [("at-least", up), ("at-most", down)]
    if ratio is not None:
        families.append(("ratio", np.argsort(-ratio, kind="stable").astype(np.intp)))
    for kind, order in families:
        yield kind, np.cumsum(num[order]), np.cumsum(den[order]), order


def _select(
    sel_a: NDArray[np.int64],
    sel_b: NDArray[np.int64],
    n: int,
    delta: float,
    alpha: float,
    binning: _IntegerBins | _EdgeBins,
    statistic: str,
    pilot: tuple[NDArray[np.int64], NDArray[np.int64]] | None,
) -> _Event:
    """The event and direction with the best ε bound on the selection half.

    ``pilot`` holds the pilot's histograms, which order the bins by likelihood ratio
    (None: threshold events only).
    """
    from scipy.stats import norm

    # Simultaneous bounds over every candidate (Bonferroni): with a per-event level the
    # maximum over thousands of sparse tail sets is a winner's curse (a set seen 10 times on
    # D and never on D' looks like ε ≈ 0.2 on its own half and is worthless on the other).
    families = 3 if pilot is not None else 2
    z = float(norm.isf(alpha / (2 * 2 * families * max(binning.bins - 1, 1))))
    best: _Event | None = None
    for reverse in (False, True):
        num, den = (sel_b, sel_a) if reverse else (sel_a, sel_b)
        ratio = None
        if pilot is not None:
            # Empirical likelihood ratio of the pilot, add-½ smoothed, highest first.
            p_num, p_den = (pilot[1], pilot[0]) if reverse else pilot
            ratio = (p_num + 0.5) / (p_den + 0.5)
        for kind, cum_num, cum_den, order in _candidates(num, den, ratio):
            # Proper nonempty subsets only: the whole space distinguishes nothing.
            k = cum_num[:-1].astype(np.float64)
            m = cum_den[:-1].astype(np.float64)
            if k.size == 0:
                continue
            p_lo, _ = _wilson(k, n, z)
            _, q_hi = _wilson(m, n, z)
            with np.errstate(divide="ignore", invalid="ignore"):
                score = np.log((p_lo - delta) / q_hi)
            score = np.where(np.isnan(score), -np.inf, score)
            i = int(np.argmax(score))
            if best is not None and not score[i] > best.score:
                continue
            mask = np.zeros(binning.bins, dtype=bool)
            mask[order[: i + 1]] = True
            best = _Event(mask, reverse, _describe(kind, order, i, binning, statistic), float(score[i]))
    if best is None:
        raise VerificationError("the statistic took a single value on the pilot: no event can distinguish")
    return best


def _describe(
    kind: str, order: NDArray[np.intp], i: int, binning: _IntegerBins | _EdgeBins, name: str
) -> str:
    if kind == "at-least":
        return f"{name} {binning.at_least(int(order[i]))}"
    if kind == "at-most":
        return f"{name} {binning.at_most(int(order[i]))}"
    chosen = sorted(int(b) for b in order[: i + 1])
    if len(chosen) <= 6:
        return f"{name} in {{{', '.join(binning.values(b) for b in chosen)}}}"
    return f"{name} in the {len(chosen)} bins (of {binning.bins}) of highest empirical likelihood ratio"


def _plug_in_pld(
    a: NDArray[np.int64], b: NDArray[np.int64], claimed: float | None, min_count: int
) -> PluginPLD:
    na, nb = int(a.sum()), int(b.sum())
    p, q = a / na, b / nb
    both = (a > 0) & (b > 0)
    loss = np.log(p[both] / q[both])
    well = (a[both] >= min_count) & (b[both] >= min_count)
    delta_at: float | None = None
    if claimed is not None:
        with np.errstate(over="ignore"):
            factor = math.exp(claimed) if claimed < 700 else math.inf
            # where y = 0 the term is x itself (inf * 0 would make it NaN for an infinite claim)
            hockey = [
                float(np.maximum(0.0, np.where(y > 0, x - factor * y, x)).sum()) for x, y in ((p, q), (q, p))
            ]
        delta_at = max(hockey)
    return PluginPLD(
        support=int(((a > 0) | (b > 0)).sum()),
        shared=int(both.sum()),
        min_count=min_count,
        max_abs_loss=float(np.abs(loss[well]).max()) if well.any() else 0.0,
        mean_loss=float((p[both] * loss).sum()),
        mean_loss_reverse=float((q[both] * -loss).sum()),
        mass_first_only=float(p[(a > 0) & (b == 0)].sum()),
        mass_second_only=float(q[(b > 0) & (a == 0)].sum()),
        delta_at_claimed=delta_at,
    )


def _fit_discriminant(a: NDArray[Any], b: NDArray[Any]) -> Projection:
    """Fisher's linear discriminant ``w = (Σ + λI)^{-1} (μ_D - μ_D')`` fitted on the pilot.

    A small ridge ``λ = 1e-8 · tr(Σ)/d`` keeps ``Σ`` invertible and makes directions with
    (almost) no noise dominate: noise shared by every coordinate (spec §4.7) has a rank-one
    covariance, and the discriminant then projects it out.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    d = x.shape[1]
    sigma = (np.cov(x, rowvar=False) + np.cov(y, rowvar=False)).reshape(d, d) / 2
    ridge = 1e-8 * max(float(np.trace(sigma)) / d, 1e-300)
    w = np.linalg.solve(sigma + ridge * np.eye(d), x.mean(axis=0) - y.mean(axis=0))
    scale = float(np.abs(w).max())
    return Projection(tuple(float(c) for c in (w / scale if scale > 0 else np.ones(d))))


# ---------------------------------------------------------------------------------------
# The auditor
# ---------------------------------------------------------------------------------------


def audit(
    sample_pair: SamplePair,
    delta: float = 0.0,
    claimed_epsilon: float | None = None,
    *,
    samples: int = 1_000_000,
    confidence: float = 0.95,
    chunk: int = 1_000_000,
    seed: int | np.random.SeedSequence | None = None,
    statistic: Statistic | None = None,
    scheduler: str | Client | None = None,
    selection_fraction: float = 0.5,
    pilot: int = 65_536,
    ratio_sets: bool = True,
    max_bins: int = 65_536,
    float_bins: int = 1_024,
    min_count: int = 100,
) -> AuditResult:
    """Audit a mechanism from samples: a lower bound on ε at ``delta``, with ``confidence``.

    See the module docstring for the method (event selection on the first part of every
    chunk, Clopper–Pearson bounds on the rest; Jagielski, Ullman & Oprea 2020).

    Parameters
    ----------
    sample_pair : callable
        ``sample_pair(rng, size) -> (outputs on D, outputs on D')``: ``size`` independent
        outputs on each of two neighbouring inputs, arrays of shape ``(size,)`` or
        ``(size, d)``. Use only ``rng`` for randomness. For ``scheduler`` it must pickle.
    delta : float
        The ``δ`` of the claim, in ``[0, 1)``.
    claimed_epsilon : float or None
        The ε the mechanism claims at ``delta`` (``>= 0``, may be ``inf``).
    samples : int
        Samples per side (selection and estimation together), ``>= 100``.
    confidence : float
        The probability, over the auditor's randomness, that ``ε_lb`` is a true lower bound.
    chunk : int
        Samples per side drawn at once; memory is proportional to it.
    seed : int, SeedSequence or None
        Root of the :class:`numpy.random.SeedSequence` whose spawned children seed the
        pilot and each chunk. None draws fresh entropy (reported as ``result.seed``).
    statistic : callable or None
        Maps outputs ``(size,)``/``(size, d)`` to scalars ``(size,)``; integer results are
        binned exactly, real ones by quantiles of the pilot. Default: the identity for
        scalar outputs, and for vector outputs Fisher's linear discriminant fitted on the
        pilot (see :class:`Projection`, :class:`CoordinateDifference` for fixed choices).
    scheduler : None, str or distributed.Client
        None runs the chunks here; a Dask scheduler address or client runs them as tasks.
    selection_fraction : float
        The part of each chunk used to choose the event, in ``(0, 1)``.
    pilot : int
        Extra samples per side, drawn first and never used for the bound, that fix the
        binning (and the default vector statistic).
    ratio_sets : bool
        Also consider the sets of bins with the largest empirical likelihood ratio.
    max_bins : int
        The most bins for an integer statistic (wider ranges are binned in equal widths).
    float_bins : int
        Quantile bins for a real statistic.
    min_count : int
        Per-bin count for the plug-in PLD's ``max_abs_loss``.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> from accounting import DiscreteLaplace
    >>> r = audit(additive_pair(DiscreteLaplace(10)), claimed_epsilon=0.1, samples=10**5, seed=1)
    >>> r.verdict
    'consistent'
    """
    started = time.perf_counter()
    if not callable(sample_pair):
        raise ParameterTypeError("sample_pair", sample_pair, "a callable sample_pair(rng, size)")
    d = _delta(delta)
    claim: float | None = None
    if claimed_epsilon is not None:
        if isinstance(claimed_epsilon, bool) or not isinstance(claimed_epsilon, numbers.Real | mpmath.mpf):
            raise ParameterTypeError("claimed_epsilon", claimed_epsilon, "a real number >= 0, inf, or None")
        claim = float(claimed_epsilon)
        if math.isnan(claim) or claim < 0:
            raise ParameterError("claimed_epsilon", claimed_epsilon, "a real number >= 0, inf, or None")
    n_samples = v.integer("samples", samples, minimum=100)
    level = v.open_unit("confidence", confidence)
    chunk_size = v.integer("chunk", chunk, minimum=10)
    fraction = v.open_unit("selection_fraction", selection_fraction)
    n_pilot = v.integer("pilot", pilot, minimum=100)
    n_max_bins = v.integer("max_bins", max_bins, minimum=2)
    n_float_bins = v.integer("float_bins", float_bins, minimum=2)
    n_min_count = v.integer("min_count", min_count, minimum=1)
    if statistic is not None and not callable(statistic):
        raise ParameterTypeError("statistic", statistic, "a callable statistic(outputs) or None")
    if seed is not None and not isinstance(seed, np.random.SeedSequence):
        seed = v.integer("seed", seed, minimum=0)
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    entropy = root.entropy
    if not isinstance(entropy, int):
        raise ParameterError("seed", seed, "a SeedSequence with integer entropy")
    client: Any = None
    owned = False
    where = "local"
    if scheduler is not None:
        client, owned, where = _client(scheduler)

    try:
        sizes = _chunk_sizes(n_samples, chunk_size)
        pilot_seed, *chunk_seeds = root.spawn(1 + len(sizes))

        # The pilot fixes the statistic (for vectors) and the binning; it is not used again.
        pilot_a, pilot_b = _outputs(sample_pair(np.random.default_rng(pilot_seed), n_pilot), n_pilot)
        if statistic is None:
            statistic = _identity if pilot_a.ndim == 1 else _fit_discriminant(pilot_a, pilot_b)
        t_pilot = np.concatenate([_reduce(statistic, pilot_a), _reduce(statistic, pilot_b)])
        binning: _IntegerBins | _EdgeBins
        if t_pilot.dtype.kind in "iu":
            binning = _integer_bins(t_pilot, n_max_bins)
        elif t_pilot.dtype.kind == "f":
            binning = _edge_bins(t_pilot, n_float_bins)
        else:
            raise VerificationError(f"the statistic must return integers or reals; got dtype {t_pilot.dtype}")

        job = _Job(sample_pair, statistic, binning, fraction)
        runs = (
            _run_local(job, chunk_seeds, sizes)
            if client is None
            else _run_dask(job, chunk_seeds, sizes, client)
        )
        totals = [np.zeros(binning.bins, dtype=np.int64) for _ in range(4)]
        for hist in runs:
            for total, h in zip(totals, hist, strict=True):
                total += h
    finally:
        if owned and client is not None:
            client.close()

    sel_a, sel_b, est_a, est_b = totals
    n_sel = int(sel_a.sum())
    n_est = int(est_a.sum())
    if n_sel == 0 or n_est == 0:
        raise VerificationError(
            f"samples={n_samples} with chunk={chunk_size} and selection_fraction={fraction} leaves an "
            "empty selection or estimation half"
        )
    alpha = 1 - level
    name = _statistic_name(statistic)
    pilot_hists = None
    if ratio_sets:
        pilot_idx = binning.index(t_pilot)
        pilot_hists = (
            np.bincount(pilot_idx[:n_pilot], minlength=binning.bins).astype(np.int64),
            np.bincount(pilot_idx[n_pilot:], minlength=binning.bins).astype(np.int64),
        )
    event = _select(sel_a, sel_b, n_sel, d, alpha, binning, name, pilot_hists)
    num, den = (est_b, est_a) if event.reverse else (est_a, est_b)
    counts = EventCounts(int(num[event.mask].sum()), int(den[event.mask].sum()), n_est)
    eps_lb = epsilon_lower_bound(counts.first, counts.second, counts.trials, delta=d, confidence=level)

    verdict: Verdict = "no claim"
    evidence: float | None = None
    if claim is not None:
        verdict = "violation" if eps_lb > claim else "consistent"
        evidence = _evidence(counts.first, counts.second, counts.trials, d, claim)
    pld = None
    if isinstance(binning, _IntegerBins):
        pld = _plug_in_pld(sel_a + est_a, sel_b + est_b, claim, n_min_count)
    return AuditResult(
        epsilon_lower=eps_lb,
        delta=d,
        confidence=level,
        claimed_epsilon=claim,
        verdict=verdict,
        evidence=evidence,
        event=event.description,
        direction="D'/D" if event.reverse else "D/D'",
        counts=counts,
        samples=n_samples,
        selection_samples=n_sel,
        estimation_samples=n_est,
        pilot_samples=n_pilot,
        chunks=len(sizes),
        bins=binning.bins,
        statistic=name,
        seed=entropy,
        seconds=time.perf_counter() - started,
        scheduler=where,
        plug_in_pld=pld,
    )

"""The algorithms of the distributed MAB paper and their settings (a :class:`Learner` is a value).

Algorithm 1 of Chowdhury & Zhou (2023), "Distributed differential privacy in multi-armed bandits",
§3: private batched successive elimination. Batch ``b`` pulls each active arm ``l(b) = η^b`` times
(``η`` = ``growth``, 2 or 4), one new user per pull; the ``l(b)`` rewards of an arm go through the
protocol of the algorithm's :class:`~accounting.papers.distributed_dp_mab.Variant`
(:mod:`learners.protocols`, parameters from
:func:`accounting.papers.distributed_dp_mab.protocol_parameters`). Algorithms (:data:`ALGORITHMS`):

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
``dp-se``               —                               Sajed & Sheffet 2019 as the paper's
                                                        experiments run it (§7, App. J)
``se``                  —                               no privacy
======================  ==============================  ==========================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from accounting import validate as v
from accounting.papers.distributed_dp_mab import Variant
from learners.errors import ParameterError, ParameterTypeError
from learners.runs import make_settings

__all__ = [
    "ALGORITHMS",
    "NOISE_PATHS",
    "Algorithm",
    "Learner",
    "make_learner",
    "real_in",
]


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


def real_in(name: str, value: object, low: float, high: float = math.inf, *, open_low: bool = True) -> float:
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
    scaling : float or None
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
    radius_scale : float
        Multiplier of the confidence radius (experiments: 1).
    noise : {"total", "shares"}
        See :mod:`learners.mab.engine`.
    exact : bool
        Draw noise with the exact integer samplers (slow; for the ``"shares"`` path and audits).
    dropout : float
        With ``noise="shares"``: the fraction of each aggregate's users (rounded down, chosen at
        random) whose message never arrives; the survivors top the noise up
        (:class:`~learners.protocols.Protocol`) and the estimate divides by the survivors (see the
        module docstring of :mod:`learners.mab.engine`). Below 1/2, so secure aggregation's majority
        threshold can always recover the dropped users' masks.
    """

    name: str
    epsilon: float | None = None
    scaling: float | None = None
    growth: int | None = None
    forgetting: bool = True
    p_beta: float = 0.1
    p_tau: float | None = None
    radius_scale: float = 1.0
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
            object.__setattr__(self, "epsilon", real_in("epsilon", self.epsilon, 0.0))
        elif self.epsilon is not None:
            raise ParameterError("epsilon", self.epsilon, f"None for the non-private '{self.name}'")
        if algorithm.scaled:
            if self.scaling is None:
                raise ParameterError("scaling", None, f"a scaling factor s >= 1 (required by '{self.name}')")
            object.__setattr__(self, "scaling", real_in("scaling", self.scaling, 1.0, open_low=False))
        elif self.scaling is not None:
            raise ParameterError("scaling", self.scaling, f"None ('{self.name}' has no scaling factor s)")
        if self.growth is None:
            object.__setattr__(self, "growth", 2 if self.name == "dp-se" else 4)
        growth = v.integer("growth", self.growth)
        if growth not in (2, 4):
            raise ParameterError("growth", self.growth, "2 or 4 (batch size l(b) = growth**b)")
        object.__setattr__(self, "growth", growth)
        if not isinstance(self.forgetting, bool):
            raise ParameterTypeError("forgetting", self.forgetting, "a bool")
        object.__setattr__(self, "p_beta", real_in("p_beta", self.p_beta, 0.0, 1.0))
        if self.p_tau is not None:
            object.__setattr__(self, "p_tau", real_in("p_tau", self.p_tau, 0.0, 1.0))
        object.__setattr__(self, "radius_scale", real_in("radius_scale", self.radius_scale, 0.0))
        if self.noise not in NOISE_PATHS:
            raise ParameterError("noise", self.noise, "one of " + ", ".join(NOISE_PATHS))
        if not isinstance(self.exact, bool):
            raise ParameterTypeError("exact", self.exact, "a bool")
        if self.exact and self.noise != "shares":
            raise ParameterError(
                "exact", self.exact, "False unless noise='shares' (exact samplers draw shares)"
            )
        object.__setattr__(self, "dropout", real_in("dropout", self.dropout, 0.0, 0.5, open_low=False))
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
        return f"{base}(s={self.scaling:g})" if self.scaling is not None else base


#: Old spellings of :class:`Learner`'s settings: ``scale`` was the paper's scaling factor ``s``
#: (``scale`` is a noise's scale ``b`` everywhere else in dpcert); ``crs`` the radius multiplier,
#: ``radius_scale`` in every family.
OLD_PARAMS = {"scale": "scaling", "crs": "radius_scale"}


def make_learner(name: str, epsilon: float | None = None, **params: Any) -> Learner:
    """A validated :class:`Learner`; unknown settings are an error naming them (``scale=`` is the
    old spelling of ``scaling=``, accepted with a note)."""
    return make_settings(Learner, name, epsilon, params, OLD_PARAMS)

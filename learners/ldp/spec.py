"""The algorithms of the LDP bandits paper and their settings (a :class:`Learner` is a value).

Zheng, Cai, Huang, Li & Wang (2020), "Locally Differentially Private (Contextual) Bandits
Learning" (NeurIPS 2020): :data:`ALGORITHMS`, the randomizers a learner may use
(:data:`MECHANISMS`), its modes and calibrations, and :class:`Learner`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accounting import validate as v
from learners.errors import ParameterError, ParameterTypeError
from learners.ldp.bases import FKM, OnePointBase
from learners.runs import make_settings

__all__ = [
    "ALGORITHMS",
    "CALIBRATIONS",
    "MAX_HORIZON",
    "MECHANISMS",
    "MODES",
    "PURE_MECHANISMS",
    "RADII",
    "Learner",
    "make_learner",
]


ALGORITHMS = ("one-point", "two-point", "ldp-linucb", "ldp-glm")
MODES = ("paper", "code")
CALIBRATIONS = ("exact", "classic")
#: A private one- or two-point learner's randomizer (``mechanism``): the Gaussian mechanism
#: (``(ε, δ)``), the Laplace mechanism (pure ``ε``) or randomized response (pure ``ε``, one-point
#: only; :func:`~learners.ldp.randomizers.privatize_loss`).
MECHANISMS = ("gaussian", "laplace", "randomized-response")
#: The mechanisms of pure ε-LDP (no δ).
PURE_MECHANISMS = ("laplace", "randomized-response")
#: The algorithms that take each mechanism.
_TAKERS = {
    "gaussian": ALGORITHMS,
    "laplace": ("one-point", "two-point"),
    "randomized-response": ("one-point",),
}
RADII = ("code", "derived")

#: The longest horizon (a run's arrays are per round chunk; the bound is the loop's patience).
MAX_HORIZON = 10**8


@dataclass(frozen=True)
class Learner:
    """One algorithm with its settings (a value; build it with :func:`make_learner`).

    Attributes
    ----------
    name : str
        One of :data:`ALGORITHMS`.
    epsilon : float or None
        ``ε > 0``; ``None``: no privacy (Algorithms 1 and 2 only, the non-private baseline).
    delta : float or None
        ``δ ∈ (0, 1)``; ``None`` with an ε: pure ε-LDP (Algorithms 1, 2; ``mechanism``).
    mechanism : {"gaussian", "laplace", "randomized-response"} or None
        The randomizer of a private learner (:data:`MECHANISMS`); ``None``: the Gaussian mechanism
        with a ``delta``, the Laplace mechanism without. ``"randomized-response"``: Algorithm 1
        only, pure ε (:func:`~learners.ldp.randomizers.privatize_loss`). Resolved to the name
        (``None`` without privacy).
    mode : {"paper", "code"}
        ``"code"``: the official code's constants (``ldp-linucb`` only; :mod:`learners.ldp.recipes`).
    calibration : {"exact", "classic"}
        The Gaussian noise multiplier (:mod:`learners.ldp.recipes`); ignored by ``mode="code"`` and Laplace.
    base : OnePointBase or None
        Algorithm 1's black box (default :class:`FKM`); only for ``one-point``.
    alpha : float
        The failure probability ``α`` of ``Υ_t``, ``β_t`` (contextual).
    bound, lipschitz : float or None
        ``B`` and ``G`` (``None``: the instance's).
    strong_convexity : float or None
        ``two-point``: ``μ`` for ``η_t = 1/(μt)`` (``None``: ``η = 1/√T``).
    eta, rho : float or None
        ``two-point``: override ``η`` and ``ρ``.
    reward_bound : float
        ``ldp-linucb``: ``Y``, rewards clipped to ``[-Y, Y]`` by the user (the paper's 2).
    gradient_bound : float or None
        ``ldp-glm``: ``C`` (``None``: the link's, :func:`~learners.ldp_instances.link_constants`).
    step : float or None
        ``ldp-glm``: ``ζ`` (``None``: ``1/√T``).
    radius : {"code", "derived"} or None
        ``ldp-linucb``'s ``β_t``; ``None``: ``"code"`` in ``mode="code"``, else ``"derived"``
        (resolved to the name).
    radius_scale : float
        A factor on ``β_t`` (``ldp-glm``: the ``κ`` of ``β_t² = κCσ sqrt(dt)/μ``).
    """

    name: str
    epsilon: float | None = None
    delta: float | None = None
    mechanism: str | None = None
    mode: str = "paper"
    calibration: str = "exact"
    base: OnePointBase | None = None
    alpha: float = 0.1
    bound: float | None = None
    lipschitz: float | None = None
    strong_convexity: float | None = None
    eta: float | None = None
    rho: float | None = None
    reward_bound: float = 2.0
    gradient_bound: float | None = None
    step: float | None = None
    radius: str | None = None
    radius_scale: float = 1.0

    def __post_init__(self) -> None:
        name = v.choice("algorithm", self.name, ALGORITHMS)
        mode = v.choice("mode", self.mode, MODES)
        v.choice("calibration", self.calibration, CALIBRATIONS)
        if self.radius is None:
            object.__setattr__(self, "radius", "code" if mode == "code" else "derived")
        v.choice("radius", self.radius, RADII)
        contextual = name in ("ldp-linucb", "ldp-glm")
        object.__setattr__(self, "mechanism", self._mechanism(name))
        if mode == "code" and name != "ldp-linucb":
            raise ParameterError("mode", mode, "'paper' (the official code implements only ldp-linucb)")
        if self.epsilon is None:
            if contextual:
                raise ParameterError(
                    "epsilon", None, f"a real number > 0 ('{name}' is private by construction)"
                )
            if self.delta is not None:
                raise ParameterError("delta", self.delta, "None without an epsilon (a non-private run)")
        else:
            object.__setattr__(self, "epsilon", v.positive("epsilon", self.epsilon))
            if self.delta is None:
                if contextual:
                    raise ParameterError(
                        "delta",
                        None,
                        f"a real number in the open interval (0, 1) ('{name}' is (ε, δ)-LDP only)",
                    )
            else:
                object.__setattr__(self, "delta", v.open_unit("delta", self.delta))
        if name == "one-point":
            base = FKM() if self.base is None else self.base
            if not isinstance(base, OnePointBase):
                raise ParameterTypeError(
                    "base", self.base, "a one-point base learner (FKM, ADXOnePoint, ..., UCB)"
                )
            object.__setattr__(self, "base", base)
        elif self.base is not None:
            raise ParameterError("base", self.base, "None (only 'one-point' takes a base learner)")
        object.__setattr__(self, "alpha", v.open_unit("alpha", self.alpha))
        for attr in ("bound", "lipschitz", "strong_convexity", "eta", "gradient_bound", "step"):
            if getattr(self, attr) is not None:
                object.__setattr__(self, attr, v.positive(attr, getattr(self, attr)))
        if self.rho is not None:
            object.__setattr__(self, "rho", v.interval("rho", self.rho, 0.0, 1.0, high_open=True))
        object.__setattr__(self, "reward_bound", v.positive("reward_bound", self.reward_bound))
        object.__setattr__(self, "radius_scale", v.positive("radius_scale", self.radius_scale))

    def _mechanism(self, name: str) -> str | None:
        """The randomizer's name, or ``None`` without privacy: a given one must be one the algorithm
        takes (:data:`_TAKERS`), and pure exactly when ``delta`` is ``None``."""
        if self.mechanism is not None:
            mechanism = v.choice("mechanism", self.mechanism, MECHANISMS)
            if name not in _TAKERS[mechanism]:
                takers = " and ".join(f"'{a}'" for a in _TAKERS[mechanism])
                raise ParameterError(
                    "mechanism", mechanism, f"'gaussian': only {takers} take(s) the {mechanism} mechanism"
                )
            if self.epsilon is None:
                raise ParameterError("mechanism", mechanism, "None without an epsilon (a non-private run)")
            if mechanism in PURE_MECHANISMS and self.delta is not None:
                raise ParameterError("delta", self.delta, f"None with mechanism '{mechanism}' (pure ε-LDP)")
            if mechanism not in PURE_MECHANISMS and self.delta is None:
                raise ParameterError(
                    "delta", None, "a real number in the open interval (0, 1) (the Gaussian mechanism)"
                )
            return mechanism
        if self.epsilon is None:
            return None
        return "gaussian" if self.delta is not None else "laplace"

    @property
    def private(self) -> bool:
        return self.epsilon is not None

    @property
    def label(self) -> str:
        """A display label naming the mode, e.g. ``LDP-LinUCB(ε=1, paper)``."""
        base = {"one-point": "Alg1", "two-point": "Alg2", "ldp-linucb": "LDP-LinUCB", "ldp-glm": "LDP-GLM"}[
            self.name
        ]
        if self.name == "one-point" and self.base is not None:
            base += f"[{self.base.name}]"
        inner = "non-private" if self.epsilon is None else f"ε={self.epsilon:g}, {self.mode}"
        return f"{base}({inner})"


def make_learner(name: str, epsilon: float | None = None, **params: Any) -> Learner:
    """A validated :class:`Learner`; unknown settings are an error naming them."""
    return make_settings(Learner, name, epsilon, params)

"""What a run of DP-DPE or DP-PE returns (Li, Zhou & Ji 2022): its curves, communication and ledgers.

:class:`RunResult` is the outcome of :func:`learners.phased.run` for ``R`` repetitions;
:class:`PhaseRecord` is what one phase did, given to the run's observer (for audits and tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from accounting.accountant import Accountant
from learners.phased.noise import Noise
from learners.phased.privacy import Privacy, privacy_of
from learners.phased.spec import Learner

__all__ = ["PhaseRecord", "RunResult"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class PhaseRecord:
    """What one phase did, for the repetitions ``reps`` that finished it (given to ``run``'s observer).

    Arrays have a leading axis over ``reps`` (``n``); per-action arrays are over the support,
    padded to the largest (``support = -1``, ``counts = 0`` in the padding).
    """

    phase: int
    h: float
    reps: IntArray
    start: IntArray  # (n,): t_l
    clients: int  # |U_l| (DP-DPE); 0 for DP-PE (T_l(x) clients per action)
    support: IntArray  # (n, s): action indices played, in play order
    counts: IntArray  # (n, s): T_l(x)
    average: FloatArray  # (n, s): the non-private average (DP-DPE) or sum (DP-PE) of the clipped reports
    released: FloatArray  # (n, s): ỹ_l
    noise_sd: FloatArray  # (n, s): sd of ỹ_l - average (Gaussian), or the bound on it the width uses
    sigma_n: FloatArray  # (n,): σ_n in the width
    width: FloatArray  # (n,): W_l
    theta_hat: FloatArray  # (n, d)
    active: BoolArray  # (n, k): D_l
    eliminated: BoolArray  # (n, k): E_l
    messages: IntArray  # (n,): communication of the phase, in the model's unit (reals or bits)


@dataclass(frozen=True, eq=False)
class RunResult:
    """The outcome of :func:`run` for ``R`` repetitions (arrays read-only).

    Attributes
    ----------
    learner : Learner
    mode : str
        ``"faithful"`` or ``"practical"`` (also in :attr:`Learner.label`).
    horizon : int
    rounds : numpy.ndarray of int64, shape (C,)
    pseudo_regret : numpy.ndarray, shape (R, C)
        ``Σ_{t<=T} ⟨θ*, x* - x_t⟩`` (eq. 1).
    realized_regret : numpy.ndarray, shape (R, C)
        See :mod:`learners.phased.engine`.
    phases : numpy.ndarray of int64, shape (R,)
        Phases that finished (and released) before ``T``.
    clients : numpy.ndarray of int64, shape (R,)
        Users sampled (each reports once).
    reals, bits : numpy.ndarray of int64, shape (R,)
        Communication: reals sent (0 for the shuffle protocols), and bits (64 per real, or the
        protocols' one-bit messages).
    final_arms : numpy.ndarray of int64, shape (R,)
        ``|D|`` at the end.
    noise : Noise
    beta : float
        The widths' ``β``.
    delta : float
        The δ of :attr:`privacy`.
    """

    learner: Learner
    mode: str
    horizon: int
    rounds: IntArray
    pseudo_regret: FloatArray
    realized_regret: FloatArray
    phases: IntArray
    clients: IntArray
    reals: IntArray
    bits: IntArray
    final_arms: IntArray
    noise: Noise
    beta: float
    delta: float
    _ledgers: Mapping[int, Accountant] = field(repr=False)

    @property
    def unit(self) -> str:
        """The unit of :attr:`communication` (eq. 2): ``"bits"`` for the shuffle protocols, else
        ``"reals"``."""
        return "bits" if self.noise.kind == "protocol" else "reals"

    @property
    def communication(self) -> IntArray:
        """``C(T)`` (eq. 2) in :attr:`unit`, shape ``(R,)``."""
        return self.bits if self.unit == "bits" else self.reals

    @property
    def ledgers(self) -> dict[int, Accountant]:
        """The ledger of a client of each phase that released, keyed by the phase (copies)."""
        return {n: acc.copy() for n, acc in self._ledgers.items()}

    @cached_property
    def privacy(self) -> Privacy:
        """:func:`privacy_of` the run's ledgers at :attr:`delta`."""
        return privacy_of(self.learner, self._ledgers, self.delta)

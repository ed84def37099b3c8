"""The shuffle model: amplification by shuffling and the shuffle summation protocols.

Where ``dp-account shuffle`` and ``dp-account shuffle-protocol`` find what they account; the
results live in two modules, re-exported here:

* :mod:`accounting.amplification` — ``n`` users each run an ``ε0``-LDP randomizer and a shuffler
  permutes the reports: Erlingsson et al. 2019 (:func:`efmrtt`), Balle, Bell, Gascón & Nissim
  2019 (:func:`blanket_generic`, :func:`blanket_randomized_response`), Feldman, McMillan & Talwar
  2021 (:func:`fmt_closed`, :func:`fmt_numerical`, :func:`fmt_delta`), the exact shuffled
  randomized response (:func:`randomized_response_exact`), and :func:`amplify`, which dispatches
  by name;
* :mod:`accounting.summation` — the shuffle summation protocols of Cheu, Joseph, Mao & Peng 2021
  (bits with binomial noise), accounted exactly (:func:`shuffle_sum_ledger`,
  :func:`shuffle_sum_epsilon`, ...) and calibrated by that accounting
  (:func:`shuffle_sum_calibration`).

The amplification lemma and the σ0 recipe of Zhou & Chowdhury 2024 (Lemma F.2, Theorem 5.3) are in
:mod:`accounting.papers.federated_lcb`, and the relaxed secure aggregation split of Chowdhury &
Zhou 2023 (Theorem 3) in :mod:`accounting.papers.distributed_dp_mab`; both are re-exported by the
:mod:`accounting` package root.
"""

from __future__ import annotations

from accounting.amplification import (
    BOUNDS,
    MAX_USERS,
    MIN_DELTA,
    RR_EXACT_MAX_USERS,
    AmplificationBound,
    amplify,
    blanket_generic,
    blanket_randomized_response,
    efmrtt,
    fmt_closed,
    fmt_delta,
    fmt_numerical,
    randomized_response_exact,
)
from accounting.amplification import MIN_EPSILON0 as MIN_EPSILON0
from accounting.amplification.clones import IntArray as IntArray
from accounting.summation import (
    ShuffleSumCalibration,
    shuffle_sum_calibration,
    shuffle_sum_delta,
    shuffle_sum_epsilon,
    shuffle_sum_exact,
    shuffle_sum_ledger,
    shuffle_sum_noise,
    shuffle_sum_rdp,
)
from accounting.summation import ShuffleSumParameters as ShuffleSumParameters
from accounting.summation import shuffle_sum_parameters as shuffle_sum_parameters

__all__ = [
    "BOUNDS",
    "MAX_USERS",
    "MIN_DELTA",
    "RR_EXACT_MAX_USERS",
    "AmplificationBound",
    "ShuffleSumCalibration",
    "amplify",
    "blanket_generic",
    "blanket_randomized_response",
    "efmrtt",
    "fmt_closed",
    "fmt_delta",
    "fmt_numerical",
    "randomized_response_exact",
    "shuffle_sum_calibration",
    "shuffle_sum_delta",
    "shuffle_sum_epsilon",
    "shuffle_sum_exact",
    "shuffle_sum_ledger",
    "shuffle_sum_noise",
    "shuffle_sum_rdp",
]

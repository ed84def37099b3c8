"""``accounting.shuffle`` is where the shuffle model's results were first written: every name it had
is still importable from it (the generic ones) or from the :mod:`accounting` root (the papers'
recipes), and is the same object as where it now lives."""

from __future__ import annotations

import accounting
from accounting import amplification, calibration, shuffle, summation
from accounting.papers import distributed_dp_mab, federated_lcb

AMPLIFICATION = (
    "BOUNDS",
    "MAX_USERS",
    "MIN_DELTA",
    "MIN_EPSILON0",
    "RR_EXACT_MAX_USERS",
    "AmplificationBound",
    "amplify",
    "blanket_generic",
    "blanket_randomized_response",
    "efmrtt",
    "fmt_closed",
    "fmt_delta",
    "fmt_numerical",
    "randomized_response_exact",
)
SUMMATION = (
    "ShuffleSumCalibration",
    "ShuffleSumParameters",
    "shuffle_sum_calibration",
    "shuffle_sum_delta",
    "shuffle_sum_epsilon",
    "shuffle_sum_exact",
    "shuffle_sum_ledger",
    "shuffle_sum_noise",
    "shuffle_sum_parameters",
    "shuffle_sum_rdp",
)


def test_generic_names_stay_in_accounting_shuffle() -> None:
    for name in AMPLIFICATION:
        assert getattr(shuffle, name) is getattr(amplification, name)
    for name in SUMMATION:
        assert getattr(shuffle, name) is getattr(summation, name)
    for name in ("SHUFFLE_SUM_PROTOCOLS", "ShuffleSumParameters", "shuffle_sum_parameters"):
        assert getattr(calibration, name) is getattr(summation, name)


def test_paper_recipes_are_at_the_package_root() -> None:
    for name in ("gaussian_amplification_lemma_f2", "Theorem53Calibration", "theorem53_sigma0"):
        assert getattr(accounting, name) is getattr(federated_lcb, name)
    for name in distributed_dp_mab.__all__:
        assert getattr(accounting, name) is getattr(distributed_dp_mab, name)
    for name in federated_lcb.__all__:
        assert getattr(accounting, name) is getattr(federated_lcb, name)

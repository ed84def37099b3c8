"""Tests of :mod:`verification.exactness.search`: the hypothesis search finds Theorem 2's slip.

Chowdhury & Zhou 2023, Theorem 2 against Lemma 3 (Agarwal, Kairouz & Liu 2021, Theorem 3.5),
recomputed in :mod:`tests.verification.exactness.formulas`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from verification.errors import ParameterError
from verification.exactness import search_counterexamples

from .formulas import lemma3_by_hand


def test_search_finds_the_theorem2_discrepancy() -> None:
    report = search_counterexamples("theorem2_headline_vs_lemma3", max_examples=60, seed=1)
    assert not report.dominates
    assert report.counterexamples
    assert report.worst_ratio < 1
    for c in report.counterexamples:
        d = c.as_dict
        g = math.ceil(d["scaling"] * d["epsilon"] * math.sqrt(d["users"]) - 1e-12)
        assert c.bound < lemma3_by_hand(int(d["alpha"]), d["epsilon"], max(g, 1)) * (1 - 1e-12)
    assert "alpha in 2..1000" in report.space
    assert "counterexamples" in report.summary()


def test_search_is_deterministic() -> None:
    first = search_counterexamples("theorem2_paper_vs_lemma3", max_examples=20, seed=3)
    second = search_counterexamples("theorem2_paper_vs_lemma3", max_examples=20, seed=3)
    assert first == second


@pytest.mark.slow
def test_search_finds_nothing_for_a_proved_bound() -> None:
    report = search_counterexamples("skellam_rdp_akl", max_examples=15, seed=0)
    assert report.dominates
    assert report.examples >= 1
    assert report.worst_ratio >= 1


def test_bad_parameters_name_the_parameter() -> None:
    cases: list[tuple[str, Callable[[], object]]] = [
        ("name", lambda: search_counterexamples("no_such_bound")),
        ("max_examples", lambda: search_counterexamples("skellam_rdp_akl", 0)),
        ("seed", lambda: search_counterexamples("skellam_rdp_akl", 5, seed=-1)),
    ]
    for name, call in cases:
        with pytest.raises(ParameterError) as info:
            call()
        assert info.value.name == name

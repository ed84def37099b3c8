"""Whether a tree release meets a claim ``(ε, δ)`` (:func:`accounting.claims.check_claim`).

The table of the federated LinUCB paper's release (Zhou & Chowdhury, ICLR 2024: T = 10⁴, B = 25,
κ = 9, ``L = 1``): the authors' code's σ0 at (5, 0.1) gives δ(5) ≈ 0.178 and misses its claim; the
σ0 of Theorem 5.1 at (1, 0.1) gives δ(1) ≈ 3e-6 and meets it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from accounting import tree
from accounting.claims import ClaimCheck, check_claim


def test_the_code_sigma_misses_and_the_paper_sigma_meets() -> None:
    code = check_claim(tree.Tree(tree.code_sigma(5, 0.1, 9), 10_000, 25, tree.ADD_REMOVE), 5, 0.1)
    assert code.verdict == "misses"
    assert not code.meets
    assert code.delta == pytest.approx(0.178, abs=5e-4)
    assert code.delta_lower <= code.delta
    paper = check_claim(tree.Tree(tree.paper_sigma(1, 0.1, 9), 10_000, 25, tree.ADD_REMOVE), 1, 0.1)
    assert paper.verdict == "meets"
    assert paper.meets
    assert paper.delta == pytest.approx(2.95e-6, rel=1e-2)


@dataclass(frozen=True)
class _Answer:
    lo: float
    upper: float

    @property
    def lower(self) -> float:
        return self.lo


@dataclass(frozen=True)
class _Accountant:
    delta_at: _Answer
    epsilon_at: _Answer

    def delta(self, epsilon: float) -> _Answer:
        return self.delta_at

    def epsilon(self, delta: float) -> _Answer:
        return self.epsilon_at


@dataclass(frozen=True)
class _Release:
    answers: _Accountant

    def accountant(self) -> _Accountant:
        return self.answers


@pytest.mark.parametrize(
    ("delta_at", "epsilon_upper", "expected"),
    [
        (_Answer(0.01, 0.02), 9.0, ClaimCheck(0.02, 0.01, "meets")),  # δ(ε)'s upper end <= δ
        (_Answer(0.2, 0.3), 0.5, ClaimCheck(0.3, 0.2, "misses")),  # δ(ε)'s lower end > δ
        # δ inside the enclosure of δ(ε), and ε(δ) <= ε: δ itself is a certified upper end of δ(ε)
        (_Answer(0.09, 0.11), 0.9, ClaimCheck(0.1, 0.09, "meets")),
        (_Answer(0.09, 0.11), 1.1, ClaimCheck(0.11, 0.09, "undecided")),  # neither is certified
    ],
)
def test_each_verdict_is_certified(delta_at: _Answer, epsilon_upper: float, expected: ClaimCheck) -> None:
    release = _Release(_Accountant(delta_at, _Answer(0.0, epsilon_upper)))
    got = check_claim(release, 1.0, 0.1)  # type: ignore[arg-type]
    assert got == expected
    assert got.meets is (expected.verdict == "meets")

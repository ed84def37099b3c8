"""accounting.validate: the one set of validators (exact integers, limits that say why)."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

from accounting import DiscreteLaplace, Skellam
from accounting import validate as v
from accounting.errors import ParameterError, ParameterTypeError


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, 3),
        (np.int64(3), 3),
        (np.uint8(7), 7),
        (2.0, 2),
        (np.float64(4.0), 4),
        (Fraction(6, 3), 2),
        (Fraction(10**400, 1), 10**400),
        (mpmath.mpf(5), 5),
        (10**400, 10**400),
    ],
)
def test_integer_accepts_exact_integers(value: object, expected: int) -> None:
    assert v.integer("n", value) == expected


@pytest.mark.parametrize(
    "value",
    [
        2.5,
        Fraction(7, 2),
        Fraction(2**60 + 1, 2),  # float(...) rounds it to an integer: never accepted
        Fraction(10**20 + 1, 10),
        math.nan,
        math.inf,
        mpmath.mpf("2.5"),
        mpmath.inf,
    ],
)
def test_integer_never_rounds(value: object) -> None:
    with pytest.raises(ParameterError, match="n="):
        v.integer("n", value)


@pytest.mark.parametrize("value", [True, False, "3", None, [3], 3j])
def test_integer_refuses_other_types(value: object) -> None:
    with pytest.raises(ParameterTypeError, match="n="):
        v.integer("n", value)


def test_integer_limits_say_why_and_stay_short() -> None:
    with pytest.raises(ParameterError) as err:
        v.count("count", 10**400)
    text = str(err.value)
    assert "an integer in [1, 1000000000000000000]" in text
    assert "int64" in text
    assert len(text) < 300  # a 400-digit value is not printed in full
    assert v.count("count", v.MAX_COUNT) == v.MAX_COUNT
    with pytest.raises(ParameterError, match=r"\[5, 1000\]"):
        v.dps("dps", 3)


def test_reals_beyond_the_float_range_are_refused_not_overflowed() -> None:
    with pytest.raises(ParameterError, match="float range"):
        v.real("x", Fraction(10**400, 1))
    with pytest.raises(ParameterError, match="finite"):
        v.positive("x", 10**400)
    assert v.order("alpha", 10**400) == math.inf
    assert v.nonnegative_or_inf("claim", math.inf) == math.inf
    with pytest.raises(ParameterError):
        v.nonnegative_or_inf("claim", math.nan)


def test_interval_ends_and_reason() -> None:
    assert v.interval("q", 1.0, 0.0, 1.0) == 1.0
    with pytest.raises(ParameterError, match=r"\(0, 1\]"):
        v.interval("q", 0.0, 0.0, 1.0)
    with pytest.raises(ParameterError, match=r"\[0, 1\) \(why\)"):
        v.interval("q", 1.0, 0.0, 1.0, low_open=False, high_open=True, why="why")
    with pytest.raises(ParameterError, match=">= 2"):
        v.interval("q", 1.0, 2.0, math.inf, low_open=False)
    assert v.seed("seed", 2**128 - 1) == 2**128 - 1
    with pytest.raises(ParameterError, match="128-bit"):
        v.seed("seed", 2**128)


def test_subnormal_parameters_are_refused() -> None:
    """A positive subnormal float overflows when inverted and halves to 0 (Skellam(5e-324))."""
    with pytest.raises(ParameterError, match="subnormal"):
        v.positive("variance", 5e-324)
    assert v.positive("variance", v.SMALLEST_POSITIVE) == v.SMALLEST_POSITIVE


def test_library_overflow_escapes_are_parameter_errors_or_finite() -> None:
    """The arithmetic escapes of issue 15 on values the validators accept."""
    from accounting import shuffle
    from accounting.mechanisms import AdditiveNoise
    from accounting.noise import DiscreteLaplace, Polya, Skellam

    assert DiscreteLaplace(1e17).variance() == pytest.approx(2e34, rel=1e-12)
    with pytest.raises(ParameterError, match="scale"):
        DiscreteLaplace(1e300).variance()
    for bad in (5e-324, 3e-308):
        with pytest.raises(ParameterError, match="variance"):
            Skellam(bad)
    assert AdditiveNoise(Polya(1e-300, 0.5)).epsilon(1e-5).lo == math.inf  # a one-sided share: unbounded
    assert Polya(1e-300, 0.5).window(1e-10)[1] < 100
    with pytest.raises(ParameterError, match="epsilon0"):
        shuffle.amplify(1e-300, 100, 1e-6)
    assert shuffle.amplify(1e-300, 100, 1e-6, "fmt-closed").epsilon <= 1e-300


def test_an_old_keyword_spelling_works_with_one_note_at_the_callers_line() -> None:
    """``Skellam(variance, mean=...)`` is the old spelling of ``offset=``: the same noise, one
    SpellingNote attributed to this file (not to dpcert's), and both spellings at once refused."""
    with pytest.warns(
        v.SpellingNote, match=r"^Skellam\(\)'s keyword 'mean' is now spelled 'offset'"
    ) as notes:
        old = Skellam(4, mean=2)  # type: ignore[call-arg]
    assert old == Skellam(4, offset=2) == Skellam.from_rates(2, 2, 2)
    assert [Path(n.filename).name for n in notes] == [Path(__file__).name]
    with pytest.raises(ParameterError, match="one spelling"):
        Skellam(4, mean=2, offset=2)  # type: ignore[call-arg]


def test_an_old_value_spelling_is_renamed_and_others_pass_through() -> None:
    with pytest.warns(v.SpellingNote, match="relation 'paper' is now spelled 'add-remove'"):
        assert v.spelling("relation", "paper", {"paper": "add-remove"}) == "add-remove"
    assert v.spelling("relation", "replace-one", {"paper": "add-remove"}) == "replace-one"
    assert v.renamed("params", {"a": 1}, {"scale": "scaling"}) == {"a": 1}


def test_discrete_laplace_beta_was_decay_and_its_ledger_field_keeps_that_name() -> None:
    """``DiscreteLaplace(decay=β)`` is the old spelling of ``beta=`` (the β of Pólya shares and of
    ``--beta``): accepted with a note, as is reading ``.decay``; a ledger still names the field
    ``"decay"``, so ledgers written before read back and new ones are the same bytes."""
    from accounting.accountant import noise_from_dict, noise_to_dict

    with pytest.warns(v.SpellingNote, match="'decay' is now spelled 'beta'"):
        old = DiscreteLaplace(decay=Fraction(9, 10))  # type: ignore[call-arg]
    new = DiscreteLaplace(beta=Fraction(9, 10))
    assert old == new
    with pytest.warns(v.SpellingNote, match="attribute 'decay' is now spelled 'beta'"):
        assert new.decay == Fraction(9, 10)
    stored = {"type": "DiscreteLaplace", "scale": new.scale, "decay": {"fraction": "9/10"}}
    assert noise_to_dict(new) == stored
    assert noise_from_dict(stored) == new

"""The one list of noise families (:mod:`accounting.noise.families`): every distribution class is in it
once, under one name, and rebuilds from the fields a ledger stores."""

from __future__ import annotations

import inspect
from dataclasses import fields
from fractions import Fraction

import pytest

import accounting.noise as noise_package
from accounting import ParameterError
from accounting.noise import (
    NOISE_FAMILIES,
    ContinuousNoise,
    DiscreteLaplace,
    Geometric,
    LatticeNoise,
    NoiseDistribution,
    Polya,
    Shifted,
    Skellam,
    family_named,
    family_of,
    family_of_type,
)
from tests.accounting.accountant.test_serialization import EXAMPLES


def test_every_distribution_class_is_one_family() -> None:
    """Every concrete distribution of :mod:`accounting.noise` is registered (Shifted is a view of
    another distribution, not a family), under unique names."""
    concrete = {
        cls
        for cls in vars(noise_package).values()
        if inspect.isclass(cls) and issubclass(cls, NoiseDistribution) and not inspect.isabstract(cls)
    }
    assert concrete - {Shifted} == {f.cls for f in NOISE_FAMILIES}
    assert len({f.name for f in NOISE_FAMILIES}) == len(NOISE_FAMILIES)
    assert len({f.type_name for f in NOISE_FAMILIES}) == len(NOISE_FAMILIES)
    assert not {ContinuousNoise, LatticeNoise} & {f.cls for f in NOISE_FAMILIES}


def test_the_command_line_families_in_order() -> None:
    """``dp-account --noise`` offers these, each set by one option."""
    offered = [(f.name, f.parameter) for f in NOISE_FAMILIES if f.option]
    assert offered == [
        ("gaussian", "sigma"),
        ("laplace", "scale"),
        ("discrete-laplace", "scale"),
        ("discrete-gaussian", "sigma"),
        ("skellam", "variance"),
        ("polya", "beta"),
        ("binomial", "trials"),
    ]


def test_dp_accounting_events() -> None:
    events = {f.name: f.dp_event for f in NOISE_FAMILIES if f.dp_event}
    assert events == {
        "gaussian": "GaussianDpEvent",
        "laplace": "LaplaceDpEvent",
        "discrete-laplace": "DiscreteLaplaceDpEvent",
    }


@pytest.mark.parametrize("noise", EXAMPLES, ids=repr)
def test_rebuild_from_the_fields(noise: NoiseDistribution) -> None:
    family = family_of(noise)
    assert family.cls is type(noise)
    assert family_of_type(type(noise).__name__) is family
    assert family_named(family.name) is family
    rebuilt = family.rebuild({f.name: getattr(noise, f.name) for f in fields(noise)})  # type: ignore[arg-type]
    assert type(rebuilt) is type(noise)
    assert rebuilt == noise
    assert getattr(noise, family.parameter) is not None


def test_a_subclass_is_its_own_family() -> None:
    assert family_of(Geometric(0.5)).name == "geometric"
    assert family_of(Polya(1, 0.5)).name == "polya"
    assert family_of(DiscreteLaplace(beta=Fraction(1, 2))).name == "discrete-laplace"


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: family_named("cauchy"), "noise"),
        (lambda: family_named(3), "noise"),
        (lambda: family_of_type("Cauchy"), "type"),
        (lambda: family_of(Shifted(Skellam(1), 2)), "noise"),
        (lambda: family_of("skellam"), "noise"),
    ],
)
def test_unknown_families_are_refused_naming_the_parameter(call: object, name: str) -> None:
    with pytest.raises(ParameterError) as err:
        call()  # type: ignore[operator]
    assert err.value.name == name

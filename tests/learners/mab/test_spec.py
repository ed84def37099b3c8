"""The algorithms of Chowdhury & Zhou (2023) and a learner's settings (:mod:`learners.mab.spec`)."""

from __future__ import annotations

import pytest

from accounting.papers.distributed_dp_mab import Variant
from accounting.validate import SpellingNote
from learners.errors import ParameterError, ParameterTypeError
from learners.mab import (
    ALGORITHMS,
    make_learner,
)

# -- settings ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"name": "ucb"}, "algorithm"),
        ({"name": "dist-dp-se", "epsilon": 0.0}, "epsilon"),
        ({"name": "dist-dp-se", "epsilon": -1.0}, "epsilon"),
        ({"name": "dist-dp-se"}, "epsilon"),
        ({"name": "se", "epsilon": 1.0}, "epsilon"),
        ({"name": "dist-rdp-se", "epsilon": 1.0}, "scaling"),
        ({"name": "dist-rdp-se", "epsilon": 1.0, "scaling": 0.5}, "scaling"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "scaling": 10}, "scaling"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "growth": 3}, "growth"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "growth": 4.5}, "growth"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "p_beta": 1.5}, "p_beta"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "p_tau": 0.0}, "p_tau"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "radius_scale": 0}, "radius_scale"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "noise": "fast"}, "noise"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "dropout": 0.1}, "dropout"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "noise": "shares", "dropout": 1.0}, "dropout"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "batches": 3}, "batches"),
    ],
)
def test_bad_settings_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises((ParameterError, ParameterTypeError)) as err:
        make_learner(**kwargs)  # type: ignore[arg-type]
    assert isinstance(err.value, (ParameterError, ParameterTypeError))
    assert err.value.name == field


def test_labels_defaults_and_variants() -> None:
    assert make_learner("dist-rdp-se", 0.5, scaling=10).label == "Dist-RDP-SE(s=10)"
    assert make_learner("dp-se", 0.5).eta == 2  # DP-SE's dc = 2 (the authors' code)
    assert make_learner("dist-dp-se", 0.5).eta == 4  # l(b) = 4^b in Figures 1-3, 5
    # an integral float is the integer, as accounting's validator says
    assert make_learner("dist-dp-se", 0.5, growth=2.0).eta == 2
    # Chowdhury & Zhou (2023), §7 and Theorems 1-6: the algorithms of the experiments and their variants
    expected = {
        "dist-dp-se": (Variant.POLYA_SHARES, 1),
        "dist-rdp-se": (Variant.SKELLAM_SHARES, 2),
        "shuffle-dp-se": (Variant.SHUFFLED_POLYA, 3),
        "dist-cdp-se": (Variant.DISCRETE_GAUSSIAN_SHARES, 4),
        "cdp-se": (Variant.CENTRAL_LAPLACE, 5),
        "ldp-se": (Variant.LOCAL_LAPLACE, 6),
    }
    for name, (variant, theorem) in expected.items():
        assert ALGORITHMS[name].variant is variant
        assert variant.theorem == theorem
    assert ALGORITHMS["dp-se"].variant is None
    assert ALGORITHMS["se"].variant is None


def test_scale_is_the_old_spelling_of_scaling() -> None:
    """``scale`` (a noise's scale ``b`` elsewhere in dpcert) is the old name of the paper's scaling
    factor ``s``: still accepted with a note; both spellings at once are refused."""
    with pytest.warns(SpellingNote, match="'scale' is now spelled 'scaling'"):
        old = make_learner("dist-rdp-se", 0.5, scale=10)
    assert old == make_learner("dist-rdp-se", 0.5, scaling=10)
    with pytest.raises(ParameterError, match="one spelling"):
        make_learner("dist-rdp-se", 0.5, scale=10, scaling=10)

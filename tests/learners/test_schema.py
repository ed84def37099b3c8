"""The declarative config schema (learners/schema.py, learners/config_schema.py): the README's config
reference is its rendering, and every key it declares is refused, naming the key, when bad."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from learners import config_schema
from learners.config import load_config
from learners.config_schema import ALGORITHM, PANEL, QUICK, TOP, readme_section, reference
from learners.errors import ConfigError
from learners.families import FAMILIES, Family
from learners.schema import REQUIRED, Field, Section, number_doc

README = Path(__file__).resolve().parents[2] / "README.md"

# ---------------------------------------------------------------------------------------
# The README is the schema's rendering
# ---------------------------------------------------------------------------------------


def test_the_readme_config_reference_is_the_rendering_of_the_schema() -> None:
    section = readme_section(README.read_text(encoding="utf-8"))
    assert section == reference(), "regenerate it: python -m learners.config_schema README.md"


def test_the_reference_names_every_key_kind_algorithm_and_choice() -> None:
    text = reference()
    keys = {f.key for s in (TOP, PANEL, ALGORITHM, QUICK) for f in s}
    for family in FAMILIES.values():
        assert f"`{family.name}`" in text
        for kind, section in family.instance_sections.items():
            assert f"`{kind}`" in text
            keys |= set(section.names())
        keys |= set(family.params_section.names())
        for name in family.algorithms:
            assert f"`{name}`" in text, name
    assert not sorted(k for k in keys if f"`{k}`" not in text)
    for bands in config_schema.BANDS:
        assert f"`{bands}`" in text


def test_each_family_documents_exactly_the_keywords_of_its_make_learner() -> None:
    for family in FAMILIES.values():
        assert set(family.params_section.names()) == set(family.params), family.name
        for f in family.params_section:
            assert set(f.algorithms) <= set(family.algorithms), (family.name, f.key)
        assert dict(family.instance_keys) == {
            kind: ("kind", *section.names()) for kind, section in family.instance_sections.items()
        }


def test_rendering_of_numbers_ranges_and_defaults() -> None:
    assert [number_doc(x) for x in (10**6, 2**32 - 1, 2**128 - 1, 1e-9, 1e8, 0.5, 1.0, 25, 1000)] == [
        "10^6",
        "2^32 − 1",
        "2^128 − 1",
        "1e-9",
        "1e8",
        "0.5",
        "1",
        "25",
        "1000",
    ]
    assert Field("k", "integer", low=2, high=10**12).valid_text() == "2 … 10^12"
    assert Field("k", "integer", low=1).valid_text() == "≥ 1"
    assert Field("k", "integer", low="dim", high=10).valid_text() == "`dim` … 10"
    assert Field("k", "number", low=0.0, low_open=True, high=1.0).valid_text() == "(0, 1]"
    assert Field("k", "number", low=0.0).valid_text() == "≥ 0"
    assert Field("k", "number", low=0.0, low_open=True).valid_text() == "> 0"
    numbers = Field("k", "numbers", low=0.0, high=1.0, min_items=2, distinct="no repeats")
    assert numbers.valid_text() == "each in [0, 1], at least 2, no repeats"
    assert Field("k", "string", default="a", choices=("a", "b")).cell() == '`k` (string, `"a"`, `a`, `b`)'
    assert Field("k", "boolean", default=True).default_text() == "`true`"
    assert Field("k", "integer").default_text() == "required"
    with pytest.raises(ValueError, match="type 'float'"):
        Field("k", "float")


def test_a_section_parses_defaults_bounds_and_conditional_keys() -> None:
    section = Section(
        "s",
        (
            Field("shape", "string", default="round", choices=("round", "square")),
            Field("dim", "integer", default=3, low=1),
            Field("arms", "integer", default=5, low="dim"),
            Field("side", "number", default=1.0, low=0.0, low_open=True, when=("shape", "square")),
            Field("must", "integer", low=0, missing="a count (required here)"),
        ),
    )
    assert section.parse("t", {"must": 0}) == {"shape": "round", "dim": 3, "arms": 5, "side": None, "must": 0}
    assert section.parse("t", {"must": 0, "shape": "square"})["side"] == 1.0
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"must": 0, "dim": 6}, "t.arms", "an integer >= 6"),  # the bound is the dim given
        ({"must": 0, "side": 2.0}, "t.side", 'no side: shape = "round" (set "square")'),
        ({}, "t.must", "a count (required here)"),
        ({"must": 0, "shape": 1}, "t.shape", "a string, not a int"),
        ({"must": 0, "shape": "oval"}, "t.shape", "one of round, square"),
        ({"must": 1.5}, "t.must", "an integer >= 0"),
    ]
    for given, name, message in cases:
        with pytest.raises(ConfigError) as info:
            section.parse("t", given)
        assert info.value.name == name
        assert message in str(info.value)


# ---------------------------------------------------------------------------------------
# The contract: every key's bad value is refused, naming the key
# ---------------------------------------------------------------------------------------


def _mab(**changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "name": "contract",
        "seed": 1,
        "repetitions": 2,
        "horizon": 400,
        "epsilons": [1.0],
        "checkpoints": 4,
        "chunk": 2,
        "instance": {"kind": "gaussian-easy", "arms": 3},
        "algorithms": [{"name": "dp-se"}, {"name": "se"}],
        "quick": {"horizon": 200},
    }
    return config | changes


_LINEAR = {"kind": "linear-synthetic", "dim": 3, "arms": 6, "agents": 2}
_PHASED = {"kind": "phased-synthetic", "arms": 8, "dim": 3, "population": 10**5}
_QUADRATIC = {"kind": "ldp-quadratic", "dim": 2, "convexity": "strongly-convex", "minimizer": [0.1, 0.1]}
#: A valid table of each instance kind, and an algorithm that runs on it.
INSTANCES: dict[str, tuple[dict[str, Any], str]] = {
    "gaussian-easy": ({"kind": "gaussian-easy", "arms": 3}, "dp-se"),
    "gaussian-hard": ({"kind": "gaussian-hard", "arms": 3}, "dp-se"),
    "bernoulli": ({"kind": "bernoulli", "means": [0.2, 0.5, 0.7]}, "dp-se"),
    "beta": ({"kind": "beta", "means": [0.2, 0.5, 0.7], "concentration": 4.0}, "dp-se"),
    "mslr": ({"kind": "mslr", "clusters": 3, "cluster_seed": 1}, "dp-se"),
    "linear-synthetic": (_LINEAR, "ldp-fedlinucb"),
    "linear-mslr": ({"kind": "linear-mslr", "agents": 2}, "ldp-fedlinucb"),
    "phased-synthetic": (_PHASED, "ldp-dpe"),
    "ldp-quadratic": (_QUADRATIC, "two-point"),
    "ldp-linear": ({"kind": "ldp-linear", "dim": 2, "arms": 3}, "ldp-linucb"),
    "ldp-glm": ({"kind": "ldp-glm", "dim": 2, "arms": 3}, "ldp-glm"),
    "ldp-movielens": ({"kind": "ldp-movielens", "arms": 8, "rank": 3}, "ldp-linucb"),
    "ldp-bernoulli": ({"kind": "ldp-bernoulli", "means": [0.3, 0.6]}, "one-point"),
}
#: The instance an algorithm of the ldp family runs on (for its params).
_LDP_INSTANCE = {
    "one-point": "ldp-quadratic",
    "two-point": "ldp-quadratic",
    "ldp-linucb": "ldp-linear",
    "ldp-glm": "ldp-glm",
}


def _config(
    kind: str, algorithm: str | None = None, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A valid config of ``kind``'s family on that instance, running ``algorithm``."""
    table, default = INSTANCES[kind]
    family = next(f for f in FAMILIES.values() if kind in f.instance_sections)
    entry: dict[str, Any] = {"name": algorithm or default, "params": dict(params or {})}
    if kind == "ldp-bernoulli" and entry["name"] == "one-point":
        entry["params"] = {"base": "ucb", "base_arms": 2} | entry["params"]
    if kind == "ldp-quadratic" and entry["name"] == "one-point" and "base" not in entry["params"]:
        entry["params"] = {"base": "adx", "base_mu": 1.0} | entry["params"]
    return _mab(
        family=family.name,
        instance=copy.deepcopy(table),
        delta=0.1,
        algorithms=[entry],
        epsilons=[2.0] if family.name == "ldp" else [1.0],
        horizon=2000 if family.name == "phased" else 400,
    )


def _bound(bound: float | str | None, table: Mapping[str, Any], section: Section) -> Any:
    if isinstance(bound, str):
        return table.get(bound, section[bound].default)
    return bound


def _bad_values(f: Field, table: Mapping[str, Any], section: Section) -> list[object]:
    """Values of ``f``'s type that its range, choices or type refuse."""
    low, high = _bound(f.low, table, section), _bound(f.high, table, section)
    if f.type == "integer":
        out: list[object] = [1.5, "x"]
        out += [low - 1] if low is not None else []
        return out + ([high + 1] if high is not None else [])
    if f.type in ("number", "numbers"):
        lo = 0.0 if low is None else low
        items: list[object] = ["x", math.nan, lo if f.low_open else lo - 1]
        if high is not None and high != math.inf:
            items.append(high if f.high_open else high + 1)
        return items if f.type == "number" else ["x", *([x] for x in items)]
    if f.type == "string":
        return [1, "a/b"] if f.pattern is not None else [1, *(["no-such-choice"] if f.choices else [])]
    if f.type == "strings":
        return ["no-such-choice", [], 1]
    if f.type == "path":
        return ["no/such/file.txt", 1]
    if f.type == "boolean":
        return ["yes"]
    return [1]


def _cases() -> Iterator[Any]:
    """(config, quick, the field's path, bad value) for every key of every section."""
    base = _mab()
    for f in TOP:
        for bad in _bad_values(f, base, TOP):
            yield pytest.param(base | {f.key: bad}, False, f.key, id=f"{f.key}={bad!r}")
    for f in PANEL:
        for bad in _bad_values(f, base, PANEL):
            panels = [{"name": "p", f.key: bad}]
            yield pytest.param(
                base | {"panels": panels}, False, f"panels[0].{f.key}", id=f"panels.{f.key}={bad!r}"
            )
    for f in QUICK:
        for bad in _bad_values(f, base, QUICK):
            yield pytest.param(
                base | {"quick": {f.key: bad}}, True, f"quick.{f.key}", id=f"quick.{f.key}={bad!r}"
            )
    for f in ALGORITHM:
        for bad in _bad_values(f, base, ALGORITHM):
            config = copy.deepcopy(base)
            config["algorithms"][0][f.key] = bad
            yield pytest.param(config, False, f"algorithms[0].{f.key}", id=f"algorithms.{f.key}={bad!r}")
    for family in FAMILIES.values():
        for kind, section in family.instance_sections.items():
            table = INSTANCES[kind][0]
            for f in section:
                for bad in _bad_values(f, table, section):
                    config = _config(kind)
                    config["instance"][f.key] = bad
                    yield pytest.param(config, False, f"instance.{f.key}", id=f"{kind}.{f.key}={bad!r}")


@pytest.mark.parametrize(("config", "quick", "path"), list(_cases()))
def test_every_key_refuses_a_bad_value_naming_it(config: dict[str, Any], quick: bool, path: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(config, quick=quick)
    err = info.value
    assert err.name == path or err.name.startswith(path + "["), str(err)
    assert str(err).startswith(f"{err.name}=")
    assert "expected" in str(err)


#: The base learner of Algorithm 1 that takes each ``base_<key>`` (and the instance it runs on).
_BASES: dict[str, tuple[str, dict[str, Any]]] = {
    "base_mu": ("adx", {"base_mu": 1.0}),
    "base_smoothness": ("saha-tewari", {"base_smoothness": 1.0}),
    "base_arms": ("ucb", {"base_arms": 2}),
    "base_rho": ("fkm", {}),
    "base_eta": ("fkm", {}),
    "base_rho0": ("fkm", {}),
}
#: Params whose bad values nothing refuses yet (each an xfail): none (the base learners of
#: Algorithm 1 check their keywords, learners.ldp.bases).
UNCHECKED: set[tuple[str, str]] = set()


def _params_cases() -> Iterator[Any]:
    for family in FAMILIES.values():
        for f in family.params_section:
            assert f.bad, f"{family.name} params.{f.key}: no bad value declared"
            algorithm = f.algorithms[0] if f.algorithms else _private(family)
            kind = _kind_of(family, algorithm)
            given: dict[str, Any] = {}
            if f.key in _BASES:
                base, given = _BASES[f.key]
                given = {"base": base, **given}
                kind = "ldp-bernoulli" if base == "ucb" else kind
            marks: tuple[pytest.MarkDecorator, ...] = ()
            if (family.name, f.key) in UNCHECKED:
                marks = (pytest.mark.xfail(strict=True, reason="the base learners check no keyword"),)
            for bad in f.bad:
                yield pytest.param(
                    _config(kind, algorithm, given | {f.key: bad}),
                    f"algorithms[0].params.{f.key}",
                    id=f"{family.name}.{algorithm}.{f.key}={bad!r}",
                    marks=marks,
                )


def _private(family: Family) -> str:
    return next(name for name, private in family.algorithms.items() if private)


def _kind_of(family: Family, algorithm: str) -> str:
    if family.name == "ldp":
        return _LDP_INSTANCE[algorithm]
    return next(k for k, (_, a) in INSTANCES.items() if k in family.instance_sections)


@pytest.mark.parametrize(("config", "path"), list(_params_cases()))
def test_every_param_refuses_its_declared_bad_values_naming_it(config: dict[str, Any], path: str) -> None:
    """The ``params`` fields are checked by each family's ``make_learner``: the schema's bad values
    of each are refused, and the error names the key."""
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert info.value.name == path, str(info.value)


def test_the_valid_configs_of_the_contract_load() -> None:
    for kind in INSTANCES:
        load_config(_config(kind))
    load_config(_mab(), quick=True)


def test_required_keys_name_themselves() -> None:
    for f in TOP:
        if f.default is REQUIRED:
            config = _mab()
            del config[f.key]
            with pytest.raises(ConfigError) as info:
                load_config(config)
            assert info.value.name == f.key
    config = _mab(panels=[{"horizon": 300}])
    with pytest.raises(ConfigError, match="a panel name"):
        load_config(config)
    config = _config("ldp-bernoulli")
    del config["instance"]["means"]
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert info.value.name == "instance.means"

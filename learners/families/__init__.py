"""Learner families: what one family plugs into the experiment runner, and the registry of them.

Each family is a thin subclass of :class:`~learners.families.base.Family` (the shared verbs:
instance kinds, algorithms, parsing, the run, its ledgers, the privacy report) in a module of
its own:

``mab``     the distributed MAB learners of Chowdhury & Zhou (2023), :mod:`learners.mab`;
            instance kinds ``gaussian-easy``, ``gaussian-hard``, ``bernoulli``, ``beta``,
            ``mslr``; the regret is the pseudo-regret (:mod:`learners.families.mab`);
``linear``  federated LinUCB of Zhou & Chowdhury (2024), :mod:`learners.linear`; instance kinds
            ``linear-synthetic`` (the synthetic instance of their Figures 2(a)-(b), 3(a)-(b), one
            shared by every repetition, as the authors' seed 2) and ``linear-mslr`` (queries of an
            MSLR-WEB10K-format file, or the offline stand-in, their Figures 2(c), 3(c)-(d)); the
            regret is the *group* pseudo-regret, summed over the ``M`` silos
            (:mod:`learners.families.linear`);
``phased``  phased elimination with partial distributed feedback of Li, Zhou & Ji (2022), DP-DPE
            and DP-PE, :mod:`learners.phased`; instance kind ``phased-synthetic`` (their
            Section 7: one action set and ``θ*`` shared by every repetition, the clients drawn per
            phase); the regret is the pseudo-regret (:mod:`learners.families.phased`);
``ldp``     the locally private bandits of Zheng et al. (2020), :mod:`learners.ldp`
            (:mod:`learners.families.ldp`).

A config's family is the one of its first algorithm, or its top-level ``family`` key. Its
algorithms may belong to several families (LDP-UCB beside the distributed MAB paper's variants)
when every panel's instance is one that each of them runs: a kind of its own, or one it adopts
(:data:`ADOPTED_KINDS`, :func:`instance_for`); each algorithm's units are then run, and its
summary entries written, by its own family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from learners.budget import Budget
from learners.errors import ConfigError, ParameterError
from learners.families.base import Family, FloatArray, IntArray, UnitRun
from learners.families.ldp import CONVEXITIES, LDP_BASES, LDPFamily, LDPInstanceSpec
from learners.families.linear import (
    MAX_LINEAR_STATE,
    LinearFamily,
    LinearInstanceSpec,
    LinearSpec,
    MSLRLinearSpec,
)
from learners.families.mab import MAX_NOISE_VARIANCE, InstanceSpec, MABFamily
from learners.families.phased import PhasedFamily, PhasedInstanceSpec
from learners.schema import MAX_ARMS

#: The families, by name; the default (``family`` absent, and no algorithm says otherwise) is "mab".
FAMILIES: dict[str, Family] = {f.name: f for f in (MABFamily(), LinearFamily(), PhasedFamily(), LDPFamily())}
DEFAULT_FAMILY = "mab"

#: Every instance kind, of every family.
INSTANCE_KINDS = tuple(kind for f in FAMILIES.values() for kind in f.instance_keys)


def _as_ldp_bernoulli(where: str, table: Mapping[str, Any]) -> dict[str, Any]:
    if "means" not in table:
        raise ConfigError(
            f"{where}.means",
            None,
            "fixed reward means (K >= 2 numbers in [0, 1]): the ldp family's Bernoulli arms are shared by "
            "the repetitions, so its algorithms cannot run on means drawn per repetition",
        )
    return {"kind": "ldp-bernoulli", "means": table["means"]}


def _as_mab_bernoulli(where: str, table: Mapping[str, Any]) -> dict[str, Any]:
    return {"kind": "bernoulli", "means": table.get("means")} if "means" in table else {"kind": "bernoulli"}


#: The instance kinds a family runs although another family owns them, by the same arms: ``(family,
#: kind) -> the table in the family's own kind`` (a :class:`ConfigError` naming the field if the
#: table does not translate). A config whose algorithms span families (LDP-UCB of the ldp family
#: beside the distributed MAB paper's variants) has each panel's instance built by every family it
#: involves: Bernoulli arms with fixed reward means are both the MAB family's ``bernoulli`` and the
#: ldp family's ``ldp-bernoulli`` (reward means in both; the ldp learner minimizes the loss
#: ``1 − reward``: the same pseudo-regret).
ADOPTED_KINDS: dict[tuple[str, str], Callable[[str, Mapping[str, Any]], dict[str, Any]]] = {
    ("ldp", "bernoulli"): _as_ldp_bernoulli,
    ("mab", "ldp-bernoulli"): _as_mab_bernoulli,
}


def instance_for(
    fam: Family, where: str, table: Mapping[str, Any], base: Path, budget: Budget | None = None
) -> Any:
    """The validated ``[instance]`` table at ``where`` as an instance of ``fam``: of one of its own
    kinds, or of a kind it adopts (:data:`ADOPTED_KINDS`); a :class:`ConfigError` otherwise."""
    kind = table.get("kind")
    if isinstance(kind, str) and kind in fam.instance_keys:
        return fam.instance(where, table, base, budget)
    adopt = ADOPTED_KINDS.get((fam.name, kind)) if isinstance(kind, str) else None
    if adopt is None:
        own = ", ".join(fam.instance_keys)
        also = ", ".join(k for f, k in ADOPTED_KINDS if f == fam.name)
        raise ConfigError(
            f"{where}.kind",
            kind,
            f"an instance kind the '{fam.name}' family runs: one of {own}"
            + (f" (or {also})" if also else ""),
        )
    return fam.instance(where, adopt(where, table), base, budget)


def family(name: str) -> Family:
    """The family called ``name`` (a :class:`ParameterError` naming it otherwise)."""
    found = FAMILIES.get(name) if isinstance(name, str) else None
    if found is None:
        raise ParameterError("family", name, "one of " + ", ".join(FAMILIES))
    return found


def family_of_algorithm(name: object) -> Family | None:
    """The family an algorithm name belongs to (``None``: no family has it)."""
    return next((f for f in FAMILIES.values() if isinstance(name, str) and name in f.algorithms), None)


__all__ = [
    "ADOPTED_KINDS",
    "CONVEXITIES",
    "DEFAULT_FAMILY",
    "FAMILIES",
    "INSTANCE_KINDS",
    "LDP_BASES",
    "MAX_ARMS",
    "MAX_LINEAR_STATE",
    "MAX_NOISE_VARIANCE",
    "Family",
    "FloatArray",
    "InstanceSpec",
    "IntArray",
    "LDPFamily",
    "LDPInstanceSpec",
    "LinearFamily",
    "LinearInstanceSpec",
    "LinearSpec",
    "MABFamily",
    "MSLRLinearSpec",
    "PhasedFamily",
    "PhasedInstanceSpec",
    "UnitRun",
    "family",
    "family_of_algorithm",
    "instance_for",
]

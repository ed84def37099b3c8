"""The neighbouring relation a guarantee refers to.

Two datasets are neighbours when one record is *replaced* (:attr:`Neighbouring.REPLACE_ONE`,
this project's default, the relation of the four papers under ``papers/``), or when one record is
*added or removed* (:attr:`Neighbouring.ADD_REMOVE`, the default of Google's ``dp_accounting``,
its ``NeighboringRelation.ADD_OR_REMOVE_ONE``).

The relation changes the answer where the mechanism's output law depends on who takes part:

* an :class:`~accounting.mechanisms.AdditiveNoise` release ``q(D) + X`` has the same worst pair
  under both relations, ``(X + Δ, X)``, once ``Δ`` is the query's sensitivity *under that
  relation* (for a sum of records bounded by ``C``: ``Δ = C`` for add-remove, ``2C`` for
  replace-one);
* a :class:`~accounting.mechanisms.DistributedSum` is not: removing a user also removes that
  user's noise share, so the worst pairs are ``(X_n + k, X_{n-1})`` and ``(X_{n-1} + k, X_n)``
  for ``|k| <= Δ`` (``X_m`` the sum of ``m`` shares), not ``(X_n + Δ, X_n)``;
* a subsampled release's sensitivity is the contribution bound of one record (as in
  ``dp_accounting``): under replace-one the replaced record moves the sum by up to ``2Δ``;
* a cited guarantee (:class:`~accounting.mechanisms.PureDP`, an ``(ε, δ)`` result) holds for the
  relation of its theorem and is accounted only under that relation.
"""

from __future__ import annotations

import enum

__all__ = ["Neighbouring"]


class Neighbouring(enum.Enum):
    """Which datasets are neighbours: one record replaced, or one record added or removed."""

    REPLACE_ONE = "replace-one"
    ADD_REMOVE = "add-remove"

    @classmethod
    def parse(cls, value: object) -> Neighbouring:
        """A member from itself or its value (``"replace-one"``, ``"add-remove"``)."""
        from accounting.errors import ParameterError

        if isinstance(value, Neighbouring):
            return value
        for member in cls:
            if value == member.value:
                return member
        raise ParameterError("neighbouring", value, "'replace-one' or 'add-remove' (a Neighbouring member)")

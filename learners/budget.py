"""What a run will cost, known before it is paid: the peak memory and the work of a unit.

Every family estimates a unit (one algorithm at one ε on one chunk of repetitions) from the shapes
its engine allocates (:meth:`learners.families.base.Family.cost`: each engine's ``footprint`` is
the function its allocations take their shapes from), and :func:`learners.config.load_config`
refuses a config whose unit needs more memory than :attr:`Budget.memory` or more work than
:attr:`Budget.work`, before anything is built or run. The message names the config field that
sets the cost, the estimate, the budget and the option that raises it (``dp-regret run
--max-memory GIB``, ``--max-work OPS``; ``load_config``'s ``budget``).

The work is counted in *operations*: the multiply-adds (or, for the MAB family, simulated pulls) of
the engine's innermost per-round products, summed over the rounds and repetitions of a unit. It
is a count, not a time; at the 10^8-10^9 operations a second a core runs them, the default
:data:`DEFAULT_MAX_WORK` is hours to a day of one core.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from learners.errors import ConfigError

if TYPE_CHECKING:
    from learners.config import Config
    from learners.families.base import Family

#: One gibibyte.
GIB = 2**30
#: The default memory budget of one unit (one process): 8 GiB.
DEFAULT_MAX_MEMORY = 8 * GIB
#: The default work budget of a unit: 10^14 operations (module docstring).
DEFAULT_MAX_WORK = 1e14


@dataclass(frozen=True)
class Cost:
    """The estimated cost of one unit.

    Attributes
    ----------
    memory : int
        Bytes of the arrays the unit holds at its peak.
    work : float
        Operations of its run (module docstring).
    formula : str
        How the work is counted, with its factors (for the message).
    """

    memory: int
    work: float
    formula: str


@dataclass(frozen=True)
class Budget:
    """What a run may cost: ``memory`` bytes and ``work`` operations per unit (``inf``: no limit)."""

    memory: float = DEFAULT_MAX_MEMORY
    work: float = DEFAULT_MAX_WORK

    @classmethod
    def unlimited(cls) -> Budget:
        """No limit (reading a results folder, which runs nothing)."""
        return cls(math.inf, math.inf)


def nbytes(shapes: Mapping[str, tuple[int, ...]], itemsize: int = 8) -> int:
    """The bytes of arrays of these shapes (Python integers: no overflow, however large)."""
    return sum(math.prod(shape) for shape in shapes.values()) * itemsize


def gib(size: float) -> str:
    """``size`` bytes in GiB, as a message says it."""
    return f"{size / GIB:.3g} GiB"


def memory_error(field: str, value: object, cost: Cost, budget: Budget, what: str) -> ConfigError:
    """The refusal of a unit whose peak memory is beyond ``budget``, naming ``field``."""
    return ConfigError(
        field,
        value,
        f"a setting whose unit fits the memory budget: {what} holds about {gib(cost.memory)} of arrays at "
        f"its peak, above the budget of {gib(budget.memory)} per unit (dp-regret run --max-memory GIB "
        "raises it)",
    )


def work_error(field: str, value: object, work: float, formula: str, budget: Budget) -> ConfigError:
    """The refusal of a run whose work is beyond ``budget``, naming ``field``."""
    return ConfigError(
        field,
        value,
        f"a run within the work budget: a unit needs about {work:.3g} operations ({formula}), above the "
        f"budget of {budget.work:.3g} per unit (dp-regret run --max-work OPS raises it)",
    )


__all__ = [
    "DEFAULT_MAX_MEMORY",
    "DEFAULT_MAX_WORK",
    "GIB",
    "Budget",
    "Cost",
    "gib",
    "memory_error",
    "nbytes",
    "work_error",
]


def check_budget(config: Config, budget: Budget, families: Mapping[str, Family]) -> None:
    """Every unit's estimated peak memory and work (:meth:`Family.cost`, from the shapes its engine
    allocates) within ``budget``, else a :class:`ConfigError` naming the field that sets it: the
    ``chunk`` where fewer repetitions per unit would fit, else the panel's instance (memory) or
    horizon (work). ``families``: :data:`learners.families.FAMILIES` (passed in, as they import
    this module)."""
    count = min(config.chunk, config.repetitions)
    for panel in config.panels:
        for i, algorithm in enumerate(config.algorithms):
            own = panel.for_family(algorithm.family)
            family = families[algorithm.family]
            for eps in own.epsilons if algorithm.private else (None,):
                learner = algorithm.learner(eps)
                cost = family.cost(learner, own, count, config.checkpoints)
                what = f"a unit of {count} repetitions of algorithms[{i}] on panel {panel.name!r}"
                if cost.memory > budget.memory:
                    one = family.cost(learner, own, 1, config.checkpoints)
                    if count > 1 and one.memory <= budget.memory:
                        raise memory_error("chunk", config.chunk, cost, budget, what)
                    raise memory_error(own.instance_where, own.instance.describe(), cost, budget, what)
                if cost.work > budget.work:
                    raise work_error(own.horizon_where, own.horizon, cost.work, cost.formula, budget)
                if not algorithm.private:
                    break

"""A2, A4 and A5 as check rows: what ``dp-audit broken`` prints after the sampled catalogue."""

from __future__ import annotations

import numpy as np

from accounting import validate as v
from accounting.tree import ADD_REMOVE, REPLACE_ONE
from verification.federated.adaptivity import adaptivity_row, adaptivity_search
from verification.federated.gdp import gdp_check, gdp_row
from verification.federated.rows import CheckRow
from verification.federated.tree_noise import measure_tree_noise, noise_row

__all__ = ["run_checks"]


def run_checks(seed: int | None = 0) -> list[CheckRow]:
    """A2, A4 and A5 as check rows, broken then correct within each audit (a few seconds)."""
    s = 0 if seed is None else v.integer("seed", seed, minimum=0)
    a2_seed, a5_seed = (int(c.generate_state(1)[0]) for c in np.random.SeedSequence(s).spawn(2))
    rows: list[CheckRow] = []
    dp = measure_tree_noise("dubey-pentland", horizon=16, seed=a2_seed, claimed_copies=1)
    tree = measure_tree_noise("ldp-fedlinucb", horizon=7, seed=a2_seed)
    rows += [
        noise_row("dubey-pentland-noise-scale", True, dp),
        noise_row("tree-noise-variance", False, tree),
    ]
    rows += [
        gdp_row("tree-code-sigma", True, gdp_check("code", sensitivity=ADD_REMOVE)),
        gdp_row("tree-code-sigma-replace-one", True, gdp_check("code", sensitivity=REPLACE_ONE)),
        gdp_row("tree-paper-sigma", False, gdp_check("paper", sensitivity=REPLACE_ONE)),
        gdp_row("tree-exact-sigma", False, gdp_check("exact", sensitivity=REPLACE_ONE)),
    ]
    rows += [
        adaptivity_row("fedlinucb-within-batch", True, adaptivity_search("ldp-fedlinucb", seed=a5_seed)),
        adaptivity_row(
            "fedlinucb-lazy-within-batch", False, adaptivity_search("ldp-fedlinucb-lazy", seed=a5_seed)
        ),
    ]
    return rows

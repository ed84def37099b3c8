"""Regret experiments of every learner family: configs, a resumable runner, outputs.

An experiment is *data*: a TOML file (:func:`load_config`) naming the instance, the horizon, the
privacy levels, the algorithms with their settings and the seed. One file ships per figure of the
distributed MAB paper (``figure1`` ... ``figure5``; Chowdhury & Zhou 2023, §7 and Appendix J), and
one per figure of the federated LinUCB paper (``fedlcb-figure2a`` ... ``fedlcb-figure3d``; Zhou &
Chowdhury 2024, §6 and Appendix H; ``fedlcb-figure3a`` in small)
(:func:`shipped_configs`). :func:`run_experiment` runs it and writes, in one results folder,

``config.toml``    the resolved configuration (``--quick`` applied, defaults filled in); running it
                   again reproduces the results;
``versions.json``  Python, the libraries and the platform;
``regret.csv``     tidy regret curves: one row per panel, algorithm, ε, repetition and checkpoint;
``summary.json``   final time-average and cumulative regret with 95% confidence intervals, the
                   privacy (the theorem's claim and the exact guarantee of the saved ledgers,
                   side by side) and the communication of every panel/algorithm/ε; ``family`` and
                   ``regret_label`` (how the plots name the regret);
``summary.md``     the same as a table (printed by ``dp-regret run``);
``ledgers/``       the ledger of one user of each released batch size (linear: of each number of
                   tree nodes a batch entered), per panel, algorithm and ε (``dp-account ledger
                   FILE`` re-accounts it);
``regret-*.png``   time-average regret ``Reg(t)/t`` against the round, each figure also as ``.pdf``
                   and ``.svg`` (:func:`plot_results`);
``units/``         one ``.npz`` per finished unit of work (below).

**Learner families** (:mod:`learners.families`). One runner, one config format and one results
layout serve every family; a family declares its algorithms, its instance kinds (their keys,
validation, and whether an instance is drawn per repetition or shared), how a learner is built
and checked, how a unit runs, the per-repetition arrays a unit keeps and its entries of
``summary.json``. ``mab``: the distributed MAB learners (:mod:`learners.mab`), regret the
pseudo-regret ``Reg(t)``. ``linear``: federated LinUCB (:mod:`learners.linear`) on the
``linear-synthetic`` instance (one instance, from ``instance_seed``, shared by every repetition:
the paper fixes it) or the real-data ``linear-mslr`` one (queries of an MSLR-WEB10K-format file
as contexts, their documents as arms, or the offline stand-in without a ``path``; shared by every
repetition, read and fitted once), regret the group pseudo-regret ``R_M(t)`` summed over the
silos, and ``communication`` (syncs, reals and bits per silo) in the summary. A config's family is its
algorithms' (one family per config), or its ``family`` key, which the fingerprint includes unless
it is ``"mab"`` (so results folders of earlier versions resume).

**Common random numbers and seeds.** Repetition ``r`` of panel ``p`` draws its instance (the arm
means of a synthetic MAB instance; a shared instance is built once) and its reward tape from the
two children of
``SeedSequence(seed, spawn_key=(p, 0, r))``; every algorithm and every ε of the panel is run on the
same instance and on a fresh generator of the same tape, so the comparison between algorithms has
low variance (as in the authors' released code for Chowdhury & Zhou 2023, §7). Privacy noise of a
unit comes from ``SeedSequence(seed, spawn_key=(p, 1, algorithm, epsilon, chunk))``. Unlike the
paper's released code (whose noise generator is unseeded) every number is reproducible: the same
config gives the same ``regret.csv``, bit for bit, whatever the number of workers and however often
the run was interrupted and resumed. (``chunk`` is part of the config: each chunk has its own noise stream.)
A non-private algorithm (``"se"``) runs once per panel; its rows have an empty ε and it is drawn
in every ε's subplot.

**Plots and intervals.** Summary intervals are 95% Student-t intervals,
``mean ± t_{0.975, R-1} sd / sqrt(R)``; the plots' bands are these by default, or ±1 standard
error as in the paper's figures (Chowdhury & Zhou 2023, §7; about half as wide at ``R = 20``) with
the config's ``bands = "se"`` or ``dp-regret plot --bands se`` (:mod:`learners.plotting`).

**Units and resuming.** A unit is one (panel, algorithm, ε, chunk of ``chunk`` repetitions). Each
finished unit is saved at once, atomically, as ``units/<panel>__<algorithm>__<ε>__<chunk>.npz``
(indices), holding the regret curves, the family's per-repetition arrays (MAB: ``released``,
``final_arms``; linear: ``syncs``, ``reals``, ``bits``, ``clipped``) and a JSON meta with the
unit's ledgers; a run started again on the same folder loads the finished units and computes only
the rest (a unit of an older version, or without its family's arrays, is computed again).
``fingerprint.txt`` holds a hash of everything in the config that the numbers depend on (not
names, labels or the description), so a folder is never resumed with a different config. Each
unit holds a sha256 of its content: one edited after it was written is refused, naming the file.
While a run writes a folder it holds ``.dp-regret.lock`` (an ``fcntl`` lock, released however the
run ends, naming the holder): a second run on the same folder is refused at once.

**Execution.** Units run here one after another (with a progress bar), on ``workers`` local
processes (:class:`concurrent.futures.ProcessPoolExecutor`) or on a Dask cluster (``scheduler``:
an address or a :class:`distributed.Client`; the optional ``dask`` extra). Results come back to this
process, which alone writes the folder.

**Config format**: see :mod:`learners.config`, and the README's section "Experiment config
reference" (every key with its type, default, valid range and meaning).

**Modules.** :mod:`learners.config` (the TOML format and its validation), :mod:`learners.families`
(what each learner family plugs in), :mod:`learners.runner`
(units of work and their execution), :mod:`learners.results` (the folder's files and the summary),
:mod:`learners.plotting` (the figures). This module gathers their public names.
"""

from __future__ import annotations

from learners.config import (
    MAX_CURVE_POINTS,
    MAX_EPSILON,
    MAX_HORIZON,
    MAX_REPETITIONS,
    MIN_EPSILON,
    AlgorithmSpec,
    Config,
    Panel,
    Unit,
    load_config,
    shipped_configs,
)
from learners.families import (
    FAMILIES,
    INSTANCE_KINDS,
    MAX_ARMS,
    Family,
    InstanceSpec,
    LinearInstanceSpec,
    MSLRLinearSpec,
    family_of_algorithm,
)
from learners.plotting import PAPER_COLORS, plot_results
from learners.results import (
    CONFIG_FILE,
    CSV_COLUMNS,
    CSV_FILE,
    FINGERPRINT_FILE,
    SUMMARY_FILE,
    UNITS_DIR,
    VERSIONS_FILE,
    TamperedError,
)
from learners.runner import LOCK_FILE, connect, run_experiment

__all__ = [
    "CONFIG_FILE",
    "CSV_COLUMNS",
    "CSV_FILE",
    "FAMILIES",
    "FINGERPRINT_FILE",
    "INSTANCE_KINDS",
    "LOCK_FILE",
    "MAX_ARMS",
    "MAX_CURVE_POINTS",
    "MAX_EPSILON",
    "MAX_HORIZON",
    "MAX_REPETITIONS",
    "MIN_EPSILON",
    "PAPER_COLORS",
    "SUMMARY_FILE",
    "UNITS_DIR",
    "VERSIONS_FILE",
    "AlgorithmSpec",
    "Config",
    "Family",
    "InstanceSpec",
    "LinearInstanceSpec",
    "MSLRLinearSpec",
    "Panel",
    "TamperedError",
    "Unit",
    "connect",
    "family_of_algorithm",
    "load_config",
    "plot_results",
    "run_experiment",
    "shipped_configs",
]

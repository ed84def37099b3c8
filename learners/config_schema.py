"""The keys of the experiment config's own tables, and the README's config reference.

The top level (:data:`TOP`), ``[[panels]]`` (:data:`PANEL`), ``[[algorithms]]``
(:data:`ALGORITHM`) and ``[quick]`` (:data:`QUICK`) as :class:`~learners.schema.Section` tables
of keys; the instance kinds and ``params`` are each family's
(:attr:`learners.families.Family.instance_sections`, :attr:`~learners.families.Family.params_section`).
:func:`reference` renders all of them as the README's section "Experiment config reference"
(a test checks that the README holds exactly this text; ``python -m learners.config_schema
README.md`` rewrites the section).
"""

from __future__ import annotations

import sys
import textwrap
from dataclasses import replace
from pathlib import Path

from learners.families import FAMILIES
from learners.schema import (
    MAX_CURVE_POINTS,
    MAX_EPSILON,
    MAX_HORIZON,
    MAX_REPETITIONS,
    MAX_SEED,
    MIN_EPSILON,
    NAME,
    NAME_DOC,
    REQUIRED,
    WHY_CURVES,
    WHY_EPSILON,
    WHY_HORIZON,
    WHY_REPETITIONS,
    Field,
    Section,
)

#: The bands a plot can draw around a mean regret curve (``bands``): ``"ci95"``, the 95% Student-t
#: interval ``mean ± t_{0.975, R-1} sd / sqrt(R)``, or ``"se"``, ±1 standard error ``sd / sqrt(R)``
#: (the papers' figures; about half as wide at R = 20).
BANDS = ("ci95", "se")
DEFAULT_BANDS = "ci95"
#: What a panel's figure plots against (``x_axis``): the round, ε (the final regret), or the
#: horizon (the final regret of each ``"horizon"`` panel against its T, log-log).
X_AXES = ("round", "epsilon", "horizon")
DEFAULT_X_AXIS = "round"
#: What a ``"round"`` panel's figures plot against t (``y_axis``, one figure each): the
#: time-average regret ``Reg(t)/t``, the cumulative regret ``Reg(t)`` or ``Reg(t)/√t``.
Y_AXES = ("average", "cumulative", "sqrt")
DEFAULT_Y_AXES = ("average",)

_ROUTES = "`auto`, `pld`, `rdp`, `zcdp`, `pure`, `published`, `published:<bound>`"

#: The top level of a config.
TOP = Section(
    "Top level",
    (
        Field(
            "name",
            "string",
            "the experiment; the default results folder `results/NAME` (`results/NAME-quick`)",
            pattern=NAME,
            valid_doc=NAME_DOC,
        ),
        Field(
            "family",
            "string",
            "the learner family (`learners/families/`): `mab` (the distributed MAB learners), `linear` "
            "(federated LinUCB), `phased` (DP-DPE and DP-PE) or `ldp` (the locally private bandits of Zheng "
            "et al.); the instances are of its kinds. Algorithms of other families may join when they name "
            "the regret alike and every panel's instance is one each of them runs: Bernoulli arms with "
            "fixed `means` are both `bernoulli` (`mab`) and `ldp-bernoulli` (`ldp`), so LDP-UCB runs beside "
            "LDP-SE and the distributed and shuffle variants on the same arms (`ldp-mab-ucb`); otherwise an "
            "algorithm of another family is an error naming `algorithms[i].name` or the instance's `kind`; "
            "part of the fingerprint unless `mab`",
            default=None,
            choices=tuple(FAMILIES),
            refusal="one of " + ", ".join(FAMILIES),
            default_doc="the family of the first algorithm",
        ),
        Field("description", "string", "one line, shown by `dp-regret list`", default=""),
        Field(
            "seed",
            "integer",
            "the root of every random stream (instances, rewards, noise)",
            low=0,
            high=MAX_SEED,
            why="numpy seeds are non-negative 128-bit integers",
        ),
        Field(
            "repetitions",
            "integer",
            "R, the independent runs averaged",
            low=1,
            high=MAX_REPETITIONS,
            why=WHY_REPETITIONS,
        ),
        Field(
            "horizon",
            "integer",
            "T, the rounds of a run",
            default=None,
            low=2,
            high=MAX_HORIZON,
            why=WHY_HORIZON,
            missing="a horizon T (in the panel or at the top level)",
            default_doc="required here unless every panel sets it",
            valid_doc="2 … 10^12, and ≥ K",
        ),
        Field(
            "epsilons",
            "numbers",
            "the privacy levels ε; every private algorithm runs at each",
            default=None,
            low=MIN_EPSILON,
            high=MAX_EPSILON,
            high_open=True,
            why=WHY_EPSILON,
            distinct="privacy levels without repeats",
            missing="privacy levels (in the panel or at the top level)",
            default_doc="required if an algorithm is private",
        ),
        Field(
            "checkpoints",
            "integer",
            "regret is recorded at this many evenly spaced rounds",
            default=1000,
            low=1,
            high=MAX_CURVE_POINTS,
            why=WHY_CURVES,
            valid_doc="1 … 10^8 (at most T are used)",
        ),
        Field(
            "chunk",
            "integer",
            "repetitions per unit of work (saved at once; each chunk has its own noise stream, so it is "
            "part of the results)",
            default=10,
            low=1,
        ),
        Field(
            "delta",
            "number",
            "the δ of the (ε, δ) statements of the non-pure variants; `linear`, `phased`, `ldp`: the δ of "
            'every private learner without its own `params.delta` (`ldp` with `mechanism = "laplace"` or '
            '`"randomized-response"`: none)',
            default=1e-6,
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        ),
        Field(
            "privacy_route",
            "string",
            "the accountant route answering the ledgers for the headline `privacy.epsilon` in "
            "`summary.json`, in every family (`published`: Lemma 3 / Lemma 4 of Chowdhury & Zhou 2023, "
            "instant); not part of the fingerprint",
            default="auto",
            valid_doc=_ROUTES,
        ),
        Field(
            "exact_privacy",
            "string",
            "how `privacy.exact` is answered: `auto` the exact routes, each ledger within a deterministic "
            "cost budget (`learners.privacy.EXACT_BUDGET`, about 20 s), else the published bound; `cheap` "
            "the same with a budget of a fraction of a second; `off` no exact block; a route: every ledger "
            "by it. `--exact-privacy` overrides it; not part of the fingerprint",
            default="auto",
            default_doc='`"auto"` (`"cheap"` with `--quick`)',
            valid_doc="`auto`, `cheap`, `off`, or a route as above",
        ),
        Field(
            "bands",
            "string",
            "the band around each mean curve: the 95% Student-t interval, or ±1 standard error (the papers' "
            "bands, about half as wide at R = 20); plots only, not part of the fingerprint; `dp-regret plot "
            "--bands` overrides it",
            default=DEFAULT_BANDS,
            choices=BANDS,
            refusal='one of "ci95" (95% t-interval) or "se" (±1 standard error, the papers\' bands)',
        ),
        Field(
            "x_axis",
            "string",
            "what a panel's figure `regret-<panel>` plots against: Reg(t)/t against the round t, a subplot "
            "per ε; or the final regret Reg(T) against ε (log scale), a line per private algorithm with its "
            "band and each non-private one as a horizontal line; or, for `horizon`, the panel is one point "
            "of the figure `regret-horizon`: the final regret Reg(T) of each algorithm and ε over every "
            "`horizon` panel against the panel's T, on log-log axes, with the least-squares slope of log "
            "Reg(T) on log T in the legend (`learners.plotting.horizon_lines`); plots only, not part of the "
            "fingerprint",
            default=DEFAULT_X_AXIS,
            choices=X_AXES,
            refusal='one of "round" (Reg(t)/t against t), "epsilon" (Reg(T) against ε) or "horizon" '
            "(Reg(T) against T over the panels)",
            valid_doc="`round`, `epsilon` (needs a private algorithm), `horizon` (at least two such panels, "
            "at two horizons or more after `[quick]`'s cap)",
        ),
        Field(
            "y_axis",
            "strings",
            "what a `round` panel's figures plot against t, a figure each: the time-average regret Reg(t)/t "
            "(`regret-<panel>`), the cumulative regret Reg(t) (`regret-<panel>-cumulative`) or Reg(t)/√t "
            "(`regret-<panel>-sqrt`, as the official LDP-LinUCB figures); plots only, not part of the "
            "fingerprint",
            default=DEFAULT_Y_AXES[0],
            choices=Y_AXES,
            refusal='one of "average" (Reg(t)/t), "cumulative" (Reg(t)) or "sqrt" (Reg(t)/√t), or a list of '
            "them without repeats (a figure each)",
            valid_doc="`average`, `cumulative`, `sqrt`, or a list of them without repeats; other than "
            "`average` only where `x_axis` is `round`",
        ),
        Field(
            "instance",
            "table",
            "the bandit instance",
            default=None,
            missing="an [instance] table (in the panel or at the top level)",
            default_doc="required unless every panel sets it",
            valid_doc="below",
        ),
        Field(
            "algorithms",
            "tables",
            "below",
            missing="an array of tables [[algorithms]] (the key is required)",
            valid_doc="at least one",
        ),
        Field(
            "panels",
            "tables",
            "below",
            default=None,
            default_doc="one panel, named `name`",
            valid_doc="at least one if given",
        ),
        Field("quick", "table", "what `--quick` changes", default=None, valid_doc="below"),
    ),
)


def _overriding(key: str, meaning: str, valid: str = "") -> Field:
    """A panel's key that overrides the top level's."""
    return replace(
        TOP[key],
        meaning=meaning,
        default=None,
        default_doc=f"the top-level `{key}`",
        valid_doc=valid or f"as `{key}`",
    )


#: ``[[panels]]``: a panel overrides the top level's instance, horizon, privacy levels and axes.
PANEL = Section(
    "[[panels]]",
    (
        replace(
            TOP["name"],
            meaning="names the panel in files (`regret-NAME.png`), rows and plots",
            missing="a panel name (the key is required)",
            valid_doc="as the top-level `name`; unique",
        ),
        _overriding("instance", "this panel's instance", "as `[instance]`"),
        _overriding("horizon", "this panel's T"),
        _overriding("epsilons", "this panel's privacy levels"),
        _overriding("x_axis", "what this panel's figure plots against"),
        _overriding("y_axis", "what this panel's figures plot against t"),
    ),
)


def _algorithm_names() -> str:
    return "; ".join(f"`{f.name}`: " + ", ".join(f"`{a}`" for a in f.algorithms) for f in FAMILIES.values())


#: ``[[algorithms]]``: one learner (the same algorithm may appear twice with other params and labels).
ALGORITHM = Section(
    "[[algorithms]]",
    (
        Field(
            "name",
            "string",
            "the learner (`learners.mab.ALGORITHMS`: Theorems 1–6 of Chowdhury & Zhou (2023), DP-SE "
            "(central, Sajed & Sheffet) and the non-private SE; `learners.linear.ALGORITHMS`: FedLinUCB of "
            "Zhou & Chowdhury (2024) without privacy, with protocol P (silo-level LDP, Theorem 5.1; "
            "`-lazy`: Algorithm 8), with shuffling (amplification, Theorem 5.3; the vector-sum protocol, "
            "Theorem 5.5), and Dubey & Pentland's adaptive rule, which is not private; "
            "`learners.phased.ALGORITHMS`: DP-DPE of Li, Zhou & Ji (2022) (Algorithm 1) in the central, "
            "local and shuffle models, non-private DPE and DPE-FixedU, and the single-agent DP-PE "
            "(Algorithm 3); `learners.ldp.ALGORITHMS`: Zheng et al. (2020)'s Algorithm 1 (the one-point "
            "black-box reduction), Algorithm 2 (two-point), Algorithm 5 (LDP-LinUCB), Algorithm 3 "
            "(LDP-GLM), and Algorithms 1 and 2 without noise); of the config's family, or of another one on "
            "the same instance (`family`)",
            valid_doc=_algorithm_names(),
        ),
        Field(
            "label",
            "string",
            "the name in plots, `regret.csv` and `summary.json`",
            default=None,
            default_doc="the learner's, e.g. `Dist-RDP-SE(s=10)`, `LDP-FedLinUCB-Lazy`",
            valid_doc="non-empty, unique in the config",
        ),
        Field(
            "params",
            "table",
            "keywords of the family's `make_learner` (`learners.mab`, `learners.linear`, `learners.phased`, "
            "`learners.ldp`); the ε comes from `epsilons`",
            default=None,
            default_doc="`{}`",
            valid_doc="the keys below",
        ),
    ),
)


def _capped(key: str, meaning: str) -> Field:
    """A ``[quick]`` key: the top level's range, no default (unchanged)."""
    return replace(TOP[key], meaning=meaning, default=None, default_doc="unchanged", valid_doc="")


#: ``[quick]``: what ``--quick`` changes.
QUICK = Section(
    "[quick]",
    (
        _capped("horizon", "a cap on every panel's horizon"),
        _capped("repetitions", "replaces `repetitions`"),
        _capped("checkpoints", "replaces `checkpoints`"),
    ),
)

# ---------------------------------------------------------------------------------------
# The README's config reference
# ---------------------------------------------------------------------------------------

TITLE = "## Experiment config reference"

_INTRO = """\
A config is one TOML file, checked in one place (`learners/config.py`, by the table of keys of
`learners/schema.py` this section is generated from) before anything runs or is written: an
unknown key, a value of the wrong type or out of range exits with status 2 and one line naming the
key (`panels[2].instance.arms`). `dp-regret show figure1` prints a complete, commented config. A
test (`tests/learners/test_schema.py`) checks that this section is the rendering of that table
(`python -m learners.config_schema README.md` rewrites it). Integers are TOML integers
(`1_000_000`, not `1e6`)."""

_BEYOND = """\
Beyond the ranges: repetitions × checkpoints and repetitions × arms at most 10^8 (both are held in
memory; for `linear`, min(chunk, repetitions) × agents × arms × dim at most 10^8). The
*fingerprint* (`fingerprint.txt`) hashes every key that changes the numbers: a folder is resumed
only by a config with the same one, and `name`, `description`, labels, panel names,
`privacy_route`, `exact_privacy`, `bands`, `x_axis` and `y_axis` can change without starting
afresh."""


def _instance_table() -> str:
    rows = ["| `kind` | keys (type, default, valid) | the instance |", "|---|---|---|"]
    for fam in FAMILIES.values():
        for kind, section in fam.instance_sections.items():
            owner = "" if fam.name == "mab" else f" (family `{fam.name}`)"
            rows.append(f"| `{kind}`{owner} | {section.cells()} | {section.meaning} |")
    return "\n".join(rows) + "\n"


def _params_tables() -> list[str]:
    out: list[str] = []
    for fam in FAMILIES.values():
        note = fam.params_section.meaning
        head = f"`params` of the `{fam.name}` family" + (f" ({note})" if note else "") + ":"
        out += [textwrap.fill(head, width=100, break_long_words=False, break_on_hyphens=False)]
        out += ["", fam.params_section.markdown("param")]
        if fam.old_params:
            renames = ", ".join(f"`{old}` (now `{new}`)" for old, new in fam.old_params.items())
            line = f"Old spellings still accepted, with a note on stderr: {renames}."
            out += [textwrap.fill(line, width=100, break_long_words=False, break_on_hyphens=False), ""]
    return out


def reference() -> str:
    """The README's section "Experiment config reference", rendered from the schema."""
    parts = [
        TITLE,
        "",
        _INTRO,
        "",
        "**Top level**",
        "",
        TOP.markdown(),
        _BEYOND,
        "",
        "**`[instance]`** (a table at the top level or `instance = { ... }` in a panel; `kind` required)",
        "",
        _instance_table(),
        "**`[[algorithms]]`** (one table per algorithm; the same algorithm may appear twice with other",
        "params and labels)",
        "",
        ALGORITHM.markdown(),
        *_params_tables(),
        "**`[[panels]]`** (optional; without it, one panel named after the config)",
        "",
        PANEL.markdown(),
        "**`[quick]`** (optional; applied by `--quick`, which requires it)",
        "",
        QUICK.markdown(),
        "",
    ]
    return "\n".join(parts)


def readme_section(text: str) -> str:
    """The section :data:`TITLE` of a README's ``text``, up to the next ``## `` heading."""
    start = text.index(TITLE + "\n")
    end = text.find("\n## ", start + 1)
    return text[start : end + 1 if end != -1 else len(text)]


def main(argv: list[str]) -> int:
    """``python -m learners.config_schema README.md``: rewrite the README's section."""
    for name in argv:
        path = Path(name)
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(readme_section(text), reference()), encoding="utf-8")
    return 0


__all__ = [
    "ALGORITHM",
    "BANDS",
    "DEFAULT_BANDS",
    "DEFAULT_X_AXIS",
    "DEFAULT_Y_AXES",
    "PANEL",
    "QUICK",
    "REQUIRED",
    "TOP",
    "X_AXES",
    "Y_AXES",
    "readme_section",
    "reference",
]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The ``dp-regret`` command line (also ``python -m learners``).

Subcommands:

``list``       the shipped configs: one per figure of the distributed MAB paper (Chowdhury &
               Zhou 2023: ``figure1`` ... ``figure5``) and of the federated LinUCB paper (``fedlcb-figure2a``
               ... ``fedlcb-figure3d``);
``run``        run an experiment config (TOML) into a results folder, resuming one left unfinished;
``reproduce``  run a shipped config by name (``--quick`` for a small version that takes seconds);
``show``       print a shipped config's TOML (``dp-regret show figure2 > my-experiment.toml`` starts
               your own);
``plot``       redraw the figures (PNG, PDF, SVG) of a results folder from its ``regret.csv``
               (``--bands se`` for ±1 standard error instead of the config's band).

Exit status: 0 on success, 2 for invalid input (a one-line message naming the bad field or option;
nothing is written) — a bad config, an unreadable or read-only folder, a results folder another run
holds (its lock names the holder), a checkpoint edited by hand, an unreachable ``--scheduler`` —
and 130 when interrupted (every finished unit is kept: run the same command again to resume).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accounting import validate as v
from accounting.answers import CACHE_DIR_ENV, NO_CACHE_ENV
from accounting.cli.framework import Parser, checked, run
from accounting.integrity import read_key
from learners.budget import DEFAULT_MAX_MEMORY, DEFAULT_MAX_WORK, GIB, Budget
from learners.config import BANDS
from learners.errors import ConfigError, LearnerError
from learners.experiment import (
    CSV_FILE,
    SUMMARY_FILE,
    Config,
    Unit,
    load_config,
    plot_results,
    run_experiment,
    shipped_configs,
)
from learners.families import InstanceSpec, MSLRLinearSpec
from learners.plotting import FORMATS
from learners.results import summary_table

#: Where results go when ``--out`` is not given: ``results/<name>`` (``-quick`` appended for ``--quick``).
RESULTS_ROOT = Path("results")


def _cmd_list(args: argparse.Namespace) -> int:
    configs = shipped_configs()
    width = max(len(name) for name in configs)
    for name, path in configs.items():
        print(f"{name:<{width}}  {load_config(path).description}")
    print("\nrun one with: dp-regret reproduce NAME [--quick]")
    print("start your own from one: dp-regret show NAME > my-experiment.toml")
    return 0


def _load(path: Path, args: argparse.Namespace) -> Config:
    read_key()  # a signing key in the environment is checked before anything runs
    try:
        budget = Budget(args.max_memory * GIB, args.max_work)
        return load_config(path, quick=args.quick, exact_privacy=args.exact_privacy, budget=budget)
    except ConfigError as err:
        hint = ""
        if err.name == "config" and not path.exists():
            if str(path) in shipped_configs():
                hint = f" (a shipped config: dp-regret reproduce {path})"
            else:
                hint = f" (start one from a shipped config: dp-regret show figure2 > {path})"
        raise LearnerError(f"{path}: {err}{hint}") from err


def _note_stand_in(config: Config, shipped: str | None) -> None:
    """One line on stderr when a real-data panel runs on the offline stand-in, not MSLR-WEB10K:
    which panels, and how to give the real file (in a copy of the config, for a shipped one)."""
    panels = [
        p
        for p in config.panels
        if isinstance(p.instance, InstanceSpec | MSLRLinearSpec)
        and p.instance.kind in ("mslr", "linear-mslr")
        and p.instance.path is None
    ]
    if not panels:
        return
    names = ", ".join(p.name for p in panels)
    tables = ", ".join(dict.fromkeys(p.instance_where for p in panels))
    add = f'add path = "..." (a local MSLR-WEB10K-format file) to {tables}'
    how = (
        f"dp-regret show {shipped} > {shipped}.toml, {add} there, then dp-regret run {shipped}.toml"
        if shipped is not None
        else add
    )
    what = (
        "scikit-learn's digits data as queries of its images, built the same way"
        if isinstance(panels[0].instance, MSLRLinearSpec)
        else "scikit-learn's diabetes data, clustered the same way"
    )
    print(
        f"dp-regret: note: panel(s) {names} use the offline stand-in ({what}), not MSLR-WEB10K; "
        f"for the real data: {how}",
        file=sys.stderr,
    )


def _execute(config: Config, args: argparse.Namespace, shipped: str | None = None) -> int:
    _note_stand_in(config, shipped)
    out = (
        args.out if args.out is not None else RESULTS_ROOT / (config.name + ("-quick" if args.quick else ""))
    )
    counts = {True: 0, False: 0}

    def count(unit: Unit, computed: bool) -> None:
        counts[computed] += 1

    try:
        run_experiment(
            config,
            out,
            workers=args.workers,
            scheduler=args.scheduler,
            progress=not args.no_progress,
            force=args.force,
            on_unit=count,
            cache=not args.no_cache,
        )
    except KeyboardInterrupt:
        print(
            f"\ninterrupted: {counts[True]} unit(s) computed in this run are saved in {out}; "
            "run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    resumed = f", {counts[False]} found finished" if counts[False] else ""
    print(f"{config.name}: {counts[True]} unit(s) computed{resumed}")
    print(f"results: {out}  ({CSV_FILE}, {SUMMARY_FILE}, config.toml, versions.json)")
    formats = "each also as .pdf and .svg"
    if config.quick:
        formats = "PNG only in a quick run; every format: dp-regret plot FOLDER"
    print(f"plots ({formats}):")
    for png in sorted(out.glob("regret*.png")):
        print(f"  {png}")
    print()
    _print_summary(json.loads((out / SUMMARY_FILE).read_text(encoding="utf-8")))
    print("\n" + summary_table(out), end="")  # the privacy spent, claimed vs exact (summary.md)
    return 0


def _print_summary(summary: dict[str, Any]) -> None:
    # By panel, then ε, then algorithm: the rows one compares are next to each other.
    panels = [p["name"] for p in summary["panels"]]
    labels = list(dict.fromkeys(r["label"] for r in summary["results"]))
    rows = sorted(
        summary["results"],
        key=lambda r: (panels.index(r["panel"]), r["epsilon"] or 0.0, labels.index(r["label"])),
    )
    name, symbol = summary.get("regret_label", ["pseudo-regret", "Reg(t)"])
    print(f"final time-average {name} {symbol.replace('(t)', '(T)')}/T: mean ± 95% CI half-width")
    label_width = max(len(r["label"]) for r in rows)
    for r in rows:
        stats = r["pseudo_regret"]["time_average"]
        half = stats["half_width"]
        spread = f" ± {half:.4f}" if half is not None else ""
        eps = f"ε={r['epsilon']:g}" if r["epsilon"] is not None else "non-private"
        print(
            f"  {r['panel']:<8} {eps:<10} {r['label']:<{label_width}}  {stats['mean']:.4f}{spread}  "
            f"(T={r['round']}, R={r['repetitions']})"
        )


def _cmd_run(args: argparse.Namespace) -> int:
    return _execute(_load(args.config, args), args)


def _cmd_reproduce(args: argparse.Namespace) -> int:
    return _execute(_load(shipped_configs()[args.name], args), args, shipped=args.name)


def _cmd_show(args: argparse.Namespace) -> int:
    sys.stdout.write(shipped_configs()[args.name].read_text(encoding="utf-8"))
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    for path in plot_results(args.results, bands=args.bands, formats=tuple(dict.fromkeys(args.formats))):
        print(path)
    return 0


def _limit(text: str) -> float:
    """A budget of ``--max-memory`` / ``--max-work``: a number > 0, or ``inf`` for no limit."""
    if text.strip().lower() in ("inf", "infinity"):
        return math.inf
    return _positive(text)


_positive = checked(v.positive)
_max_memory = _max_work = _limit
_workers = checked(v.integer, integer=True, minimum=1, maximum=4096, why="local processes of one machine")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="dp-regret",
        description="Run regret experiments (the figures of the distributed MAB and federated LinUCB "
        "papers, or your own config) and plot them.",
    )
    parser.add_version()
    sub = parser.add_subparsers(dest="command", required=True)

    listing = sub.add_parser("list", help="the shipped configs (one per reproduced figure)")
    listing.set_defaults(func=_cmd_list)

    show = sub.add_parser(
        "show", help="print a shipped config (start your own: dp-regret show figure2 > my-experiment.toml)"
    )
    show.add_argument("name", choices=list(shipped_configs()), help="the figure (see `dp-regret list`)")
    show.set_defaults(func=_cmd_show)

    def running(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument(
            "--out", type=Path, help="the results folder (default results/NAME, results/NAME-quick)"
        )
        cmd.add_argument("--quick", action="store_true", help="apply the config's [quick] overrides")
        cmd.add_argument("--workers", type=_workers, default=1, help="local worker processes (default 1)")
        cmd.add_argument("--scheduler", help="run the units on the Dask scheduler at this address")
        cmd.add_argument(
            "--force", action="store_true", help="discard earlier results in the folder and start afresh"
        )
        cmd.add_argument("--no-progress", action="store_true", help="no progress bar")
        cmd.add_argument(
            "--exact-privacy",
            metavar="MODE",
            help="how the exact privacy of the run's ledgers is answered: auto (the exact routes, each "
            "ledger within a deterministic cost budget; the default), cheap (the default with --quick: "
            "exact only where it costs well under a second, else the published bound), off, or an "
            "accountant route (pld, rdp, zcdp, pure, published[:NAME]); default: the config's",
        )
        cmd.add_argument(
            "--max-memory",
            type=_max_memory,
            default=DEFAULT_MAX_MEMORY / GIB,
            metavar="GIB",
            help="refuse a config whose unit (one algorithm at one ε on one chunk of repetitions: one "
            "process) is estimated to hold more than this many GiB of arrays, before anything runs "
            f"(default {DEFAULT_MAX_MEMORY / GIB:g}; the estimate comes from the shapes the learners "
            "allocate; lower `chunk` to fit)",
        )
        cmd.add_argument(
            "--max-work",
            type=_max_work,
            default=DEFAULT_MAX_WORK,
            metavar="OPS",
            help="refuse a config whose unit is estimated to take more than this many operations "
            f"(multiply-adds of the learner's per-round products; a MAB pull counts 32), default "
            f"{DEFAULT_MAX_WORK:g} (hours of a core); `inf` for no limit",
        )
        cmd.add_argument(
            "--no-cache",
            action="store_true",
            help="compute every certified answer afresh, neither reading nor writing the on-disk cache "
            f"of answers (also: {NO_CACHE_ENV}=1; its folder: {CACHE_DIR_ENV})",
        )

    run_cmd = sub.add_parser("run", help="run an experiment config (TOML); resumes an unfinished run")
    run_cmd.add_argument("config", type=Path, help="the TOML config")
    running(run_cmd)
    run_cmd.set_defaults(func=_cmd_run)

    reproduce = sub.add_parser("reproduce", help="run a shipped config (a figure of a paper)")
    reproduce.add_argument("name", choices=list(shipped_configs()), help="the figure (see `dp-regret list`)")
    running(reproduce)
    reproduce.set_defaults(func=_cmd_reproduce)

    plot = sub.add_parser("plot", help="redraw the figures (PNG, PDF, SVG) of a results folder")
    plot.add_argument("results", type=Path, help="the results folder")
    plot.add_argument(
        "--bands",
        choices=BANDS,
        help="the band around each mean: ci95 (95%% t-interval) or se (±1 standard error, the "
        "papers' bands); default: the config's `bands`, else ci95",
    )
    plot.add_argument(
        "--formats",
        nargs="+",
        choices=FORMATS,
        default=list(FORMATS),
        metavar="FORMAT",
        help="the formats to write: some of " + ", ".join(FORMATS) + " (default: all)",
    )
    plot.set_defaults(func=_cmd_plot)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser(), argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

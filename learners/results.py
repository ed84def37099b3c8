"""The results folder of a regret experiment: its files, the unit checkpoints, the outputs.

See :mod:`learners.experiment` for the layout. Beside the regret, the folder holds what the run
spent in privacy:

``ledgers/``       the run's ledgers, one file per (panel, algorithm, ε, released batch size):
                   ``ledgers/<panel>__<algorithm>__<ε>__n<batch size>.json`` (indices, as the units;
                   the ledger of one user of such a batch, parallel composition; in the linear
                   family ``n`` is the number of tree nodes per stream the batch entered), written by
                   :meth:`Accountant.to_json <accounting.accountant.Accountant.to_json>` with its
                   sha256; ``dp-account ledger FILE --delta D [--route R]`` re-accounts one;
``summary.json``   each result's ``privacy`` is the report of :mod:`learners.privacy`, the same in
                   every family: the family's own account answered by the config's
                   ``privacy_route`` (``epsilon``, ``delta``, its ledgers' keys: unchanged, the
                   published bound in the shipped MAB configs), ``claimed``, the guarantee of the
                   algorithm's theorem or target (``{"epsilon", "delta", "statement", "holds"}``,
                   ``epsilon`` null where its hypotheses fail), and ``exact``, the guarantee of the
                   saved ledgers by the config's ``exact_privacy`` mode (``{"epsilon", "delta",
                   "route", "enclosure", "ledgers", "batches" (linear: "nodes"; phased: "phases"),
                   "message", ...}``, null when the mode is ``"off"``); the summary's top level
                   records ``privacy_route`` and ``exact_privacy``, and ``ledger_sha256``, the digest
                   of every ledger file, which every reader checks (:mod:`learners.run_ledgers`).
                   Each (panel, algorithm, ε) is answered by :func:`group_report`, in the run's
                   worker pool;
``summary.md``     the same side by side with the final regret, a markdown table
                   (:func:`summary_table`).

Every ε written is a certified upper bound (the table rounds up).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from numpy.typing import NDArray

from accounting.accountant import Accountant
from accounting.integrity import RUN_DIGESTS, read_key
from accounting.storage import atomic_path, json_text, read_text, strict_json_loads, write_atomic
from learners.config import Config, Unit
from learners.errors import LearnerError, ParameterError
from learners.families import DEFAULT_FAMILY, FAMILIES

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Files of a results folder.
CSV_FILE = "regret.csv"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.toml"
VERSIONS_FILE = "versions.json"
FINGERPRINT_FILE = "fingerprint.txt"
UNITS_DIR = "units"
LEDGERS_DIR = "ledgers"
SUMMARY_TABLE_FILE = "summary.md"
CSV_COLUMNS = (
    "panel",
    "algorithm",
    "label",
    "epsilon",
    "repetition",
    "round",
    "pseudo_regret",
    "realized_regret",
)


#: The arrays of every unit, in the order they are saved and hashed; a family's per-repetition
#: arrays (:attr:`learners.families.Family.unit_arrays`) follow, then the meta and the hash.
_REGRET_ARRAYS = ("rounds", "pseudo", "realized")
_RESERVED = (*_REGRET_ARRAYS, "meta", "checksum")


@dataclass(frozen=True, eq=False)
class UnitData:
    """One finished unit: its regret curves, its family's per-repetition arrays and its JSON meta.

    Saved as ``.npz``: ``rounds``, ``pseudo``, ``realized``, then each array of ``extra`` under its
    own name (MAB: ``released``, ``final_arms``; linear: ``syncs``, ``reals``, ``bits``,
    ``clipped``), ``meta`` and ``checksum``, a sha256 of every array (name, dtype, shape, bytes, in
    the saved order) and of the meta. Units of the MAB family written before the families existed
    have the same layout and hash.
    """

    rounds: IntArray
    pseudo: FloatArray
    realized: FloatArray
    extra: dict[str, NDArray[Any]]
    meta: dict[str, Any]

    #: The hash of the content, written with it (``None`` for units of an older version).
    checksum: str | None = None

    def __post_init__(self) -> None:
        clash = sorted(set(self.extra) & set(_RESERVED))
        if clash:
            raise ValueError(f"a unit's family arrays may not be named {clash}")

    def arrays(self) -> dict[str, NDArray[Any]]:
        return {"rounds": self.rounds, "pseudo": self.pseudo, "realized": self.realized, **self.extra}

    def digest(self) -> str:
        """``sha256:`` of every array (dtype, shape, bytes) and the meta JSON, in a fixed order."""
        h = hashlib.sha256()
        for name, a in self.arrays().items():
            c = np.ascontiguousarray(a)
            h.update(f"{name}:{c.dtype.str}:{c.shape};".encode())
            h.update(c.tobytes())
        h.update(json.dumps(self.meta, sort_keys=True).encode())
        return "sha256:" + h.hexdigest()

    def save(self, path: Path) -> None:
        entries: dict[str, Any] = {
            **self.arrays(),
            "meta": np.array(json.dumps(self.meta, sort_keys=True)),
            "checksum": np.array(self.digest()),
        }
        with atomic_path(path) as tmp, tmp.open("wb") as f:
            np.savez(f, **entries)

    @classmethod
    def load(cls, path: Path) -> UnitData:
        """Read a unit; one whose content does not match its hash is :class:`TamperedError`.

        The family's arrays are the archive's other entries, in the order they were saved (the
        order of the hash).
        """
        with np.load(path, allow_pickle=False) as z:
            extra = {name: np.asarray(z[name]) for name in z.files if name not in _RESERVED}
            data = cls(
                np.asarray(z["rounds"], dtype=np.int64),
                np.asarray(z["pseudo"], dtype=np.float64),
                np.asarray(z["realized"], dtype=np.float64),
                extra,
                strict_json(str(z["meta"])),
                str(z["checksum"]) if "checksum" in z.files else None,
            )
        if data.checksum is not None and data.checksum != data.digest():
            raise TamperedError(
                "checkpoint",
                str(path),
                "a unit checkpoint whose content matches the hash written with it (it was changed after "
                "it was written); delete it to compute it again, or --force to start afresh",
            )
        return data

    def fits(self, unit: Unit, arrays: Sequence[str] = ()) -> bool:
        """Whether this is a finished ``unit`` of this version, with the family's ``arrays``."""
        c = self.rounds.shape[0]
        return (
            self.checksum is not None  # units of an older version: run them again
            and self.pseudo.shape == self.realized.shape == (unit.count, c)
            and all(name in self.extra and self.extra[name].shape[:1] == (unit.count,) for name in arrays)
            and "ledgers" in self.meta  # units of an older version held no ledgers: run them again
        )


class TamperedError(ParameterError, LearnerError):
    """A file of a results folder does not match the content hash written with it."""


def _twice(key: str, value: Any) -> Exception:
    # The message a malformed results file has always been refused with (the readers quote it).
    return ValueError(f"the key {key!r} appears twice in one object")


def strict_json(text: str) -> Any:
    """``json.loads`` that refuses a key given twice in one object (the later would win silently).

    :func:`accounting.storage.strict_json_loads` with the results folder's own refusal, a plain
    :class:`ValueError` (``the key 'k' appears twice in one object``) that the readers of a results
    folder (:func:`summary_table`, :func:`load_summary`, :mod:`learners.plotting`) quote.
    """
    return strict_json_loads(text, duplicate=_twice)


# ---------------------------------------------------------------------------------------
# Outputs: CSV, summary, plots
# ---------------------------------------------------------------------------------------


def t_quantile(repetitions: int) -> float:
    """``t_{0.975, R-1}``, the two-sided 95% quantile of Student's t with ``repetitions - 1`` degrees
    of freedom: the half-width of a 95% interval of a mean of ``R`` values is ``t sd / sqrt(R)``."""
    from scipy import stats

    return float(stats.t.ppf(0.975, repetitions - 1))


def _statistics(values: FloatArray) -> dict[str, Any]:
    """Mean and the 95% t confidence interval ``mean ± t_{0.975, R-1} sd / sqrt(R)`` of ``values``."""
    r = values.size
    mean = float(values.mean())
    if r < 2:
        return {"mean": mean, "sd": None, "half_width": None, "ci95": None}
    sd = float(values.std(ddof=1))
    half = t_quantile(r) * sd / math.sqrt(r)
    return {"mean": mean, "sd": sd, "half_width": half, "ci95": [mean - half, mean + half]}


def _merge_ledgers(metas: Sequence[Mapping[str, Any]]) -> tuple[dict[int, Accountant], dict[int, int]]:
    """The ledgers of a (panel, algorithm, ε) over its chunks, and the releases of each ledger key.

    Every chunk wrote the ledger of each key it released (MAB: a batch size; linear: the tree
    nodes per stream a batch entered); chunks that released under the same key wrote the same events
    (the parameters depend on the key only). Releases are counted where the meta has them (MAB).
    """
    ledgers: dict[int, Accountant] = {}
    releases: dict[int, int] = {}
    for m in metas:
        for key, data in m["ledgers"].items():
            n, ledger = int(key), Accountant.from_dict(data)
            if ledgers.setdefault(n, ledger) != ledger:
                raise LearnerError(f"two chunks wrote different ledgers under the key {n}")
            if "releases" in m:
                releases[n] = releases.get(n, 0) + int(m["releases"][key])
    return dict(sorted(ledgers.items())), releases


def _save_ledgers(
    out: Path, stem: str, ledgers: Mapping[int, Accountant], key: bytes | None
) -> dict[str, str]:
    """Write each ledger to ``ledgers/<stem>__n<size>.json`` (signed with ``key`` if given): each
    path relative to ``out``, and the digest of what was written (as ``summary.json`` records it)."""
    folder = out / LEDGERS_DIR
    folder.mkdir(exist_ok=True)
    written = {}
    for name, ledger in zip(ledger_files(stem, ledgers), ledgers.values(), strict=True):
        write_atomic(out / name, ledger.to_json(key=key) + "\n")
        written[name] = ledger.to_dict()["sha256"]  # its content's digest (accounting.integrity)
    return written


def ledger_files(stem: str, ledgers: Mapping[int, Accountant]) -> list[str]:
    """The paths, relative to the results folder, of a result's ledger files (:func:`_save_ledgers`)."""
    return [f"{LEDGERS_DIR}/{stem}__n{n}.json" for n in ledgers]


Group = tuple[int, int, int]


def group_report(config: Config, group: Group, datas: Sequence[UnitData]) -> dict[str, Any]:
    """The family's entries of the ``summary.json`` result of one (panel, algorithm, ε) ``group``,
    from its units' ``datas`` (in chunk order): the privacy report (claimed, exact, ...), the
    communication, the learner (:meth:`learners.families.Family.result`).

    A pure function of the units: it runs in a worker of the run's pool as soon as the group's
    last unit is done (:func:`learners.runner.run_experiment`), or here when the outputs are written.
    """
    ledgers, releases = _merge_ledgers([d.meta for d in datas])
    return _report(config, group, datas, ledgers, releases)


def _report(
    config: Config,
    group: Group,
    datas: Sequence[UnitData],
    ledgers: Mapping[int, Accountant],
    releases: Mapping[int, int],
) -> dict[str, Any]:
    """:func:`group_report` from the group's ledgers already merged (:func:`_merge_ledgers`)."""
    p, a, e = group
    panel, algorithm = config.panels[p], config.algorithms[a]
    family = FAMILIES[algorithm.family]
    eps = panel.epsilons[e] if algorithm.private else None
    metas = [d.meta for d in datas]
    arrays = {n: np.concatenate([d.extra[n] for d in datas]) for n in family.unit_arrays}
    return family.result(
        algorithm.learner(eps),
        panel.for_family(family.name),
        arrays,
        metas,
        ledgers,
        releases,
        delta=config.delta,
        route=config.privacy_route,
        exact=config.exact_privacy,
        files=ledger_files(_stem(group), ledgers),
    )


def _stem(group: Group) -> str:
    """``<panel>__<algorithm>__<ε>`` (indices, as the units'): the stem of the group's ledger files."""
    p, a, e = group
    return f"{p}__{a}__{e}"


def groups_of(units: Sequence[Unit]) -> dict[Group, list[Unit]]:
    """The units of each (panel, algorithm, ε), in the order of ``units``."""
    out: dict[Group, list[Unit]] = {}
    for u in units:
        out.setdefault((u.panel, u.algorithm, u.epsilon), []).append(u)
    return out


def write_outputs(
    config: Config, out: Path, units: Sequence[Unit], reports: Mapping[Group, dict[str, Any]] | None = None
) -> None:
    """Write ``regret.csv``, the ledgers, ``summary.json`` and ``summary.md`` from the saved units;
    ``reports`` holds the :func:`group_report` of groups already answered (the others are here)."""
    reports = reports or {}
    groups = {
        key: [(u, UnitData.load(out / UNITS_DIR / f"{u.stem}.npz")) for u in members]
        for key, members in groups_of(units).items()
    }

    results: list[dict[str, Any]] = []
    saved: dict[str, str] = {}  # each ledger file written, and its digest
    key = read_key()  # with a key in the environment every ledger is signed
    with atomic_path(out / CSV_FILE) as tmp, tmp.open("w", encoding="utf-8", newline="") as f:
        f.write(",".join(CSV_COLUMNS) + "\n")
        for group, parts in groups.items():
            _write_rows(f, config, group, parts)
            datas = [d for _, d in parts]
            # One merge of the group's ledgers: saved here, and answered here when the pool did not.
            ledgers, releases = _merge_ledgers([d.meta for d in datas])
            saved.update(_save_ledgers(out, _stem(group), ledgers, key))
            report = reports.get(group)
            if report is None:
                report = _report(config, group, datas, ledgers, releases)
            results.append(_result(config, group, datas, report))

    summary = _summary(config, results)
    summary[RUN_DIGESTS] = dict(sorted(saved.items()))  # checked on every read (learners.run_ledgers)
    # Infinities and NaN as strings (a statistic of a degenerate run may be NaN): the summary's rule,
    # where the command lines refuse NaN.
    write_atomic(out / SUMMARY_FILE, json_text(summary, nan="string") + "\n")
    write_atomic(out / SUMMARY_TABLE_FILE, _markdown(summary))
    for stale in (out / LEDGERS_DIR).glob("*__n*.json"):  # a ledger no result of this run names
        if f"{LEDGERS_DIR}/{stale.name}" not in saved:
            stale.unlink()


def _write_rows(f: TextIO, config: Config, group: Group, parts: Sequence[tuple[Unit, UnitData]]) -> None:
    """The ``regret.csv`` rows of one (panel, algorithm, ε): each repetition's curve, in chunk order."""
    p, a, e = group
    panel, algorithm = config.panels[p], config.algorithms[a]
    eps = panel.epsilons[e] if algorithm.private else None
    eps_text = repr(eps) if eps is not None else ""
    rounds = parts[0][1].rounds
    for u, data in parts:
        if not np.array_equal(data.rounds, rounds):
            raise LearnerError(f"unit {u.stem}: checkpoints differ from the other chunks'")
        round_list = rounds.tolist()
        for i in range(u.count):
            rep = u.first + i
            for t, ps, rz in zip(round_list, data.pseudo[i].tolist(), data.realized[i].tolist(), strict=True):
                f.write(
                    f"{panel.name},{algorithm.name},{_csv_text(algorithm.label)},{eps_text},"
                    f"{rep},{t},{ps!r},{rz!r}\n"
                )


def _result(
    config: Config, group: Group, datas: Sequence[UnitData], report: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``summary.json`` result of one (panel, algorithm, ε): its final regret statistics and
    the family's ``report`` (:func:`group_report`)."""
    p, a, e = group
    panel, algorithm = config.panels[p], config.algorithms[a]
    family = FAMILIES[algorithm.family]
    pseudo = np.concatenate([d.pseudo for d in datas])
    realized = np.concatenate([d.realized for d in datas])
    final_round = int(datas[0].rounds[-1])
    return {
        "panel": panel.name,
        "algorithm": algorithm.name,
        **({"family": family.name} if len(config.families) > 1 else {}),
        "label": algorithm.label,
        "epsilon": panel.epsilons[e] if algorithm.private else None,
        "horizon": panel.horizon,
        "repetitions": int(pseudo.shape[0]),
        "round": final_round,
        "pseudo_regret": {
            "time_average": _statistics(pseudo[:, -1] / final_round),
            "cumulative": _statistics(pseudo[:, -1]),
        },
        "realized_regret": {
            "time_average": _statistics(realized[:, -1] / final_round),
            "cumulative": _statistics(realized[:, -1]),
        },
        # the family's: the privacy (claimed, exact, ...), communication, learner
        **report,
    }


def _summary(config: Config, results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The content of ``summary.json``: the config's description and the ``results``."""
    return {
        "name": config.name,
        "family": config.family,
        # a config whose algorithms span families (each result says its own)
        **({"families": list(config.families)} if len(config.families) > 1 else {}),
        # how the plots and summary.md name the regret (the pseudo-regret, or the group's: one
        # name for every family of a config)
        "regret_label": list(config.learners.regret_label),
        "description": config.description,
        "fingerprint": config.fingerprint,
        "quick": config.quick,
        "privacy_route": config.privacy_route,
        "exact_privacy": config.exact_privacy,
        "seed": config.seed,
        "repetitions": config.repetitions,
        "delta": config.delta,
        "panels": [
            {
                "name": p.name,
                "instance": p.instance.to_dict(),
                "caption": p.instance.describe(),
                "horizon": p.horizon,
                "epsilons": list(p.epsilons),
            }
            for p in config.panels
        ],
        "results": list(results),
    }


def summary_table(results_dir: str | os.PathLike[str]) -> str:
    """The summary table of a results folder (its ``summary.md``), from its ``summary.json``.

    A markdown table, one row per panel, ε and algorithm: the nominal ε, the guarantee the
    variant's theorem claims, the exact guarantee of the run's saved ledgers with the route that
    answered it, and the final time-average pseudo-regret ``Reg(T)/T`` with its 95% interval's
    half-width. Every ε is a certified upper bound, rounded up to 4 significant digits.
    """
    path = Path(results_dir) / SUMMARY_FILE
    summary = load_summary(path)
    try:
        return _markdown(summary)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        detail = f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
        raise ParameterError(
            "results_dir", str(path), f"a {SUMMARY_FILE} written by dp-regret ({detail})"
        ) from None


def _up(x: Any, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits, rounded *up*: the text read back as a float is at
    least ``x`` (as ``repr`` does for the full float), so a certified bound stays one."""
    value = float(x)  # "inf" in standard JSON
    if not math.isfinite(value):
        return "∞"
    text = f"{value:.{digits}g}"
    if float(text) < value:
        d = Decimal(value)
        quantum = Decimal(1).scaleb(d.adjusted() - digits + 1)
        text = f"{float(d.quantize(quantum, rounding=ROUND_CEILING)):.{digits}g}"
    return text


def _guarantee(epsilon: Any, delta: Any) -> str:
    return f"({_up(epsilon)}, {float(delta)!r})" if float(delta) else f"({_up(epsilon)}, 0)"


def _markdown(summary: Mapping[str, Any]) -> str:
    """The markdown table of :func:`summary_table` for a summary (as :func:`write_outputs` builds it)."""
    panels = [p["name"] for p in summary["panels"]]
    labels = list(dict.fromkeys(r["label"] for r in summary["results"]))
    rows = sorted(
        summary["results"],
        key=lambda r: (panels.index(r["panel"]), r["epsilon"] or 0.0, labels.index(r["label"])),
    )
    family = FAMILIES.get(str(summary.get("family", DEFAULT_FAMILY)), FAMILIES[DEFAULT_FAMILY])
    symbol = family.regret_label[1].replace("(t)", "(T)")
    named = summary.get("families", [family.name])
    notes_of = [FAMILIES[n] for n in named if isinstance(n, str) and n in FAMILIES] or [family]
    lines = [f"# {summary['name']}: privacy spent and final regret", ""]
    for f in notes_of:  # what "claimed" and "exact" mean in each family of the table
        lines += [f"{f.name} family: {f.table_note}" if len(notes_of) > 1 else f.table_note, ""]
    mode = summary.get("exact_privacy", "auto")
    if mode != "auto":
        note = _MODE_NOTES.get(mode, f"The exact column is answered by the route {mode!r}.")
        if summary.get("quick") and mode == "cheap":
            note += " A quick run: without --quick, or with --exact-privacy auto, every ledger is exact."
        lines += [note, ""]
    lines += [
        f"| panel | algorithm | nominal ε | claimed (ε, δ) | exact (ε, δ) | route | {symbol}/T |",
        "|---|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    for r in rows:
        privacy = r["privacy"]
        claimed, exact = privacy.get("claimed"), privacy.get("exact")
        if r["epsilon"] is None:
            nominal, claim, spent, route = "—", "none", "none (non-private)", "—"
        else:
            nominal = f"{r['epsilon']:g}"
            claim = (
                _guarantee(claimed["epsilon"], claimed["delta"])
                if claimed is not None and claimed["epsilon"] is not None
                else "— (hypotheses fail)"
            )
            spent = _guarantee(exact["epsilon"], exact["delta"]) if exact is not None else "off"
            route = exact["route"] if exact is not None else "—"
            if exact is not None and exact.get("message"):
                notes.append(f"- {r['panel']}, {r['label']}, ε = {nominal}: {exact['message']}")
        stats = r["pseudo_regret"]["time_average"]
        half = stats["half_width"]
        regret = f"{stats['mean']:.4f}" + (f" ± {half:.4f}" if half is not None else "")
        lines.append(
            f"| {r['panel']} | {_cell(r['label'])} | {nominal} | {claim} | {spent} | {route} | {regret} |"
        )
    if notes:
        lines += ["", "Notes:", "", *notes]
    return "\n".join(lines) + "\n"


#: The first note of ``summary.md`` when the exact column is not answered by mode ``"auto"``.
_MODE_NOTES = {
    "cheap": 'Exact privacy by cheap routes only (exact_privacy = "cheap"): a ledger whose exact answer '
    "is estimated to cost more than a fraction of a second is answered by the published bound on its "
    "mechanism, and its route says so.",
    "off": 'Exact privacy is off (exact_privacy = "off"): the exact column is not computed.',
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _csv_text(text: str) -> str:
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


@dataclass(frozen=True, eq=False)
class Curve:
    """The regret curves of one (panel, algorithm, ε) as ``regret.csv`` holds them: the pseudo-regret
    of each repetition (rows) at each checkpoint ``rounds`` (columns); ``epsilon`` ``None`` for a
    non-private algorithm."""

    panel: str
    algorithm: str
    label: str
    epsilon: float | None
    rounds: IntArray
    pseudo: FloatArray  # (R, C)


def read_curves(path: Path) -> list[Curve]:
    """The regret curves of a ``regret.csv``, in the order they appear.

    A file that is not what :func:`run_experiment` writes — another header, a short or garbled
    line, a round below 1, a non-finite regret, repetitions with different checkpoints — is a
    :class:`ParameterError` naming the file and the line.
    """
    rows: dict[tuple[str, str, str, str], dict[int, list[tuple[int, float]]]] = {}
    expected = f"a {CSV_FILE} written by dp-regret, with columns {', '.join(CSV_COLUMNS)}"

    def bad(detail: str) -> ParameterError:
        return ParameterError("results_dir", str(path), f"{expected} ({detail})")

    try:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None or tuple(header) != CSV_COLUMNS:
                raise bad("its header differs")
            for line in reader:
                if len(line) != len(CSV_COLUMNS):
                    raise bad(f"line {reader.line_num} has {len(line)} fields, not {len(CSV_COLUMNS)}")
                panel, algorithm, label, eps, rep, t, regret, _ = line
                if not (panel and algorithm and label):
                    raise bad(f"line {reader.line_num}: an empty panel, algorithm or label")
                try:
                    point, r = (int(t), float(regret)), int(rep)
                    eps_ok = not eps or math.isfinite(float(eps))
                except ValueError as exc:
                    raise bad(f"line {reader.line_num}: {exc}") from None
                if point[0] < 1 or r < 0 or not math.isfinite(point[1]) or not eps_ok:
                    raise bad(f"line {reader.line_num}: a round < 1, a repetition < 0 or a non-finite number")
                rows.setdefault((panel, algorithm, label, eps), {}).setdefault(r, []).append(point)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise bad(" ".join(str(exc).split())[:200]) from None
    curves = []
    for (panel, algorithm, label, eps), reps in rows.items():
        series = [sorted(points) for _, points in sorted(reps.items())]
        rounds = np.array([t for t, _ in series[0]], dtype=np.int64)
        if any([t for t, _ in s] != rounds.tolist() for s in series):
            raise bad(f"the repetitions of {panel}/{label}/{eps or 'non-private'} have different checkpoints")
        pseudo = np.array([[v for _, v in s] for s in series], dtype=np.float64)
        curves.append(Curve(panel, algorithm, label, float(eps) if eps else None, rounds, pseudo))
    return curves


def load_summary(path: Path) -> dict[str, Any]:
    """A results folder's ``summary.json``, checked to be what ``run`` writes: an object whose
    ``panels`` are objects with a non-empty ``name``, a ``caption`` and a ``horizon`` >= 1, whose
    ``results`` are objects naming one of those panels, a non-empty ``algorithm`` and ``label``,
    an ``epsilon`` that is null or a number > 0, and a ``privacy`` object (where given). Read only
    as a regular file of at most :data:`accounting.storage.MAX_READ_BYTES` bytes.

    Raises
    ------
    ParameterError
        Naming ``results_dir``, the file and the first field that differs.
    """

    def bad(detail: str) -> ParameterError:
        return ParameterError("results_dir", str(path), f"a {SUMMARY_FILE} written by dp-regret ({detail})")

    text = read_text(path, "results_dir", what=SUMMARY_FILE)
    try:
        data = strict_json(text)
    except (ValueError, RecursionError) as exc:
        raise bad(f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}") from None
    if not isinstance(data, dict):
        raise bad("not an object")
    panels = data.get("panels")
    if not isinstance(panels, list) or not panels:
        raise bad("panels: a non-empty list of panels")
    for i, p in enumerate(panels):
        if not (isinstance(p, dict) and isinstance(p.get("name"), str) and p["name"]):
            raise bad(f"panels[{i}].name: a non-empty string")
        horizon = p.get("horizon")
        if not isinstance(p.get("caption"), str) or not (isinstance(horizon, int) and horizon >= 1):
            raise bad(f"panels[{i}]: a caption and a horizon >= 1")
    names = {p["name"] for p in panels}
    results = data.get("results")
    if not isinstance(results, list):
        raise bad("results: a list of results")
    for i, r in enumerate(results):
        if not isinstance(r, dict) or r.get("panel") not in names:
            raise bad(f"results[{i}].panel: the name of one of its panels")
        for key in ("algorithm", "label"):
            if not (isinstance(r.get(key), str) and r[key]):
                raise bad(f"results[{i}].{key}: a non-empty string")
        eps = r.get("epsilon")
        if eps is not None and not (isinstance(eps, int | float) and not isinstance(eps, bool) and eps > 0):
            raise bad(f"results[{i}].epsilon: null or a number > 0")
        if not isinstance(r.get("privacy", {}), dict):
            raise bad(f"results[{i}].privacy: an object")
    return data


def summary_captions(data: Mapping[str, Any]) -> tuple[str | None, dict[str, str]]:
    """The title and the panel captions of a ``summary.json``'s content (:func:`load_summary`)."""
    title = data.get("name")
    captions = {str(p["name"]): f"{p['caption']}, T={_short(int(p['horizon']))}" for p in data["panels"]}
    return (str(title) if title is not None else None), captions


def _short(n: int) -> str:
    """``1e6`` for 1000000, ``2.5e5`` for 250000, ``1234`` for 1234."""
    if n < 10**4:
        return str(n)
    digits = len(str(n)) - 1
    mantissa = n / 10**digits
    return f"{mantissa:g}e{digits}" if mantissa == round(mantissa, 3) else str(n)

"""Running a regret experiment: units of work, here, on processes or on Dask, resumably.

See :mod:`learners.experiment` for seeds, resuming and execution.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
import zipfile
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from accounting.answers import caching
from accounting.storage import write_atomic
from learners.cluster import CONNECT_TIMEOUT as CONNECT_TIMEOUT
from learners.cluster import connect as connect
from learners.cluster import import_distributed
from learners.config import Config, Instance, Unit
from learners.errors import ConfigError, ParameterError, ParameterTypeError
from learners.families import FAMILIES
from learners.plotting import FORMATS, plot_results
from learners.results import (
    CONFIG_FILE,
    CSV_FILE,
    FINGERPRINT_FILE,
    SUMMARY_FILE,
    UNITS_DIR,
    VERSIONS_FILE,
    Group,
    TamperedError,
    UnitData,
    group_report,
    groups_of,
    write_outputs,
)

if TYPE_CHECKING:
    from distributed import Client

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


# ---------------------------------------------------------------------------------------
# Units of work: the task shipped to a worker and the data it sends back
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Task:
    unit: Unit
    family: str
    learner: Any
    #: one instance shared by the unit's repetitions, or a tuple of one per repetition
    instances: Any
    horizon: int
    tape_seeds: tuple[np.random.SeedSequence, ...]
    noise_seed: np.random.SeedSequence
    checkpoints: int
    delta: float


def _compute(task: _Task) -> UnitData:
    """Run one unit (in this process, a worker process or on a Dask worker) by its family's run."""
    tapes = [np.random.default_rng(s) for s in task.tape_seeds]
    run = FAMILIES[task.family].run(
        task.learner,
        task.instances,
        task.horizon,
        tapes=tapes,
        rng=np.random.default_rng(task.noise_seed),
        checkpoints=task.checkpoints,
        delta=task.delta,
    )
    return UnitData(run.rounds, run.pseudo, run.realized, run.arrays, run.meta)


@dataclass(frozen=True)
class _Draws:
    """A panel's instances (one shared, or one per repetition) and its repetitions' tape seeds."""

    shared: bool
    instances: Any
    tape_seeds: list[np.random.SeedSequence]


def _panel_draws(config: Config, shared_cache: dict[Instance, Any]) -> dict[tuple[int, str], _Draws]:
    """For each panel and family of the config: the panel's instance(s) as the family runs it
    (:meth:`Panel.for_family`), one per repetition unless shared, and the tape seeds (the same
    for every family: its repetitions' tapes are the panel's)."""
    out: dict[tuple[int, str], _Draws] = {}
    for (p, fam), panel in (
        ((p, fam), whole.for_family(fam)) for p, whole in enumerate(config.panels) for fam in config.families
    ):
        instance_seeds, tape_seeds = [], []
        for r in range(config.repetitions):
            child_instance, child_tape = np.random.SeedSequence(config.seed, spawn_key=(p, 0, r)).spawn(2)
            instance_seeds.append(child_instance)
            tape_seeds.append(child_tape)
        spec = panel.instance
        if spec.shared:
            if spec not in shared_cache:
                try:
                    shared_cache[spec] = spec.build_shared()
                except (ParameterError, ParameterTypeError) as err:
                    where = f"{panel.instance_where}.{_instance_field(err.name)}"
                    raise ConfigError(where, err.value, err.valid) from err
            out[p, fam] = _Draws(True, shared_cache[spec], tape_seeds)
        else:
            drawn = [spec.draw(np.random.default_rng(s)) for s in instance_seeds]
            out[p, fam] = _Draws(False, drawn, tape_seeds)
    return out


def _instance_field(name: str) -> str:
    """The ``[instance]`` key of a parameter of :mod:`learners.datasets` / :mod:`~learners.environments`."""
    return {"seed": "cluster_seed", "locations": "means"}.get(name, name)


def _tasks(config: Config, units: Sequence[Unit]) -> list[_Task]:
    draws = _panel_draws(config, {})
    tasks = []
    for u in units:
        panel = config.panels[u.panel]
        algorithm = config.algorithms[u.algorithm]
        draw = draws[u.panel, algorithm.family]
        part = draw.instances if draw.shared else tuple(draw.instances[u.first : u.first + u.count])
        noise = np.random.SeedSequence(config.seed, spawn_key=(u.panel, 1, u.algorithm, u.epsilon, u.chunk))
        eps = panel.epsilons[u.epsilon] if algorithm.private else None
        tasks.append(
            _Task(
                u,
                algorithm.family,
                algorithm.learner(eps),
                part,
                panel.horizon,
                tuple(draw.tape_seeds[u.first : u.first + u.count]),
                noise,
                config.checkpoints,
                config.delta,
            )
        )
    return tasks


# ---------------------------------------------------------------------------------------
# Execution: here, on local processes, or on a Dask cluster
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Report:
    """The privacy report (and the other family entries) of one (panel, algorithm, ε) whose units
    are all done: run in the pool beside the units (:func:`learners.results.group_report`)."""

    config: Config
    group: Group
    datas: tuple[UnitData, ...]
    #: The disk cache of answers: used (``True``), bypassed (``False``) or as the worker's setting.
    cache: bool | None


def _report(job: _Report) -> dict[str, Any]:
    if job.cache is None:
        return group_report(job.config, job.group, job.datas)
    with caching(job.cache):
        return group_report(job.config, job.group, job.datas)


_Job = _Task | _Report
_Done = Generator[tuple[_Job, Any], None, None]


def _do(job: _Job) -> Any:
    """Run a job in this process, a worker process or on a Dask worker."""
    return _compute(job) if isinstance(job, _Task) else _report(job)


class _Pool:
    """Jobs run here, on local processes or on a Dask cluster; more may be submitted while the
    finished ones are collected (a group's report when its last unit is done)."""

    def __init__(self, workers: int, client: Any) -> None:
        self.client = client
        self.queue: list[_Job] = []
        self.futures: dict[Any, _Job] = {}
        self.pool = ProcessPoolExecutor(max_workers=workers) if client is None and workers > 1 else None
        self.stream: Any = None
        if client is not None:
            self.stream = import_distributed().as_completed([], loop=client.loop)

    def submit(self, job: _Job) -> None:
        if self.client is not None:
            future = self.client.submit(_do, job, pure=False)
            self.futures[future] = job
            self.stream.add(future)
        elif self.pool is not None:
            self.futures[self.pool.submit(_do, job)] = job
        else:
            self.queue.append(job)

    def done(self) -> _Done:
        """Each job with its result as it finishes, until none is left (submitted ones included)."""
        while self.queue or self.futures:
            if self.queue:
                job = self.queue.pop(0)
                yield job, _do(job)
            elif self.client is not None:
                future = next(self.stream)
                job = self.futures.pop(future)
                result = future.result()
                future.release()
                yield job, result
            else:
                finished, _ = wait(list(self.futures), return_when=FIRST_COMPLETED)
                for future in finished:
                    yield self.futures.pop(future), future.result()

    def close(self) -> None:
        """Stop the workers and cancel what is queued (when the run stops early)."""
        if self.client is not None and self.futures:
            self.client.cancel(list(self.futures))
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        self.futures.clear()
        self.queue.clear()


def _check_scheduler(scheduler: object, workers: object) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ParameterError("workers", workers, "an integer >= 1")
    if scheduler is None:
        return
    if isinstance(scheduler, str):
        if not scheduler:
            raise ParameterError("scheduler", scheduler, "None, a Dask scheduler address or a Client")
    elif not (hasattr(scheduler, "submit") and hasattr(scheduler, "cancel")):
        raise ParameterTypeError("scheduler", scheduler, "None, a Dask scheduler address (str) or a Client")
    if workers != 1:
        raise ParameterError(
            "workers", workers, "1 when a scheduler is given (the cluster has its own workers)"
        )


# ---------------------------------------------------------------------------------------
# The results folder
# ---------------------------------------------------------------------------------------


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for key, dist in (
        ("numpy", "numpy"),
        ("scipy", "scipy"),
        ("mpmath", "mpmath"),
        ("sklearn", "scikit-learn"),
        ("matplotlib", "matplotlib"),
        ("dpcert", "dpcert"),
    ):
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = "not installed"
    out["executable"] = sys.executable
    return out


#: The lock of a results folder: held (``fcntl.flock``) by the run writing it, and naming it.
LOCK_FILE = ".dp-regret.lock"


def _folder_error(out: Path, exc: OSError) -> ParameterError:
    """An operating-system error on the results folder, as one line naming the file."""
    where = f"{exc.filename}: " if exc.filename else ""
    return ParameterError("out_dir", str(out), f"a writable results folder ({where}{exc.strerror or exc})")


def _check_place(out: Path) -> None:
    """Refuse, before writing anything, a results folder that is a file or lies below one."""
    if out.exists() and not out.is_dir():
        raise ParameterError("out_dir", str(out), "a folder (a file of that name exists)")
    for parent in out.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise ParameterError("out_dir", str(out), f"a folder, but {parent} is a file")
            break


class _FolderLock:
    """An exclusive lock on a results folder, so two runs on one folder never write over each other.

    The lock is ``fcntl.flock`` on :data:`LOCK_FILE`, which the kernel releases when the process
    ends however it ends (no stale locks); the file names the holder (pid, host, start time) for the
    message a second run gets, and is removed when the run ends. On Windows the lock is
    ``msvcrt.locking`` on one byte far past the text (so the holder stays readable), also released
    by the system when the process ends; there the file is removed after the lock is released.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / LOCK_FILE
        self.handle: Any = None

    def __enter__(self) -> _FolderLock:
        if self.path.exists() and not self.path.is_file():
            raise ParameterError(
                "out_dir", str(self.out), f"a folder whose {LOCK_FILE} is a file (remove it)"
            )
        while True:
            handle = open(self.path, "a+", encoding="utf-8")  # held until __exit__
            try:
                taken = _lock(handle)
            except OSError:
                handle.close()
                raise
            if not taken:
                handle.seek(0)
                holder = " ".join(handle.read(500).split()) or "another process"
                handle.close()
                raise ParameterError(
                    "out_dir",
                    str(self.out),
                    f"a folder no other run is writing: it is locked by {holder} ({self.path}); wait for "
                    "that run to finish, or give another --out",
                )
            # The holder before us removes the file as it ends: locking that removed file is no lock.
            try:
                same = os.stat(self.path).st_ino == os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            handle.close()
        import socket
        import time

        handle.seek(0)
        handle.truncate()
        started = time.strftime("%Y-%m-%d %H:%M:%S")
        handle.write(f"dp-regret pid {os.getpid()} on {socket.gethostname()} since {started}\n")
        handle.flush()
        self.handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self.handle is None:
            return
        if sys.platform == "win32":  # an open file cannot be removed: release, close, then remove
            _unlock(self.handle)
            self.handle.close()
            with contextlib.suppress(OSError):  # another run opened it meanwhile: it takes it over
                self.path.unlink(missing_ok=True)
        else:
            self.path.unlink(missing_ok=True)  # while still locked: the next run makes a new one
            _unlock(self.handle)
            self.handle.close()
        self.handle = None


#: Where the Windows lock byte lies in the lock file: past the holder's line, which stays readable.
_WINDOWS_LOCK_OFFSET = 2**20


def _lock(handle: Any) -> bool:
    """Take the lock of an open lock file without waiting: ``False`` if another process holds it."""
    if sys.platform == "win32":
        import msvcrt

        handle.seek(_WINDOWS_LOCK_OFFSET)
        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except PermissionError:  # EACCES: the byte is locked by another process
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(handle: Any) -> None:
    if sys.platform == "win32":
        import msvcrt

        handle.seek(_WINDOWS_LOCK_OFFSET)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _our_files(out: Path) -> list[Path]:
    from learners.results import LEDGERS_DIR, SUMMARY_TABLE_FILE

    names = (CSV_FILE, SUMMARY_FILE, SUMMARY_TABLE_FILE, CONFIG_FILE, VERSIONS_FILE, FINGERPRINT_FILE)
    files = [out / n for n in names]
    files += [f for ext in ("png", "pdf", "svg") for f in sorted(out.glob(f"regret*.{ext}"))]
    units = out / UNITS_DIR
    if units.is_dir():
        files += sorted(units.glob("*.npz")) + sorted(units.glob(".*.tmp"))
    ledgers = out / LEDGERS_DIR
    if ledgers.is_dir():
        files += sorted(ledgers.glob("*__n*.json")) + sorted(ledgers.glob(".*.tmp"))
    return [f for f in files if f.is_file()]


def _open_folder(out: Path, config: Config, force: bool) -> None:
    """Check that ``out`` may hold this config's results; clear it with ``force``."""
    if out.exists() and not out.is_dir():
        raise ParameterError("out_dir", str(out), "a folder (a file of that name exists)")
    if not (out.is_dir() and any(f.name != LOCK_FILE for f in out.iterdir())):
        return
    stamp = out / FINGERPRINT_FILE
    old = stamp.read_text(encoding="utf-8").strip() if stamp.is_file() else None
    if old == config.fingerprint and not force:
        return
    if not force:
        if old is None:
            raise ParameterError(
                "out_dir",
                str(out),
                f"a new or empty folder, or a dp-regret results folder (this one has files but no "
                f"{FINGERPRINT_FILE}); pass force=True (--force) to write into it anyway",
            )
        raise ParameterError(
            "out_dir",
            str(out),
            f"a folder holding results of this same config (its fingerprint is {old}, this config's "
            f"is {config.fingerprint}); pass force=True (--force) to discard them and start afresh",
        )
    for f in _our_files(out):
        f.unlink()


def run_experiment(
    config: Config,
    out_dir: str | os.PathLike[str],
    *,
    workers: int = 1,
    scheduler: str | Client | None = None,
    progress: bool = True,
    force: bool = False,
    on_unit: Callable[[Unit, bool], None] | None = None,
    cache: bool | None = None,
) -> Path:
    """Run every unit of ``config`` not yet finished in ``out_dir``, then write the outputs.

    Parameters
    ----------
    config : Config
        From :func:`load_config`.
    out_dir : str or os.PathLike
        The results folder: created if missing; an existing folder of the same config is resumed.
    workers : int, optional
        Local worker processes (1: run here).
    scheduler : str or distributed.Client, optional
        Run the units on a Dask cluster (its address or a client); needs the ``dask`` extra and
        dpcert installed on the workers.
    progress : bool, optional
        Show a progress bar (tqdm, on stderr) over the units.
    force : bool, optional
        Discard earlier results in ``out_dir`` (of any config) and start afresh.
    on_unit : callable, optional
        Called as ``on_unit(unit, computed)`` after each unit is saved (``computed=True``) or found
        finished on disk (``computed=False``); an exception it raises stops the run, with every
        unit saved so far kept for a resume.
    cache : bool, optional
        Read and write the on-disk cache of certified answers (``True``), bypass it (``False``),
        or follow the process's setting (``None``: :func:`accounting.answers.caching_enabled`).
        The answers are the same either way.

    Returns
    -------
    pathlib.Path
        The results folder.

    Raises
    ------
    ConfigError
        A data file that cannot be read or clustered (nothing is written).
    ParameterError
        ``out_dir`` holds something else than results of this config (and ``force`` is false), or
        bad ``workers`` / ``scheduler``.
    """
    if not isinstance(config, Config):
        raise ParameterTypeError("config", config, "a Config (from load_config)")
    _check_scheduler(scheduler, workers)
    out = Path(out_dir)
    units = config.units()
    tasks = _tasks(config, units)  # builds the instances: a bad data file fails before any write
    _check_place(out)
    # Connect before anything is written: an unreachable scheduler is one line, within seconds.
    client: Any = connect(scheduler) if isinstance(scheduler, str) else scheduler
    try:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _folder_error(out, exc) from None
        with _FolderLock(out):
            try:
                return _run_in(out, config, units, tasks, workers, client, progress, force, on_unit, cache)
            except OSError as exc:
                raise _folder_error(out, exc) from None
    finally:
        if isinstance(scheduler, str):
            client.close()


def _run_in(
    out: Path,
    config: Config,
    units: Sequence[Unit],
    tasks: Sequence[_Task],
    workers: int,
    client: Any,
    progress: bool,
    force: bool,
    on_unit: Callable[[Unit, bool], None] | None,
    cache: bool | None,
) -> Path:
    """The body of :func:`run_experiment`, with the folder locked."""
    _open_folder(out, config, force)

    unit_dir = out / UNITS_DIR
    unit_dir.mkdir(parents=True, exist_ok=True)
    for stale in unit_dir.glob(".*.tmp"):
        stale.unlink()
    write_atomic(out / FINGERPRINT_FILE, config.fingerprint + "\n")
    write_atomic(out / CONFIG_FILE, config.to_toml())
    write_atomic(out / VERSIONS_FILE, json.dumps(_versions(), indent=2) + "\n")

    pending: list[_Task] = []
    finished: list[tuple[Unit, UnitData]] = []
    for task in tasks:
        path = unit_dir / f"{task.unit.stem}.npz"
        if path.exists() and not path.is_file():
            raise ParameterError(
                "checkpoint",
                str(path),
                "a unit checkpoint file (this is not a file: remove it to compute the unit)",
            )
        if path.is_file():
            try:
                saved = UnitData.load(path)
                ok = saved.fits(task.unit, FAMILIES[task.family].unit_arrays)
            except TamperedError:
                raise
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
                ok = False  # unreadable (say, a disk filled up): compute it again
            if ok:
                finished.append((task.unit, saved))
                continue
        pending.append(task)

    from tqdm import tqdm

    # Each (panel, algorithm, ε) is answered (its privacy report) in the pool as soon as its last
    # unit is done: the bar counts units and reports.
    members = groups_of(units)
    group_of = {u: key for key, group in members.items() for u in group}
    datas: dict[Unit, UnitData] = {}
    reports: dict[Group, dict[str, Any]] = {}
    pool = _Pool(workers, client)

    def unit_done(unit: Unit, data: UnitData) -> None:
        datas[unit] = data
        key = group_of[unit]
        if all(u in datas for u in members[key]):
            pool.submit(_Report(config, key, tuple(datas[u] for u in members[key]), cache))

    with tqdm(
        total=len(tasks) + len(members),
        initial=len(finished),
        disable=not progress,
        desc=config.name,
        unit="job",
    ) as bar:
        try:
            for unit, data in finished:
                if on_unit is not None:
                    on_unit(unit, False)
                unit_done(unit, data)
            for task in pending:
                pool.submit(task)
            for job, result in pool.done():
                if isinstance(job, _Task):
                    path = unit_dir / f"{job.unit.stem}.npz"
                    result.save(path)
                    bar.update(1)
                    if on_unit is not None:
                        on_unit(job.unit, True)
                    # the report reads the unit as saved (its meta in canonical order), as a resumed
                    # run and the outputs do
                    unit_done(job.unit, UnitData.load(path))
                else:
                    reports[job.group] = result
                    bar.update(1)
        finally:
            pool.close()  # stops the workers (and cancels what is queued) if we stopped early

    write_outputs(config, out, units, reports)
    # a quick run is a look at the curves: PNG only (`dp-regret plot DIR` draws every format)
    # the ledgers and answers this run has just written: drawn without checking them again
    plot_results(out, formats=("png",) if config.quick else FORMATS, check_ledgers=False)
    return out

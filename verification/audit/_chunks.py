"""Sampling in chunks: each chunk from its own spawned stream, counted into histograms, here or on Dask.

Only counts are kept, so ``10^8`` samples per side need the memory of one chunk. On a Dask cluster
each chunk is a task with its own :class:`numpy.random.SeedSequence` child and returns only its
histograms, so the result is the local one, whatever order the tasks finish in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from learners.cluster import import_distributed
from verification.audit._binning import Binning
from verification.audit.pairs import SamplePair, Statistic
from verification.errors import ParameterError, ParameterTypeError, VerificationError

__all__ = [
    "Histograms",
    "Job",
    "checked_outputs",
    "chunk_sizes",
    "client_of",
    "connection",
    "count_chunk",
    "reduce_to_scalars",
    "run_dask",
    "run_local",
]


def checked_outputs(pair: object, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
    """What ``sample_pair(rng, size)`` returned, checked: two arrays of ``size`` outputs, same shape."""
    if not (isinstance(pair, tuple) and len(pair) == 2):
        raise VerificationError(f"sample_pair must return a pair of arrays; got {type(pair).__name__}")
    a, b = (np.asarray(x) for x in pair)
    for name, x in (("D", a), ("D'", b)):
        if x.ndim not in (1, 2) or x.shape[0] != size:
            raise VerificationError(
                f"sample_pair(rng, {size}) returned outputs on {name} of shape {x.shape}: "
                f"expected ({size},) or ({size}, d)"
            )
    if a.shape != b.shape:
        raise VerificationError(f"outputs on D and D' differ in shape: {a.shape} versus {b.shape}")
    return a, b


def reduce_to_scalars(statistic: Statistic, outputs: NDArray[Any]) -> NDArray[Any]:
    """``statistic(outputs)``, checked: one scalar per output (booleans as integers)."""
    t = np.asarray(statistic(outputs))
    if t.shape != (outputs.shape[0],):
        raise VerificationError(
            f"the statistic must map {outputs.shape[0]} outputs to shape ({outputs.shape[0]},); got {t.shape}"
            + (" (vector outputs need a statistic, e.g. CoordinateDifference)" if t.ndim == 2 else "")
        )
    if t.dtype.kind == "b":
        t = t.astype(np.int64)
    return t


@dataclass(frozen=True)
class Job:
    """Everything a chunk needs (shipped once to Dask workers)."""

    sample_pair: SamplePair
    statistic: Statistic
    binning: Binning
    selection_fraction: float


Histograms = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]


def count_chunk(job: Job, seed: np.random.SeedSequence, size: int) -> Histograms:
    """Histograms (selection D, selection D', estimation D, estimation D') of one chunk."""
    rng = np.random.default_rng(seed)
    a, b = checked_outputs(job.sample_pair(rng, size), size)
    split = round(size * job.selection_fraction)
    n = job.binning.bins
    out = []
    for part in (slice(0, split), slice(split, size)):
        for x in (a, b):
            idx = job.binning.index(reduce_to_scalars(job.statistic, x[part]))
            out.append(np.bincount(idx, minlength=n).astype(np.int64))
    return out[0], out[1], out[2], out[3]


def chunk_sizes(samples: int, chunk: int) -> list[int]:
    """``samples`` split into chunks of ``chunk`` (the last one shorter)."""
    full, rest = divmod(samples, chunk)
    return [chunk] * full + ([rest] if rest else [])


def run_local(
    job: Job, seeds: Sequence[np.random.SeedSequence], sizes: Sequence[int]
) -> Iterator[Histograms]:
    """The chunks' histograms, counted here one after the other."""
    for seed, size in zip(seeds, sizes, strict=True):
        yield count_chunk(job, seed, size)


def _distributed() -> Any:
    """The :mod:`distributed` module (an optional dependency), or :class:`VerificationError`."""
    return import_distributed(VerificationError)


def run_dask(
    job: Job, seeds: Sequence[np.random.SeedSequence], sizes: Sequence[int], client: Any
) -> Iterator[Histograms]:
    """The chunks' histograms, counted as Dask tasks (each with its own spawned seed), as they finish."""
    as_completed = _distributed().as_completed
    shipped = client.scatter(job, broadcast=True)
    futures = [
        client.submit(count_chunk, shipped, seed, size, pure=False)
        for seed, size in zip(seeds, sizes, strict=True)
    ]
    try:
        # The client's own loop: with a client made from an address (set_as_default=False),
        # as_completed would otherwise look for a default client and find none.
        for future in as_completed(futures, loop=client.loop):
            result: Histograms = future.result()
            future.release()
            yield result
    finally:
        client.cancel(futures)


def client_of(scheduler: object) -> tuple[Any, bool, str]:
    """A Dask client for ``scheduler`` (an address or a client), whether we own it, and its address."""
    if isinstance(scheduler, str):
        if not scheduler:
            raise ParameterError("scheduler", scheduler, "None, a Dask scheduler address or a Client")
        return _distributed().Client(scheduler, set_as_default=False), True, scheduler
    if hasattr(scheduler, "submit") and hasattr(scheduler, "scatter"):
        address = getattr(getattr(scheduler, "scheduler", None), "address", None) or "dask"
        return scheduler, False, str(address)
    raise ParameterTypeError("scheduler", scheduler, "None, a Dask scheduler address (str) or a Client")


@contextmanager
def connection(scheduler: object) -> Iterator[tuple[Any, str]]:
    """``(client, address)`` of ``scheduler`` (``(None, "local")`` for None); closes a client it made."""
    if scheduler is None:
        yield None, "local"
        return
    client, owned, where = client_of(scheduler)
    try:
        yield client, where
    finally:
        if owned:
            client.close()

"""Real-data bandit instances: arms are K-means clusters of a learning-to-rank data set.

The distributed MAB paper (Chowdhury & Zhou 2023, §7 and App. J) builds a real-data
instance from Microsoft's MSLR-WEB10K: 1,200,192 query-url rows with a relevance label in
``{0, ..., 4}`` and 136 features, clustered by K-means into ``K = 50`` clusters; each cluster is an
arm whose mean is the empirical mean of its rows' labels.

This module provides

* :func:`load_letor` — read an MSLR-WEB10K-format (svmlight) file;
* :class:`ClusteredArms` — a :class:`~learners.environments.MABInstance` whose arm ``a`` pays the
  reward of a uniformly random row of cluster ``a``;
* :func:`cluster_instance` — K-means on (standardized) features, one arm per cluster;
* :func:`mslr_instance` — that recipe on an MSLR-WEB10K file, reward ``label / 4``;
* :func:`default_real_instance` — an offline stand-in built the same way from scikit-learn's bundled
  diabetes data (MSLR-WEB10K cannot be downloaded in this environment);

and, for the federated linear family (Zhou & Chowdhury 2024, §6 and App. H; :mod:`learners.linear`),

* :func:`load_letor_queries` — the same files with their query ids;
* :func:`query_instance` — a :class:`~learners.linear_instances.QueryInstance` from rows grouped
  by query: ``θ*`` fitted by Lasso as the authors' code does, queries split into one block per silo;
* :func:`mslr_linear_instance` — that paper's recipe on an MSLR-WEB10K file (title or body features);
* :func:`default_linear_instance` — its offline stand-in from scikit-learn's bundled digits data.

**Common random numbers.** Within each cluster the rewards are stored sorted, and a pull with tape
value ``u`` returns row ``floor(u · n_a)`` of cluster ``a``: this is the inverse CDF of the cluster's
empirical reward distribution at ``u``, the same coupling as the synthetic instances of
:mod:`learners.environments`.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse

from accounting import validate as v
from learners.data_files import DataLines, data_lines
from learners.environments import MABInstance
from learners.errors import ParameterError, ParameterTypeError
from learners.linear_instances import QueryInstance

__all__ = [
    "FEATURE_SETS",
    "MAX_LETOR_FEATURES",
    "REWARDS",
    "ClusteredArms",
    "cluster_instance",
    "default_linear_instance",
    "default_real_instance",
    "letor_rows",
    "load_letor",
    "load_letor_queries",
    "mslr_instance",
    "mslr_linear_instance",
    "query_instance",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
#: A feature matrix ``(N, F)``: a dense float array or a SciPy sparse matrix/array.
Features = Any

#: Above this many rows :func:`cluster_instance` uses ``MiniBatchKMeans`` instead of ``KMeans``.
MINIBATCH_ROWS = 200_000
#: Below this many rows K-means runs single-threaded: on small data, BLAS/OpenMP thread start-up and
#: contention cost far more than the clustering itself (measured: ~3 ms vs. 0.1-0.9 s on 600 rows).
SINGLE_THREAD_ROWS = 20_000

#: The largest feature index :func:`load_letor` accepts (MSLR-WEB10K has 136, MSLR-WEB30K 136,
#: Yahoo! LTR 700): K-means keeps ``clusters × features`` dense centres and the scaler ``features``
#: means, so one line naming feature 10^9 would otherwise allocate gigabytes.
MAX_LETOR_FEATURES = 2**14

_LETOR_FORMAT = "an existing MSLR-WEB10K-format file (svmlight lines 'label qid:... f:v ...')"
_MSLR_MAX_LABEL = 4


#: A line of an svmlight file, comments removed and blanks collapsed: a label, an optional query
#: id, then ``index:value`` pairs (what :func:`_sniff` asks of the first line before parsing on).
_SVMLIGHT_LINE = re.compile(rb"[^\s:]+( qid:[^\s:]+)?( [0-9]+:[^\s:]+)*")


def _sniff(lines: DataLines) -> None:
    """Check the first data line of an svmlight file (the lines read are given back to ``lines``)."""
    seen: list[bytes] = []
    for line in lines:
        seen.append(line)
        fields = line.split(b"#", 1)[0].split()
        if not fields:
            continue
        if not _SVMLIGHT_LINE.fullmatch(b" ".join(fields)):
            raise lines.refuse(f"line {lines.number} is not one: {line[:80]!r}")
        break
    lines.push_back(seen)


def _svmlight(path: str | os.PathLike[str], fmt: str, width: int | None, *, query_id: bool) -> Any:
    """:func:`sklearn.datasets.load_svmlight_file` of the data file ``path`` read as
    :func:`learners.data_files.data_lines` (a regular file, line by line, bounded), its first line
    sniffed first; a failure is a :class:`ParameterError` naming ``path``."""
    from sklearn.datasets import load_svmlight_file

    with data_lines(path, fmt) as lines:
        _sniff(lines)
        try:
            return load_svmlight_file(
                lines, n_features=width, dtype=np.float64, zero_based=False, query_id=query_id
            )
        except ParameterError:
            raise
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParameterError("path", os.fspath(path), f"{fmt}; parsing failed: {exc}") from exc


def letor_rows(path: str | os.PathLike[str]) -> int:
    """The number of rows (data lines) of an MSLR-WEB10K-format file, its first line sniffed and
    every line checked as :func:`load_letor` reads it, without parsing the features: a config's
    load-time check (``clusters`` at most the rows) that costs a pass over the file.

    Raises
    ------
    ParameterError
        Naming ``path``, as :func:`load_letor`.
    """
    with data_lines(path, _LETOR_FORMAT) as lines:
        rows = 0
        _sniff(lines)
        for line in lines:
            if line.split(b"#", 1)[0].strip():
                rows += 1
        return rows


def load_letor(path: str | os.PathLike[str]) -> tuple[Features, IntArray]:
    """Read a learning-to-rank file in the MSLR-WEB10K (svmlight) format.

    Each line is ``label qid:<id> 1:v 2:v ... F:v``; feature indices are 1-based, as in
    MSLR-WEB10K. Parsing is :func:`sklearn.datasets.load_svmlight_file` (``.gz`` and ``.bz2`` files
    are decompressed transparently). Query ids are read and dropped (the paper does not use them).

    Parameters
    ----------
    path : str or os.PathLike
        The file, e.g. the concatenation of one fold's ``train.txt``, ``vali.txt`` and ``test.txt``.

    Returns
    -------
    features : scipy.sparse.csr_matrix of float64, shape (N, F)
        ``F`` is the largest feature index in the file (136 for MSLR-WEB10K).
    labels : numpy.ndarray of int64, shape (N,)
        The integer relevance labels.

    Raises
    ------
    ParameterError
        ``path`` is not an existing regular file, cannot be parsed (its first line is sniffed before
        the rest is read; a line with a NUL byte or longer than
        :data:`~learners.data_files.MAX_LINE_BYTES` is refused as it is read), has no rows, a
        feature index above :data:`MAX_LETOR_FEATURES`, or a non-integer label.
    """
    # query_id=False: the ids are skipped all the same (sklearn appends each one to an array, a
    # quadratic cost in the rows, when asked to keep them)
    x, y = _svmlight(path, _LETOR_FORMAT, None, query_id=False)
    if x.shape[1] > MAX_LETOR_FEATURES:  # the features are standardized and clustered densely
        raise ParameterError(
            "path",
            os.fspath(path),
            f"{_LETOR_FORMAT} with feature indices at most {MAX_LETOR_FEATURES}; it has {x.shape[1]}",
        )
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:
        raise ParameterError("path", path, f"{_LETOR_FORMAT} with at least one row; the file has none")
    integral = np.isfinite(y) & (y == np.round(y))
    if not integral.all():
        row = int(np.argmin(integral))
        raise ParameterError("path", path, f"integer relevance labels; row {row} has label {float(y[row])!r}")
    return sparse.csr_matrix(x, dtype=np.float64), y.astype(np.int64)


def _numeric(name: str, values: object) -> NDArray[Any]:
    a = np.asarray(values)
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.number):
        raise ParameterTypeError(name, values, "a numeric array")
    return a


@dataclass(frozen=True, eq=False)
class ClusteredArms(MABInstance):
    """Arms that pay the reward of a uniformly random row of their cluster.

    Cluster ``a`` holds the rewards ``rewards_sorted[offsets[a]:offsets[a + 1]]``. A pull of arm
    ``a`` with tape value ``u ∈ [0, 1)`` returns the reward of row ``floor(u · n_a)`` of the
    cluster (``n_a`` its size), so under uniform tapes it is a uniformly random row. The rewards of
    each cluster are sorted on construction (the law of a pull is unchanged), which makes the
    map ``u ↦ reward`` the cluster's empirical inverse CDF: a monotone common-random-numbers coupling.

    Parameters
    ----------
    rewards_sorted : array_like of float, shape (N,)
        The rewards of all rows, grouped by cluster, each in ``[0, 1]``. Copied, sorted within each
        cluster and made read-only.
    offsets : array_like of int, shape (K + 1,)
        Cluster boundaries: ``offsets[0] == 0``, strictly increasing (every cluster non-empty),
        ``offsets[K] == N``; ``K >= 2``.
    source : str, optional
        Where the instance came from (for logs and figure captions).
    """

    rewards_sorted: FloatArray
    offsets: IntArray
    source: str = ""
    _sizes: IntArray = field(init=False, repr=False)
    _means: FloatArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        r = _numeric("rewards_sorted", self.rewards_sorted).astype(np.float64)
        if r.ndim != 1:
            raise ParameterError("rewards_sorted", self.rewards_sorted, "a 1-d array of rewards")
        inside = np.isfinite(r) & (r >= 0) & (r <= 1)
        if not inside.all():
            raise ParameterError("rewards_sorted", float(r[~inside][0]), "rewards in [0, 1]")
        o = _numeric("offsets", self.offsets)
        if not np.issubdtype(o.dtype, np.integer):
            raise ParameterTypeError("offsets", self.offsets, "an integer array of cluster boundaries")
        o = o.astype(np.int64)
        if o.ndim != 1 or o.size < 3:
            raise ParameterError("offsets", self.offsets, "a 1-d array of K + 1 >= 3 cluster boundaries")
        if o[0] != 0 or o[-1] != r.size:
            raise ParameterError("offsets", self.offsets, f"boundaries from 0 to N={r.size}")
        sizes = np.diff(o)
        if (sizes <= 0).any():
            empty = int(np.argmax(sizes <= 0))
            raise ParameterError("offsets", self.offsets, f"non-empty clusters; cluster {empty} is empty")
        cluster = np.repeat(np.arange(sizes.size), sizes)
        r = r[np.lexsort((r, cluster))]
        # math.fsum: each cluster sum is correctly rounded, so the mean has a single rounding.
        means = np.array(
            [math.fsum(r[lo:hi].tolist()) / (hi - lo) for lo, hi in itertools.pairwise(o.tolist())],
            dtype=np.float64,
        )
        for a in (r, o, sizes, means):
            a.setflags(write=False)
        object.__setattr__(self, "rewards_sorted", r)
        object.__setattr__(self, "offsets", o)
        object.__setattr__(self, "_sizes", sizes)
        object.__setattr__(self, "_means", means)

    def __repr__(self) -> str:
        src = f", source={self.source!r}" if self.source else ""
        return f"ClusteredArms(K={self.arms}, N={self.rewards_sorted.size}{src})"

    @property
    def means(self) -> FloatArray:
        """The empirical mean reward of each cluster, shape ``(K,)`` (read-only)."""
        return self._means

    @property
    def sizes(self) -> IntArray:
        """The number of rows of each cluster, shape ``(K,)`` (read-only)."""
        return self._sizes

    def reward(self, arm: ArrayLike, tape: FloatArray) -> FloatArray:
        a = np.asarray(arm)
        n = self._sizes[a]
        row = np.minimum((np.asarray(tape) * n).astype(np.int64), n - 1)
        out: FloatArray = self.rewards_sorted[self.offsets[a] + row]
        return out


def _int_param(name: str, value: object, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ParameterTypeError(name, value, "an integer")
    v = int(value)
    if v < low or (high is not None and v > high):
        bound = f"an integer >= {low}" if high is None else f"an integer in {low}..{high}"
        raise ParameterError(name, value, bound)
    return v


def cluster_instance(
    features: Features,
    rewards: ArrayLike,
    clusters: int = 50,
    seed: int = 0,
    standardize: bool = True,
    *,
    source: str = "",
) -> ClusteredArms:
    """Cluster rows by K-means on their features; each cluster is an arm paying its rows' rewards.

    Parameters
    ----------
    features : array_like or scipy.sparse matrix, shape (N, F)
        The row features (finite).
    rewards : array_like of float, shape (N,)
        The reward of each row, in ``[0, 1]``.
    clusters : int, optional
        ``K``, with ``2 <= K <= N``.
    seed : int, optional
        The K-means ``random_state`` (``>= 0``): the same seed gives the same instance.
    standardize : bool, optional
        Scale every feature to unit variance first (:class:`sklearn.preprocessing.StandardScaler`;
        dense features are also centred, sparse ones are not, which K-means does not notice).
        Constant features are left as they are.
    source : str, optional
        Recorded on the instance.

    Returns
    -------
    ClusteredArms
        ``K`` arms; arm ``a`` is K-means cluster ``a``.

    Notes
    -----
    Up to :data:`MINIBATCH_ROWS` rows use :class:`sklearn.cluster.KMeans` (Lloyd, k-means++ init,
    ``n_init=3``); larger data sets (MSLR-WEB10K has 1.2M rows) use
    :class:`sklearn.cluster.MiniBatchKMeans` (``n_init=3``, batches of 4096) for speed. Both are
    deterministic given ``seed`` (up to the BLAS in use). Below :data:`SINGLE_THREAD_ROWS` rows the
    fit runs single-threaded (``threadpoolctl``), which is much faster on small data.

    Raises
    ------
    ParameterError
        Bad shapes, non-finite features, rewards outside ``[0, 1]``, ``clusters`` outside
        ``2..N``, or K-means left a cluster empty (fewer distinct rows than ``clusters``).
    """
    if sparse.issparse(features):
        x: Any = sparse.csr_matrix(features, dtype=np.float64)
        finite = bool(np.isfinite(x.data).all())
    else:
        x = _numeric("features", features).astype(np.float64)
        finite = bool(np.isfinite(x).all())
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise ParameterError("features", getattr(x, "shape", None), "a 2-d (N, F) feature matrix")
    if not finite:
        raise ParameterError("features", "non-finite entries", "finite features")
    n = int(x.shape[0])
    r = _numeric("rewards", rewards).astype(np.float64)
    if r.shape != (n,):
        raise ParameterError("rewards", r.shape, f"a 1-d array of one reward per row, shape ({n},)")
    inside = np.isfinite(r) & (r >= 0) & (r <= 1)
    if not inside.all():
        raise ParameterError("rewards", float(r[~inside][0]), "rewards in [0, 1]")
    k = _int_param("clusters", clusters, 2, n)
    s = _int_param("seed", seed, 0, 2**32 - 1)
    if not isinstance(standardize, bool):
        raise ParameterTypeError("standardize", standardize, "a bool")

    from sklearn.cluster import KMeans, MiniBatchKMeans
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    if standardize:
        x = StandardScaler(with_mean=not sparse.issparse(x)).fit_transform(x)
    if n > MINIBATCH_ROWS:
        model: Any = MiniBatchKMeans(n_clusters=k, n_init=3, batch_size=4096, random_state=s)
    else:
        model = KMeans(n_clusters=k, n_init=3, random_state=s)
    limits = threadpool_limits(1) if n < SINGLE_THREAD_ROWS else contextlib.nullcontext()
    with limits:
        labels = np.asarray(model.fit_predict(x), dtype=np.int64)
    sizes = np.bincount(labels, minlength=k)
    if (sizes == 0).any():
        found = int((sizes > 0).sum())
        raise ParameterError(
            "clusters", clusters, f"at most the number of clusters K-means can fill; it filled only {found}"
        )
    order = np.argsort(labels, kind="stable")
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    return ClusteredArms(r[order], offsets, source)


def mslr_instance(path: str | os.PathLike[str], clusters: int = 50, seed: int = 0) -> ClusteredArms:
    """The real-data instance of Chowdhury & Zhou (2023), §7 (Figure 1(d)-(f)), from an MSLR-WEB10K file.

    Reads ``path`` with :func:`load_letor`, clusters the rows with :func:`cluster_instance`, and makes
    each cluster an arm whose pull returns ``label / 4`` of a uniformly random row of the cluster.

    The paper leaves these choices unspecified; the ones made here are:

    * **features** — all feature columns (136 in MSLR-WEB10K), standardized to unit variance
      (MSLR features span many orders of magnitude; unscaled, a few count features would decide
      the clusters); the query id is not used;
    * **K-means** — ``K = clusters`` (50 in the paper), ``random_state = seed``, ``n_init=3``,
      k-means++ init, and ``MiniBatchKMeans`` above :data:`MINIBATCH_ROWS` rows (see
      :func:`cluster_instance`); across the paper's 20 runs it does not say whether the
      clustering is redrawn — pass a fixed ``seed`` to keep one instance and vary only the reward RNG;
    * **reward** — ``label / 4 ∈ {0, 0.25, 0.5, 0.75, 1}`` of a uniformly drawn row of the cluster
      (the paper gives no scale; its y-axis range fits rewards in ``[0, 1]``), so arm ``a``'s mean
      is the cluster's mean label over 4. The alternative, ``clip(N(mean_a / 4, 0.1²), 0, 1)``, is
      the synthetic recipe of :class:`~learners.environments.ClippedGaussianArms` with
      ``locations = instance.means``.

    MSLR-WEB10K (Qin & Liu 2013) is not bundled and cannot be downloaded in this environment; point
    ``path`` at a local copy (for the paper's 1,200,192 rows, concatenate one fold's ``train.txt``,
    ``vali.txt`` and ``test.txt``). :func:`default_real_instance` is the offline stand-in.

    Parameters
    ----------
    path : str or os.PathLike
        An MSLR-WEB10K-format file (svmlight lines ``label qid:<id> 1:v ... 136:v``).
    clusters : int, optional
        ``K``, ``2 <= K <= N``.
    seed : int, optional
        The K-means seed.

    Returns
    -------
    ClusteredArms

    Raises
    ------
    ParameterError
        A missing or unparsable file, labels outside ``0..4`` (named ``path``), or a bad ``clusters``.
    """
    features, labels = load_letor(path)
    bad = (labels < 0) | (labels > _MSLR_MAX_LABEL)
    if bad.any():
        row = int(np.argmax(bad))
        raise ParameterError(
            "path",
            path,
            f"MSLR-WEB10K relevance labels in 0..{_MSLR_MAX_LABEL}; row {row} has label {int(labels[row])}",
        )
    rewards = labels.astype(np.float64) / _MSLR_MAX_LABEL
    return cluster_instance(features, rewards, clusters, seed, source=f"MSLR-WEB10K format: {path}")


def default_real_instance(clusters: int = 50, seed: int = 0) -> ClusteredArms:
    """The offline default real-data instance: a stand-in for MSLR-WEB10K built the same way.

    MSLR-WEB10K cannot be downloaded here, so this applies the recipe of :func:`mslr_instance` to a
    data set that ships inside scikit-learn, :func:`sklearn.datasets.load_diabetes` (442 patients,
    10 features, a continuous disease-progression target): standardized features, K-means with
    ``random_state = seed``, one arm per cluster, and a pull returns the min-max rescaled target
    ``(y - min y) / (max y - min y) ∈ [0, 1]`` of a uniformly random row of the cluster.

    It has real-data structure (uneven cluster sizes, correlated features, a skewed reward law) but
    is far smaller than MSLR-WEB10K: with 50 clusters a cluster holds about 9 rows on average, so
    its regret curves are not comparable in scale with the paper's Fig. 1(d–f).

    Parameters
    ----------
    clusters : int, optional
        ``K``, ``2 <= K <= 442``.
    seed : int, optional
        The K-means seed.

    Returns
    -------
    ClusteredArms
    """
    from sklearn.datasets import load_diabetes

    data = load_diabetes()
    x = np.asarray(data.data, dtype=np.float64)
    y = np.asarray(data.target, dtype=np.float64)
    rewards = (y - y.min()) / (y.max() - y.min())
    return cluster_instance(x, rewards, clusters, seed, source="sklearn diabetes (stand-in for MSLR-WEB10K)")


# ---------------------------------------------------------------------------------------
# The federated linear family's real-data instance (Zhou & Chowdhury 2024, §6 and App. H)
# ---------------------------------------------------------------------------------------


def _code_feature_sets() -> dict[str, tuple[int, ...]]:
    # the authors' get_feature_sets("MSLR") [C]: columns of their feature matrix, in which column 0
    # is an intercept of 0.01 and column j >= 1 is MSLR feature j (their Datasets.loadTxt)
    title, body = [0], [0]
    for i in range(25):
        title.extend([5 * i + 2, 5 * i + 4])
        body.extend([5 * i + 1, 5 * i + 3, 5 * i + 5])
    title.extend([126, 127, 128, 129, 130, 131])
    body.extend([132, 133])
    return {"title": tuple(title), "body": tuple(body)}


#: The feature sets of Zhou & Chowdhury (2024), §6 (as the authors' code selects them) as columns
#: of the authors' feature matrix: column 0 is
#: their constant intercept 0.01, column ``j >= 1`` is MSLR-WEB10K feature ``j`` (1-based, as in
#: the file). ``"title"`` (the code's ``anchorURL``) has ``d = 57``, ``"body"`` (``bodyDoc``) 78.
FEATURE_SETS: dict[str, tuple[int, ...]] = _code_feature_sets()

#: What a played document pays: ``"model"`` the Lasso model's ``⟨raw features, θ*⟩`` (the paper
#: and its code), ``"label"`` the judged relevance label itself.
REWARDS = ("model", "label")

#: The intercept value the authors' data loader puts in column 0 of every row [C].
INTERCEPT = 0.01

#: MSLR-WEB10K's number of features per row.
MSLR_FEATURES = 136

_QUERY_FORMAT = "an MSLR-WEB10K-format file (svmlight lines 'label qid:<id> f:v ...')"


def load_letor_queries(
    path: str | os.PathLike[str], n_features: int | None = None
) -> tuple[Features, IntArray, IntArray]:
    """Read a learning-to-rank file in the MSLR-WEB10K format, keeping the query ids.

    As :func:`load_letor`, and every line must carry ``qid:<id>``.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    n_features : int or None
        The number of feature columns (MSLR-WEB10K: 136); a file with a larger index is refused.
        ``None``: the largest index in the file.

    Returns
    -------
    features : scipy.sparse.csr_matrix of float64, shape (N, F)
        Column ``j - 1`` is feature ``j`` of the file (1-based indices).
    labels : numpy.ndarray of int64, shape (N,)
    qids : numpy.ndarray of int64, shape (N,)

    Raises
    ------
    ParameterError
        ``path`` is not an existing file, cannot be parsed, has no rows, no query ids, a
        non-integer label or a feature index above ``n_features``.
    """
    width = None if n_features is None else _int_param("n_features", n_features, 1)
    x, y, qid = _svmlight(path, _QUERY_FORMAT, width, query_id=True)
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:
        raise ParameterError("path", path, f"{_QUERY_FORMAT} with at least one row; the file has none")
    qid = np.asarray(qid)
    if qid.shape != y.shape:
        raise ParameterError("path", path, f"{_QUERY_FORMAT}: every line needs its query id 'qid:<id>'")
    integral = np.isfinite(y) & (y == np.round(y))
    if not integral.all():
        row = int(np.argmin(integral))
        raise ParameterError("path", path, f"integer relevance labels; row {row} has label {float(y[row])!r}")
    return sparse.csr_matrix(x, dtype=np.float64), y.astype(np.int64), qid.astype(np.int64)


def _columns(features: object, width: int) -> tuple[str, tuple[int, ...]]:
    if isinstance(features, str):
        if features not in FEATURE_SETS:
            raise ParameterError("features", features, "one of " + ", ".join(FEATURE_SETS) + ", or columns")
        return features, FEATURE_SETS[features]
    if isinstance(features, Sequence) and features:
        cols = tuple(_int_param(f"features[{i}]", c, 0, width) for i, c in enumerate(features))
        if len(set(cols)) != len(cols):
            raise ParameterError("features", features, "distinct columns")
        return f"{len(cols)} columns", cols
    raise ParameterError(
        "features", features, "'title', 'body', or a non-empty sequence of columns (0 = intercept)"
    )


def query_instance(
    features: Features,
    labels: ArrayLike,
    qids: ArrayLike,
    columns: Sequence[int],
    agents: int = 10,
    reward: str = "model",
    seed: int = 0,
    *,
    source: str = "",
) -> QueryInstance:
    """A federated linear bandit instance from learning-to-rank rows (Zhou & Chowdhury 2024, §6, App. H).

    1. **Queries.** Consecutive rows with the same query id form a query (a new query starts
       wherever the id changes, as the authors' loader reads the file); its rows are its documents.
    2. **Features.** Column 0 is the constant intercept :data:`INTERCEPT` and column ``j >= 1`` is
       ``features[:, j - 1]`` (the authors' matrix); ``columns`` selects ``d`` of them
       (:data:`FEATURE_SETS`).
    3. **θ*.** Lasso regression of the labels on the selected raw features over *all* rows,
       ``sklearn.linear_model.Lasso(alpha=1.0, fit_intercept=False, precompute=False,
       max_iter=10000, tol=1e-4, selection='random')`` as the authors' ``semi_synth_env`` [C], with
       ``random_state=seed`` (theirs is unseeded) so the instance is reproducible.
    4. **Federation.** The ``Q`` queries are split into ``agents`` contiguous blocks of
       ``q = ⌊Q/M⌋`` queries, silo ``i`` owning queries ``[iq, (i + 1)q)``; the last ``Q mod M``
       queries are not used (the code's ``queryPerAgent = int(Q/M)``).
    5. **Rewards.** ``"model"``: a document pays ``⟨raw features, θ*⟩`` (the code's ``rt = μ``), with
       no noise; ``"label"``: it pays its relevance label. Regret is against the best document of
       the query (the largest reward). The learner sees the **row-normalized** features
       ``x/‖x‖``, so either reward is non-linear in what it sees (our observation; the paper does not say so).

    Parameters
    ----------
    features : array_like or scipy.sparse matrix, shape (N, F)
        The rows' raw features (finite).
    labels : array_like of int, shape (N,)
        Relevance labels.
    qids : array_like of int, shape (N,)
        Query ids.
    columns : sequence of int
        Columns of ``[intercept, features]`` (0 to ``F``), distinct.
    agents : int
        ``M >= 1``, at most the number of queries.
    reward : {"model", "label"}
    seed : int
        The Lasso's ``random_state`` and the key of the query stream.
    source : str
        Recorded on the instance.

    Raises
    ------
    ParameterError
        Bad shapes or values, fewer queries than ``agents`` (named ``agents``), or a used row whose
        selected features are all zero (it cannot be normalized).
    """
    x, y, q = _ranking_rows(features, labels, qids)
    n, width = int(x.shape[0]), int(x.shape[1])
    _, cols = _columns(columns, width)
    m = _int_param("agents", agents, 1)
    if reward not in REWARDS:
        raise ParameterError("reward", reward, "one of " + ", ".join(REWARDS))
    s = v.seed("seed", seed)
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    offsets = np.r_[starts, n].astype(np.int64)
    n_queries = int(starts.size)
    if n_queries < m:
        raise ParameterError(
            "agents", agents, f"at most the number of queries Q = {n_queries} (one block of queries per silo)"
        )
    per = n_queries // m
    used = int(offsets[m * per])

    # the authors' feature matrix restricted to the chosen columns: intercept 0.01, then the file's
    intercept = sparse.csr_matrix(np.full((n, 1), INTERCEPT))
    full = sparse.hstack([intercept, sparse.csr_matrix(x)], format="csc")
    chosen = full[:, list(cols)]

    theta = _lasso_theta(chosen, y, s)

    raw = np.asarray(chosen[:used].toarray(), dtype=np.float64)
    rewards = raw @ theta if reward == "model" else y[:used].astype(np.float64)
    norms = np.sqrt(np.einsum("nd,nd->n", raw, raw))
    if not (norms > 0).all():
        row = int(np.argmin(norms > 0))
        raise ParameterError("columns", columns, f"features that are not all zero on any row; row {row} is")
    raw /= norms[:, None]
    key_words = np.random.default_rng(s).integers(0, 2**64, size=2, dtype=np.uint64, endpoint=False)
    return QueryInstance(
        raw, rewards, offsets[: m * per + 1], m, theta, (int(key_words[0]), int(key_words[1])),
        1.0, source,
    )  # fmt: skip


def _ranking_rows(
    features: Features, labels: ArrayLike, qids: ArrayLike
) -> tuple[Any, NDArray[Any], NDArray[Any]]:
    """The rows of :func:`query_instance` checked: the features (float64, CSR when sparse), one
    finite label and one query id per row."""
    if sparse.issparse(features):
        x: Any = sparse.csr_matrix(features, dtype=np.float64)
        finite = bool(np.isfinite(x.data).all())
    else:
        x = _numeric("features", features).astype(np.float64)
        finite = bool(np.isfinite(x).all())
    if x.ndim != 2 or x.shape[0] < 1:
        raise ParameterError("features", getattr(x, "shape", None), "a 2-d (N, F) feature matrix")
    if not finite:
        raise ParameterError("features", "non-finite entries", "finite features")
    n = int(x.shape[0])
    y = _numeric("labels", labels)
    if y.shape != (n,) or not np.isfinite(y).all():
        raise ParameterError("labels", y.shape, f"{n} finite labels, one per row")
    q = _numeric("qids", qids)
    if q.shape != (n,):
        raise ParameterError("qids", q.shape, f"{n} query ids, one per row")
    return x, y, q


def _lasso_theta(chosen: Any, labels: NDArray[Any], seed: int) -> FloatArray:
    """θ* of :func:`query_instance` (its step 3): the authors' Lasso of the labels on the chosen
    features, seeded."""
    from sklearn.linear_model import Lasso

    lasso = Lasso(
        alpha=1.0, fit_intercept=False, precompute=False, max_iter=10000, tol=1e-4,
        selection="random", random_state=seed,
    )  # fmt: skip
    lasso.fit(chosen, labels.astype(np.float64))
    return np.asarray(lasso.coef_, dtype=np.float64)


def mslr_linear_instance(
    path: str | os.PathLike[str],
    features: str | Sequence[int] = "title",
    agents: int = 10,
    reward: str = "model",
    seed: int = 0,
) -> QueryInstance:
    """The real-data instance of Zhou & Chowdhury (2024), §6, from an MSLR file (:func:`query_instance`).

    The paper's main instance is ``features="title"`` (``d = 57``) with ``agents = 10`` (Figure 2(c));
    Figure 3(c) uses ``"body"`` (``d = 78``). MSLR-WEB10K has 10,000 queries with 1 to 908
    documents each; its ``Fold*/{train,vali,test}.txt`` are concatenated by the authors' loader
    into one file (the order of the queries decides which silo owns them).

    Parameters
    ----------
    path : str or os.PathLike
        An MSLR-WEB10K-format file (``label qid:<id> 1:v ... 136:v``; feature indices at most 136).
    features : "title", "body" or sequence of int
        A paper feature set, or columns of the authors' matrix (0 the intercept, ``j`` feature ``j``).
    agents : int
        ``M`` silos (the paper: 10).
    reward : {"model", "label"}
        ``"model"`` (the paper's: the Lasso model's prediction on the raw features, noise-free) or
        the relevance label.
    seed : int
        The Lasso's ``random_state`` and the query stream's key.

    Returns
    -------
    QueryInstance

    Raises
    ------
    ParameterError
        A missing or unparsable file, lines without ``qid``, feature indices above 136 (all named
        ``path``), a bad feature set, fewer queries than ``agents``.
    """
    x, labels, qids = load_letor_queries(path, MSLR_FEATURES)
    name, cols = _columns(features, MSLR_FEATURES)
    return query_instance(
        x, labels, qids, cols, agents, reward, seed, source=f"MSLR-WEB10K format ({name} features): {path}"
    )


def default_linear_instance(
    agents: int = 10, docs: int = 20, reward: str = "model", seed: int = 0
) -> QueryInstance:
    """The offline stand-in for :func:`mslr_linear_instance`, built the same way from bundled data.

    MSLR-WEB10K cannot be downloaded here, so :func:`query_instance` is applied to
    :func:`sklearn.datasets.load_digits` (1,797 images of 8×8 pixels with intensities 0..16, shipped
    with scikit-learn): a "query" is a run of ``docs`` consecutive images (the last one shorter,
    so arm counts vary as in MSLR), its "documents" are the images, the label is the digit
    ``0..9`` in the role of the relevance, and the features are the intercept and all 64 pixels
    (``d = 65``, close to the paper's 57 and 78). Lasso, federation, normalization and rewards are
    exactly :func:`query_instance`'s.

    With the defaults there are 90 queries (9 per silo for ``M = 10``) of up to 20 arms: far
    fewer queries and arms than MSLR-WEB10K's 10,000 and 908, so regret curves are not comparable
    in scale with the paper's Figure 2(c).
    """
    from sklearn.datasets import load_digits

    data = load_digits()
    x = np.asarray(data.data, dtype=np.float64)
    labels = np.asarray(data.target, dtype=np.int64)
    size = _int_param("docs", docs, 1, x.shape[0])
    qids = np.arange(x.shape[0], dtype=np.int64) // size
    cols = tuple(range(x.shape[1] + 1))
    return query_instance(
        x, labels, qids, cols, agents, reward, seed,
        source=f"sklearn digits, {size} images per query (stand-in for MSLR-WEB10K)",
    )  # fmt: skip

"""Privacy protocols: the randomizer / secure aggregator / shuffler / analyzer template (R, S, A).

The template ``(R, S, A)`` of the distributed MAB paper (Chowdhury & Zhou 2023, §3), shared by every
learner, for one batch of ``n`` users and ``R`` independent repetitions at once (leading axis
``R``; an optional last axis of ``d`` coordinates for vector or flattened matrix statistics):

* **R**, the randomizer (:mod:`~learners.protocols.randomizer`: :func:`encode`,
  :func:`randomize`): fixed-point encoding at precision ``g`` with unbiased randomized rounding
  (the paper's ``R``), a noise share, reduction mod ``m``;
* **S**, secure aggregation (:mod:`~learners.protocols.aggregation`: :func:`modular_sum`, the
  ideal black box; :func:`masked_sum`, a simulation of additive-mask aggregation of Bonawitz et al.
  2017 with dropouts), or the shuffler (:mod:`~learners.protocols.shuffler`: :func:`shuffle`, and
  the shuffle summation protocols :func:`shuffle_sum`);
* **A**, the analyzer (:mod:`~learners.protocols.analyzer`: :func:`decode`, :func:`analyze`): the
  underflow correction at ``τ``.

:class:`Protocol` (:mod:`~learners.protocols.template`) runs the whole template for one
:class:`~accounting.papers.distributed_dp_mab.ProtocolParameters` and places the noise as the
trust model of its :class:`~accounting.papers.distributed_dp_mab.Variant` says
(:class:`TrustModel`: Pólya, Skellam and discrete
Gaussian shares distributed — Theorems 1, 2, 4 —, shuffled Pólya shares in the shuffle model —
Theorem 3 —, central and local discrete Laplace — Theorems 5, 6, App. H). Every parameter comes
from :func:`accounting.papers.distributed_dp_mab.protocol_parameters`; nothing here computes a
noise level. Each release reports its mechanisms to an optional :class:`~accounting.accountant.Accountant`.

Arithmetic (exact, against floating-point attacks such as Mironov 2012's;
:mod:`~learners.protocols.arithmetic`). Everything on the privacy path is integer: ``int64`` with
a reduction mod ``m`` after every step while ``m < 2**62`` (so the sum of two residues fits), and
Python integers (``dtype=object``) when ``m >= 2**62``. Sums over users are taken in chunks small
enough never to overflow (:func:`modular_sum`); nothing is ever accumulated in floating point.
Only the final division ``z = S/g`` is a float (post-processing). Noise comes from the exact
integer samplers (``sample_exact``) unless ``exact=False``.
"""

from learners.protocols.aggregation import PAIRWISE_MAX_USERS, SECURE_AGGREGATIONS, masked_sum, modular_sum
from learners.protocols.analyzer import analyze, decode
from learners.protocols.arithmetic import BIG_MODULUS, FloatArray, IntArray
from learners.protocols.randomizer import ShareSampler, draw_shares, encode, randomize
from learners.protocols.shuffler import SHUFFLE_MESSAGE_LIMIT, shuffle, shuffle_sum
from learners.protocols.template import (
    DROPOUT_POLICIES,
    Protocol,
    Release,
    TrustModel,
    release_mechanisms,
    trust_model,
)

__all__ = [
    "BIG_MODULUS",
    "DROPOUT_POLICIES",
    "PAIRWISE_MAX_USERS",
    "SECURE_AGGREGATIONS",
    "SHUFFLE_MESSAGE_LIMIT",
    "FloatArray",
    "IntArray",
    "Protocol",
    "Release",
    "ShareSampler",
    "TrustModel",
    "analyze",
    "decode",
    "draw_shares",
    "encode",
    "masked_sum",
    "modular_sum",
    "randomize",
    "release_mechanisms",
    "shuffle",
    "shuffle_sum",
    "trust_model",
]

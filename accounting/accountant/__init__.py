"""The :class:`Accountant`: the one door every guarantee goes through.

An *event* describes what happened — a mechanism (:class:`~accounting.mechanisms.AdditiveNoise`,
:class:`~accounting.mechanisms.DistributedSum`, a vector sum bounded in ℓ2,
:class:`~accounting.mechanisms.DistributedVectorSum`, whose guarantee is an RDP curve), a cited guarantee
(:class:`~accounting.mechanisms.PureDP`, :class:`~accounting.mechanisms.ApproxDP`), an
:class:`Event` (a mechanism self-composed ``count`` times) or a :class:`Composed` group of
events — and the accountant decides how to account it, following the split of Google's
``dp_accounting`` (``DpEvent`` / ``PrivacyAccountant``). What it cannot account under its
neighbouring relation it refuses up front (:meth:`Accountant.supports`,
:class:`~accounting.errors.UnsupportedEventError`).

**Neighbouring relation.** Every event is accounted under the ledger's relation
(:class:`~accounting.neighbouring.Neighbouring`; replace-one by default, where
``dp_accounting`` defaults to add-or-remove): each mechanism is asked through
:meth:`~accounting.mechanisms.Mechanism.under`, which gives its worst pairs under that relation
(a distributed sum under add-remove loses the removed user's noise share too), and a cited
guarantee is accepted only under the relation of its theorem.

**Routes.** Every answer is a certified :class:`~accounting.certified.Enclosure` that names its
route:

``"pld"``
    exact privacy-loss distributions: one event once is answered exactly
    (:mod:`accounting.divergence`, or the cited guarantee's worst-case pair); compositions of
    Gaussian mechanisms exactly (they are again a Gaussian mechanism); compositions of symmetric
    log-concave lattice mechanisms by certified PLD convolution (:mod:`accounting.pld`).
``"rdp"``
    exact Rényi curves summed over the events, converted by Lemma 10 (Canonne–Kamath–Steinke
    2020 / Balle et al. 2020) optimised over real orders.
``"zcdp"``
    ρ of each event summed, converted by the CKS optimal conversion.
``"pure"``
    pure ε summed (only when every event has one).
``"published"`` or ``"published:<name>"``
    the closed form of a paper (:data:`PUBLISHED`), each event by the named bound (or by the
    first that applies to it), cited guarantees by their cited values: the guarantee a theorem
    states, which the exact routes never exceed.
``"auto"``
    the smallest certified upper bound among the exact routes it tries, chosen by expected cost
    (:meth:`Accountant._answer`): the PLD route first when it is within budget (its precision
    raised for a tiny δ), the RDP route unless the PLD's enclosure already leaves no route more
    than :data:`AUTO_MARGIN` to win; the answer says which won and what each gave
    (``candidates``).

Cited ``(ε_i, δ_i)`` guarantees with ``δ_i > 0`` have no Rényi, zCDP or pure form: the routes other
than ``"pld"`` account them by basic composition (Dwork et al. 2006; Dwork & Roth 2014,
Thm 3.16), ``ε = ε_rest(δ - Σδ_i) + Σε_i``.

**One composition.** Every sum of the ledger — pure ε, ρ, RDP curves at an order, the ε and δ of
basic composition — is :func:`accounting.composition.sum_up`: summed exactly and rounded up once
(:meth:`Accountant.pure_epsilon`, :meth:`Accountant.rho`, :meth:`Accountant.rdp` expose them).

**Modules.** :mod:`~accounting.accountant.events` (what happened), :mod:`~accounting.accountant.core`
(the :class:`Accountant`), :mod:`~accounting.accountant.routes` (the routes' names and answers),
:mod:`~accounting.accountant.published` (the closed forms of :data:`PUBLISHED`) and
:mod:`~accounting.accountant.serialization` (the ledger as plain data).
"""

from accounting.accountant.core import AUTO_MARGIN, AUTO_PLD_BUDGET, Accountant
from accounting.accountant.events import Composed, Event, EventLike, Release, SelfComposed, flatten
from accounting.accountant.published import PUBLISHED, Notion, PublishedBound
from accounting.accountant.routes import ROUTES, SampledView, route_name
from accounting.accountant.serialization import (
    event_from_dict,
    event_to_dict,
    mechanism_from_dict,
    mechanism_to_dict,
    noise_from_dict,
    noise_to_dict,
)
from accounting.neighbouring import Neighbouring

__all__ = [
    "AUTO_MARGIN",
    "AUTO_PLD_BUDGET",
    "PUBLISHED",
    "ROUTES",
    "Accountant",
    "Composed",
    "Event",
    "EventLike",
    "Neighbouring",
    "Notion",
    "PublishedBound",
    "Release",
    "SampledView",
    "SelfComposed",
    "event_from_dict",
    "event_to_dict",
    "flatten",
    "mechanism_from_dict",
    "mechanism_to_dict",
    "noise_from_dict",
    "noise_to_dict",
    "route_name",
]

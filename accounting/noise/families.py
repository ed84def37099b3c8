"""The noise families, by name: the one list a new noise is added to.

Every consumer that names noise families derives its list from :data:`NOISE_FAMILIES`: the ledger's
JSON (``"type"`` is the class name, :func:`accounting.accountant.noise_from_dict` rebuilds through
:attr:`NoiseFamily.rebuild`), the conversion to and from Google's ``dp_accounting`` events
(:attr:`NoiseFamily.dp_event`, :mod:`accounting.interop`) and the command line's ``--noise`` names
and parameter options (:attr:`NoiseFamily.name`, :attr:`NoiseFamily.parameter`,
:attr:`NoiseFamily.option`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from accounting.errors import ParameterError
from accounting.noise.base import LatticeNoise, NoiseDistribution
from accounting.noise.binomial import Binomial, CenteredBinomial
from accounting.noise.continuous import Gaussian, Laplace
from accounting.noise.discrete_gaussian import DiscreteGaussian
from accounting.noise.discrete_laplace import DiscreteLaplace
from accounting.noise.polya import Geometric, Polya
from accounting.noise.skellam import Skellam
from accounting.noise.sum_of_discrete_gaussians import SumOfDiscreteGaussians

__all__ = ["NOISE_FAMILIES", "NoiseFamily", "family_named", "family_of", "family_of_type"]

#: A distribution from its dataclass fields, as a ledger stores them (Fractions already decoded).
Rebuild = Callable[[Mapping[str, Any]], NoiseDistribution]


@dataclass(frozen=True)
class NoiseFamily:
    """One noise family and what each consumer needs to know of it.

    Attributes
    ----------
    name : str
        Its name where families are named by the user (``dp-account --noise NAME``, calibration):
        ``"discrete-laplace"``.
    cls : type
        The class of its distributions. ``cls.__name__`` is the ``"type"`` of the noise in a ledger.
    parameter : str
        The parameter that sets how much noise it adds: ``"sigma"``, ``"scale"``, ``"variance"``,
        ``"beta"`` or ``"trials"`` (the option ``--PARAMETER`` of the command line).
    rebuild : callable
        The distribution from its dataclass fields (``{field: value}``, as a ledger holds them).
    option : bool
        Whether ``dp-account --noise NAME`` offers it (its ``--PARAMETER`` then sets it).
    dp_event : str or None
        The class of Google's ``dp_accounting`` event that describes additive noise of this family
        (``"GaussianDpEvent"``), or ``None`` when ``dp_accounting`` has none.
    stored : mapping
        ``{field: name in a ledger}`` for the fields a ledger names otherwise: the ledger format
        keeps the names it was written with when a field is renamed (``DiscreteLaplace.beta`` is
        ``"decay"``), so that old ledgers read and new ones are the same bytes.
    """

    name: str
    cls: type[NoiseDistribution]
    parameter: str
    rebuild: Rebuild
    option: bool = False
    dp_event: str | None = None
    stored: Mapping[str, str] = field(default_factory=dict)

    @property
    def lattice(self) -> bool:
        """Whether its distributions live on the integers (a sensitivity must then be an integer)."""
        return issubclass(self.cls, LatticeNoise)

    def stored_name(self, field_name: str) -> str:
        """The name of the field ``field_name`` in a ledger."""
        return self.stored.get(field_name, field_name)

    def field_name(self, stored_name: str) -> str:
        """The field a ledger's ``stored_name`` is (the inverse of :meth:`stored_name`)."""
        return next((f for f, s in self.stored.items() if s == stored_name), stored_name)

    @property
    def type_name(self) -> str:
        """The ``"type"`` of this family's noise in a ledger: the class name."""
        return self.cls.__name__


def _keywords(cls: type[NoiseDistribution]) -> Rebuild:
    """Rebuild by calling ``cls`` with the fields as keywords (the dataclass's own constructor)."""

    def rebuild(fields: Mapping[str, Any]) -> NoiseDistribution:
        return cls(**fields)

    return rebuild


def _discrete_laplace(fields: Mapping[str, Any]) -> NoiseDistribution:
    # Stored with both fields, one of them None: β when given (Pólya shares define it).
    if fields.get("beta") is not None:
        return DiscreteLaplace(beta=fields["beta"])
    return DiscreteLaplace(fields["scale"])


def _skellam(fields: Mapping[str, Any]) -> NoiseDistribution:
    return Skellam.from_rates(fields["mu1"], fields["mu2"], fields.get("offset", 0))


def _geometric(fields: Mapping[str, Any]) -> NoiseDistribution:
    return Geometric(fields["beta"])  # its field r is always 1


#: Every noise family, in the order the command line lists them (those it offers first).
NOISE_FAMILIES: tuple[NoiseFamily, ...] = (
    NoiseFamily("gaussian", Gaussian, "sigma", _keywords(Gaussian), True, "GaussianDpEvent"),
    NoiseFamily("laplace", Laplace, "scale", _keywords(Laplace), True, "LaplaceDpEvent"),
    NoiseFamily(
        "discrete-laplace",
        DiscreteLaplace,
        "scale",
        _discrete_laplace,
        True,
        "DiscreteLaplaceDpEvent",
        stored={"beta": "decay"},
    ),
    NoiseFamily("discrete-gaussian", DiscreteGaussian, "sigma", _keywords(DiscreteGaussian), True),
    NoiseFamily("skellam", Skellam, "variance", _skellam, True),
    NoiseFamily("polya", Polya, "beta", _keywords(Polya), True),
    NoiseFamily("binomial", Binomial, "trials", _keywords(Binomial), True),
    NoiseFamily("geometric", Geometric, "beta", _geometric),
    NoiseFamily(
        "sum-of-discrete-gaussians", SumOfDiscreteGaussians, "sigma", _keywords(SumOfDiscreteGaussians)
    ),
    NoiseFamily("centered-binomial", CenteredBinomial, "trials", _keywords(CenteredBinomial)),
)

_BY_NAME = {f.name: f for f in NOISE_FAMILIES}
_BY_TYPE = {f.type_name: f for f in NOISE_FAMILIES}


def family_named(name: object) -> NoiseFamily:
    """The family called ``name`` (``"skellam"``); a :class:`ParameterError` naming the valid ones."""
    if isinstance(name, str) and name in _BY_NAME:
        return _BY_NAME[name]
    raise ParameterError("noise", name, "one of " + ", ".join(_BY_NAME))


def family_of_type(type_name: object) -> NoiseFamily:
    """The family whose class is called ``type_name`` (a ledger's ``"type"``: ``"Skellam"``)."""
    if isinstance(type_name, str) and type_name in _BY_TYPE:
        return _BY_TYPE[type_name]
    raise ParameterError("type", type_name, "one of " + ", ".join(sorted(_BY_TYPE)))


def family_of(noise: object) -> NoiseFamily:
    """The family of ``noise``, by the name of its class (a :class:`~accounting.noise.Geometric` is
    ``"geometric"``, not ``"polya"``); a :class:`ParameterError` for any other object."""
    family = _BY_TYPE.get(type(noise).__name__)
    if family is None:
        raise ParameterError("noise", noise, "a distribution of accounting.noise")
    return family

"""Errors raised by :mod:`accounting`.

Every error subclasses :class:`ValueError` (or :class:`TypeError`), so ordinary
``except ValueError`` still catches it. Messages name the parameter, the value
received and the valid range.
"""

from __future__ import annotations


class AccountingError(ValueError):
    """Base class of every value error raised by :mod:`accounting`."""


class ParameterError(AccountingError):
    """A parameter is outside its valid range (or NaN, or infinite)."""

    def __init__(self, name: str, value: object, valid: str) -> None:
        self.name = name
        self.value = value
        self.valid = valid
        super().__init__(f"{name}={value!r} is invalid: expected {valid}")


class ParameterTypeError(TypeError):
    """A parameter has the wrong type (for example a float where an integer is needed)."""

    def __init__(self, name: str, value: object, valid: str) -> None:
        self.name = name
        self.value = value
        self.valid = valid
        super().__init__(f"{name}={value!r} has type {type(value).__name__}: expected {valid}")


class UnsupportedError(AccountingError):
    """The requested guarantee cannot be certified for this mechanism or noise."""


class UnsupportedEventError(UnsupportedError):
    """An event the ledger cannot account (under its neighbouring relation, or by the route asked).

    Raised up front by :meth:`~accounting.accountant.Accountant.compose` (see
    :meth:`~accounting.accountant.Accountant.supports`), as ``dp_accounting`` does.
    """


class RouteRefusedError(UnsupportedError, ParameterError):
    """The route asked explicitly cannot account an event of the ledger: an
    :class:`UnsupportedError` (what the route says) and a :class:`ParameterError` naming ``route``,
    so a command line names its option."""


class MissingDependencyError(ImportError):
    """An optional dependency is needed and not installed; the message names the extra to install
    (``pip install dpcert[interop]`` for ``dp_accounting``)."""

"""Errors raised by :mod:`verification` (``ValueError`` subclasses, like :mod:`accounting.errors`)."""

from __future__ import annotations

from accounting.errors import AccountingError, ParameterError, ParameterTypeError

__all__ = ["ParameterError", "ParameterTypeError", "VerificationError"]


class VerificationError(AccountingError):
    """A verification could not be carried out as asked (not: a check that failed)."""

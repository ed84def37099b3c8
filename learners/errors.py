"""Errors raised by :mod:`learners`.

Every error subclasses :class:`ValueError` (or :class:`TypeError`), so ordinary
``except ValueError`` still catches it. Messages name the parameter, the value received and
what is valid; a protocol error says what would have gone wrong had the run continued.
"""

from __future__ import annotations

from accounting.errors import AccountingError, ParameterError, ParameterTypeError

__all__ = [
    "ConfigError",
    "DropoutError",
    "LearnerError",
    "ParameterError",
    "ParameterTypeError",
    "PartialBatchError",
    "ProtocolError",
    "RecoveryError",
]


class LearnerError(AccountingError):
    """Base class of every value error raised by :mod:`learners`.

    Parameter errors are :mod:`accounting`'s own (:class:`ParameterError`,
    :class:`ParameterTypeError`), so one ``except`` catches bad input anywhere in dpcert.
    """


class ConfigError(ParameterError, LearnerError):
    """An experiment configuration (:mod:`learners.experiment`) is invalid.

    :attr:`name` is the path of the offending field in the configuration, such as
    ``algorithms[2].name``, ``epsilons[1]`` or ``panels[0].instance.path``.
    """


class ProtocolError(LearnerError):
    """A privacy protocol cannot release this aggregate without breaking what was accounted."""


class DropoutError(ProtocolError):
    """Users dropped out and the dropout policy is ``"refuse"``: the survivors' noise is short.

    Attributes
    ----------
    dropped : int
        The largest number of users that dropped out in one repetition.
    users : int
        The number of users ``n`` the noise was calibrated for.
    """

    def __init__(self, dropped: int, users: int) -> None:
        self.dropped = dropped
        self.users = users
        super().__init__(
            f"{dropped} of {users} users dropped out: the survivors' noise is the sum of only "
            f"{users - dropped} of the {users} shares the accounting assumed, so the aggregate would be "
            "under-noised; refusing to release it (dropout_policy='refuse'; use 'top-up' to have "
            "the survivors draw the missing shares)"
        )


class RecoveryError(ProtocolError):
    """Too few users survived for secure aggregation to recover the dropped users' masks."""

    def __init__(self, survivors: int, threshold: int, users: int) -> None:
        self.survivors = survivors
        self.threshold = threshold
        self.users = users
        super().__init__(
            f"only {survivors} of {users} users survived, below the secure-aggregation threshold "
            f"{threshold}: the dropped users' masks cannot be recovered, nothing is released"
        )


class PartialBatchError(ProtocolError):
    """A batch with fewer users than the parameters' ``n``: its noise falls short.

    Chowdhury & Zhou 2023, Fact 1: the Pólya shares sum to the discrete Laplace noise only when all
    ``n`` users add theirs; their Algorithm 1 never aggregates the last, partial batch.
    """

    def __init__(self, users: int, expected: int) -> None:
        self.users = users
        self.expected = expected
        super().__init__(
            f"a batch of {users} users is partial: the parameters were calibrated for exactly "
            f"n={expected} users, and a partial batch is never aggregated or released "
            "(Chowdhury & Zhou 2023, Algorithm 1, Fact 1)"
        )

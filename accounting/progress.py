"""Progress of long accounting: a callback type, a context that carries one, and a tqdm bar.

A long loop of the accounting — the repeated squaring of a PLD composition
(:meth:`~accounting.pld.PrivacyLossDistribution.self_compose`, :func:`~accounting.pld.compose_events`)
and the evaluations of a calibration search (:func:`~accounting.calibration.calibrate`) — reports
``progress(done, total)`` after each step to the callback it is given, or else to the one the
current context carries (:func:`reporting`); it never prints anything itself. So a caller that
cannot pass a callback down (an :class:`~accounting.accountant.Accountant` answering through its
routes) still gets the reports::

    from accounting.progress import bar
    with bar("accounting", enabled=not args.no_progress):     # what dp-account does
        answer = Accountant().compose(event, 10**6).epsilon(1e-5)

:func:`bar` shows a tqdm bar on standard error (hidden when it is not a terminal, or when
``enabled`` is false: ``--no-progress``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["Progress", "bar", "report", "reporting"]

Progress = Callable[[int, int], None]
"""``progress(done, total)``: ``done`` of ``total`` steps are finished (``total`` may grow)."""

_CURRENT: ContextVar[Progress | None] = ContextVar("accounting_progress", default=None)


@contextmanager
def reporting(callback: Progress | None) -> Iterator[None]:
    """Within the block, long loops report to ``callback`` (``None``: to nobody)."""
    token = _CURRENT.set(callback)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> Progress | None:
    """The callback of the current context (:func:`reporting`), if any."""
    return _CURRENT.get()


def report(done: int, total: int, callback: Progress | None = None) -> None:
    """Report a step to ``callback``, or else to the current context's callback."""
    target = callback if callback is not None else _CURRENT.get()
    if target is not None:
        target(done, total)


@contextmanager
def bar(description: str, enabled: bool = True) -> Iterator[Progress | None]:
    """A tqdm bar on standard error, reported to by every long loop run within the block.

    Parameters
    ----------
    description : str
        The bar's label.
    enabled : bool
        ``False`` shows nothing and yields ``None``: what ``--no-progress`` passes. The bar also
        stays hidden when standard error is not a terminal.

    Yields
    ------
    callable or None
        The callback (also carried by the context, :func:`reporting`).
    """
    if not enabled:
        with reporting(None):
            yield None
        return
    from tqdm import tqdm

    with tqdm(desc=description, unit="step", file=sys.stderr, disable=None, leave=False) as shown:

        def update(done: int, total: int) -> None:
            _advance(shown, done, total)

        with reporting(update):
            yield update


def _advance(shown: Any, done: int, total: int) -> None:
    if shown.total != total:
        shown.total = total
        shown.refresh()
    shown.update(done - shown.n)

"""Progress of long accounting: a callback type and a tqdm bar for terminals.

A long loop of the accounting (the repeated squaring of a PLD composition, the steps of a
calibration search) takes an optional ``progress`` callback, called as ``progress(done, total)``
after each step, and never prints anything itself. :func:`bar` makes such a callback from a
tqdm progress bar on standard error, which is what a command line shows (and leaves out with
``--no-progress``)::

    from accounting.progress import bar
    with bar("composing") as progress:
        Accountant().compose(event, 10**6).epsilon(1e-5, progress=progress)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Progress", "bar"]

Progress = Callable[[int, int], None]
"""``progress(done, total)``: ``done`` of ``total`` steps are finished (``total`` may grow)."""


@contextmanager
def bar(description: str, enabled: bool = True) -> Iterator[Progress | None]:
    """A tqdm bar on standard error as a :data:`Progress` callback (``None`` when not ``enabled``).

    Parameters
    ----------
    description : str
        The bar's label.
    enabled : bool
        ``False`` gives ``None`` (no bar): what ``--no-progress`` passes. The bar also stays
        hidden when standard error is not a terminal.
    """
    if not enabled:
        yield None
        return
    from tqdm import tqdm

    with tqdm(desc=description, unit="step", file=sys.stderr, disable=None, leave=False) as shown:

        def update(done: int, total: int) -> None:
            _advance(shown, done, total)

        yield update


def _advance(shown: Any, done: int, total: int) -> None:
    if shown.total != total:
        shown.total = total
        shown.refresh()
    shown.update(done - shown.n)

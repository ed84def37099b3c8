"""What the three command lines (``dp-account``, ``dp-audit``, ``dp-regret``) share: the contract
of :func:`run`, the option types, and the output of an answer.

* every option is checked by the validators of :mod:`accounting.validate` (:func:`checked`), so a
  bad value gets the same wording as in the library, and a count above its limit is refused before
  any work with the limit and the reason;
* invalid input exits with status 2 and one line on stderr naming the option, never a traceback:
  library errors, unreadable files, and — as a last resort — arithmetic that leaves the float range
  (the message then lists the options given); an unexpected bug is one line with status 1
  (``DPCERT_DEBUG=1`` shows its traceback);
* ``--json`` prints strict JSON (:func:`json_text`, ``allow_nan=False``): an infinite value is the
  string ``"inf"`` (or ``"-inf"``), the one convention of the three command lines;
* a closed pipe (``dp-account ... | head``) ends quietly; Ctrl-C exits with status 130;
* ``--version`` prints the package version.

The subcommands that may account for long show a progress bar on standard error when it is a
terminal (:func:`progress`, :func:`accounting.progress.bar`), never with ``--no-progress``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from fractions import Fraction
from typing import Any, NoReturn, TypeAlias, TypeVar

import mpmath

from accounting import storage
from accounting import validate as v
from accounting.certified import Enclosure
from accounting.errors import AccountingError, ParameterError, ParameterTypeError, UnsupportedError
from accounting.progress import Progress, bar

T = TypeVar("T")

#: What ``add_subparsers`` returns: each subcommand module adds its parser to it (``add_parser``).
Subcommands: TypeAlias = "argparse._SubParsersAction[Parser]"


# -- option values, checked by accounting.validate -----------------------------------------


def _parse_real(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _parse_integer(text: str) -> int | Fraction:
    """The exact number ``text`` names (``1e3`` and ``2.0`` are integers, ``2.5`` is not)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def checked(check: Callable[..., T], *, integer: bool = False, **limits: Any) -> Callable[[str], T]:
    """An argparse ``type=``: parse the text, then ``check(name, value, **limits)`` from
    :mod:`accounting.validate`, whose message (what is valid) becomes argparse's one-line error."""

    def convert(text: str) -> T:
        value: object = _parse_integer(text) if integer else _parse_real(text)
        try:
            return check("", value, **limits)
        except (ParameterError, ParameterTypeError) as err:
            raise argparse.ArgumentTypeError(f"{text!r} is invalid: expected {err.valid}") from None

    convert.__name__ = getattr(check, "__name__", "value")  # argparse names the type in some errors
    return convert


def parse_number(
    text: str, convert: Callable[[str], float], valid: Callable[[float], bool], what: str
) -> Any:
    """``convert(text)`` if it satisfies ``valid``, else an argparse error saying ``what`` it must be.

    Prefer :func:`checked` (the library's validators); this remains for callers outside dpcert.
    """
    try:
        value = convert(text)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not valid(value):
        raise argparse.ArgumentTypeError(f"{text!r} must be {what}")
    return value


# The option types every command line uses (the others live beside their subcommand).
positive_float = checked(v.positive)
nonnegative_float = checked(v.nonnegative)
positive_int = checked(v.count, integer=True)
#: A rate in ``(0, 1]``.
rate_float = checked(v.interval, low=0.0, high=1.0)
#: A real in the open interval ``(0, 1)``.
unit_float = checked(v.open_unit)
#: A working precision in decimal digits (``--dps``).
dps_int = checked(v.dps, integer=True)


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``prog: error: ...``), exit status 2."""

    def add_version(self) -> None:
        """``--version``: the program and the package version (:func:`package_version`)."""
        self.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def package_version() -> str:
    """The installed version of dpcert (its package metadata), else the source's."""
    from importlib import metadata

    try:
        return metadata.version("dpcert")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        from accounting import __version__

        return __version__


# -- output --------------------------------------------------------------------------------------


def inputs(args: argparse.Namespace, names: Sequence[str]) -> dict[str, object]:
    """The options ``names`` that were given (or have a default), for the ``inputs`` of a record."""
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def emit(args: argparse.Namespace, record: dict[str, object], text: str) -> int:
    """Print ``record`` as JSON with ``--json``, else ``text``; status 0."""
    print(json_text(record) if args.json else text)
    return 0


def progress(args: argparse.Namespace, description: str) -> AbstractContextManager[Progress | None]:
    """The progress bar of a long answer (:func:`accounting.progress.bar`): on standard error, so
    never mixed into the answer (``--json`` included), shown only when standard error is a
    terminal, and never with ``--no-progress``."""
    return bar(description, enabled=not getattr(args, "no_progress", False))


def add_json(cmd: argparse.ArgumentParser, text: str = "print one JSON object") -> None:
    """``--json``: the answer as strict JSON (:func:`json_text`, printed by :func:`emit`)."""
    cmd.add_argument("--json", action="store_true", help=text)


def add_no_progress(cmd: argparse.ArgumentParser) -> None:
    """``--no-progress`` (:func:`progress`)."""
    cmd.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (one is shown on standard error only when it is a terminal)",
    )


def certified_text(asked: str, answer: Enclosure) -> str:
    """The text of a certified answer: its upper end, or ``inf`` when it is unbounded.

    An upper end that is infinite while the lower end is finite is no answer (the computation
    could not bound it, or the value exceeds the float range): it is refused, never printed.
    """
    if math.isfinite(answer.upper):
        return repr(answer.upper)
    if answer.lo == mpmath.inf:
        return f"inf (unbounded: no finite {asked} holds)"
    raise AccountingError(
        f"no finite certified {asked} for these options: the certified enclosure is "
        f"[{answer.lower!r}, inf] (the value exceeds the float range, or the route could not bound "
        "it; try another --route)"
    )


# -- the contract of the three command lines -------------------------------------------------


def json_text(record: Any) -> str:
    """``record`` as strict JSON (:func:`accounting.storage.json_text`: ``+inf`` is ``"inf"``, and
    ``allow_nan=False``, so a slip fails loudly: a NaN in an answer is a bug, reported as an
    internal error, never printed)."""
    try:
        return storage.json_text(record)
    except ValueError as err:
        raise RuntimeError(f"an answer holds a NaN, which JSON cannot carry ({err})") from None


#: Library parameter names that are a command-line option under another name.
_ALIASES = {
    "count": "compositions",
    "rate": "sampling_rate",
    "size": "samples",
    "results_dir": "results",
    "out_dir": "out",
    "history": "opacus_history",
}


def _options_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """``dest -> option string`` of the subcommand that ran (``users -> --users``)."""
    out: dict[str, str] = {}
    parsers = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                parsers.append(chosen)
    for p in parsers:
        for action in p._actions:
            if action.option_strings:
                out.setdefault(action.dest, max(action.option_strings, key=len))
            elif action.dest not in ("help", argparse.SUPPRESS):
                name = action.metavar if isinstance(action.metavar, str) else action.dest  # as in usage
                out.setdefault(action.dest, name)
    return out


def _given(argv: Sequence[str]) -> str:
    """The options given, for a message about a value derived from them."""
    return " ".join(argv) if argv else "(no options)"


def _message(err: Exception, options: Mapping[str, str], argv: Sequence[str]) -> str:
    """The one line of a library error: its parameter renamed to the option it came from, or,
    for a value derived from the options, those options; a guarantee no route can certify
    (:class:`~accounting.errors.UnsupportedError`) starts with the options that asked for it."""
    if isinstance(err, ParameterError | ParameterTypeError):
        root = err.name.split("[", 1)[0].split(".", 1)[0]
        dest = _ALIASES.get(root, root)
        if err.name.startswith("-") or err.name.isupper():
            return str(err)
        if dest in options:
            kind = ParameterError if isinstance(err, ParameterError) else ParameterTypeError
            where = err.name[len(root) :]  # an entry of a file's contents: "[0].steps"
            return str(kind(options[dest] + where, err.value, err.valid))
        if isinstance(err.value, int | float | Fraction) and not isinstance(err.value, bool):
            return f"{err} (a value derived from the options: {_given(argv)})"
    elif isinstance(err, UnsupportedError):
        return f"with the options given ({_given(argv)}): {err}"
    return str(err)


#: The longest error message printed in full (a route's refusals can list dozens of orders).
MAX_MESSAGE = 600


def one_line(text: str) -> str:
    """``text`` on one line, cut at :data:`MAX_MESSAGE` characters."""
    flat = " ".join(text.split())
    if len(flat) <= MAX_MESSAGE:
        return flat
    return flat[:MAX_MESSAGE].rstrip() + " ... (DPCERT_DEBUG=1 shows the whole message)"


def _debug() -> bool:
    return os.environ.get("DPCERT_DEBUG", "") not in ("", "0")


def _quiet_stdout() -> None:
    """After a closed pipe: send what is left of stdout nowhere, so exiting does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no real stdout (tests)
        pass


def _noted(prog: str, show: Callable[..., None]) -> Callable[..., None]:
    """``warnings.showwarning`` that prints a :class:`~accounting.validate.SpellingNote` or a
    :class:`~accounting.validate.Note` as one line ``prog: note: ...`` on stderr (other warnings
    as before)."""

    def showwarning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, v.SpellingNote | v.Note):
            print(f"{prog}: note: {message}", file=sys.stderr)
        else:
            show(message, category, *args, **kwargs)

    return showwarning


def add_old_spelling(cmd: argparse.ArgumentParser, old: str, new: str, **kwargs: Any) -> None:
    """Accept ``old`` (hidden from ``--help``) as ``new``, noting the new spelling when it is used."""

    class OldSpelling(argparse.Action):
        def __call__(
            self,
            parser: argparse.ArgumentParser,
            namespace: argparse.Namespace,
            values: Any,
            option_string: str | None = None,
        ) -> None:
            v.spelling("option", old, {old: new})
            setattr(namespace, self.dest, values)

    cmd.add_argument(
        old, dest=new.lstrip("-").replace("-", "_"), action=OldSpelling, help=argparse.SUPPRESS, **kwargs
    )


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run the chosen subcommand under the command-line contract.

    Exit status 0 (or the subcommand's own), 2 for invalid input — a library error, an unreadable
    file, or arithmetic the values given push out of the float range — with one line on stderr
    naming the option, 1 for an unexpected error (one line; ``DPCERT_DEBUG=1`` re-raises it for the
    traceback), 130 when interrupted, 141 when stdout is a closed pipe.
    """
    given = list(sys.argv[1:] if argv is None else argv)
    prog = parser.prog
    try:
        with warnings.catch_warnings():
            # numpy's overflow/invalid-value warnings are not the user's business: answers are
            # checked (a non-finite one is refused or reported as unbounded).
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("always", v.SpellingNote)
            warnings.simplefilter("always", v.Note)
            warnings.showwarning = _noted(prog, warnings.showwarning)
            args = parser.parse_args(given)
            options = _options_of(parser, args)
            code: int = args.func(args)
        sys.stdout.flush()
        return code
    except (AccountingError, ParameterTypeError) as err:
        if _debug():
            raise
        print(f"{prog}: error: {one_line(_message(err, options, given))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return 130
    except OSError as err:
        if _debug():
            raise
        where = f"{err.filename}: " if err.filename else ""
        print(f"{prog}: error: {where}{err.strerror or err}", file=sys.stderr)
        return 2
    except (ValueError, ArithmeticError, RecursionError, MemoryError) as err:
        if _debug():
            raise
        print(
            f"{prog}: error: cannot compute this with the values given ({_given(given)}): "
            f"{type(err).__name__}: {' '.join(str(err).split()) or 'no detail'}",
            file=sys.stderr,
        )
        return 2
    except Exception as err:
        if _debug():
            raise
        print(
            f"{prog}: internal error: {type(err).__name__}: {' '.join(str(err).split())} "
            "(please report it; DPCERT_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return 1

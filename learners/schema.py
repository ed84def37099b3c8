"""The experiment config as data: a table of keys with their types, ranges and defaults.

Every key of the TOML format (:mod:`learners.config`) is a :class:`Field` of a :class:`Section`
(the top level, ``[[panels]]``, ``[[algorithms]]``, ``[quick]``, each instance kind, the
``params`` of each learner family). One table serves three readers:

* the **validation** (:meth:`Section.parse`, :meth:`Field.parse`): a value of the wrong type or out
  of range is a :class:`~learners.errors.ConfigError` naming the key's path in the config
  (``panels[2].instance.arms``), the value received and what is valid;
* the **README's config reference** (:meth:`Section.markdown`, :meth:`Field.cell`;
  :func:`learners.config_schema.reference` renders the whole section, and a test checks the
  README against it);
* the **contract tests**, which walk every section and check that a bad value of each key is
  refused with a message naming it.

The ``params`` of a family are documented here too; their values are checked by the family's
``make_learner`` (one check per keyword, also for the Python API), and the contract tests check
that it refuses each field's :attr:`Field.bad` values.

This module imports neither :mod:`learners.config` nor :mod:`learners.families`: both import it.
The limits below are the config's, refused before anything runs; the message gives the reason.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from accounting import validate as v
from accounting.storage import open_regular
from learners.errors import ConfigError, ParameterError, ParameterTypeError

#: Rounds are simulated pull by pull (about 3·10^7 a second per core): 10^12 rounds are hours of
#: one repetition where no arm is eliminated.
MAX_HORIZON = 10**12
WHY_HORIZON = "rounds are simulated pull by pull, about 3e7 a second: 1e12 rounds take hours per repetition"
#: Every repetition holds its instance, reward tape and regret curves in memory.
MAX_REPETITIONS = 10**6
WHY_REPETITIONS = "every repetition holds its instance, reward tape and regret curves in memory"
#: regret.csv holds a row per repetition and checkpoint of each (panel, algorithm, ε), and the
#: outputs are assembled in memory: 10^8 rows are gigabytes.
MAX_CURVE_POINTS = 10**8
WHY_CURVES = "regret.csv holds a row per repetition and checkpoint, assembled in memory"
#: The privacy levels a learner can run at: below, the noise overflows the int64 samplers (a
#: Skellam variance beyond 10^18 for 1e-12) or rounds β = exp(-ε/Δ) to 1; above, the
#: fixed-point encoding overflows (g > 2^53 near 1e30).
MIN_EPSILON, MAX_EPSILON = 1e-9, 1e8
WHY_EPSILON = "smaller ε make noise beyond the int64 samplers, larger ones a fixed-point encoding beyond 2^53"
#: Arms of an instance: the learner keeps per-arm statistics of every repetition.
MAX_ARMS = 10**6
WHY_ARMS = "the learner keeps per-arm statistics of every repetition in memory"
#: numpy's seeds are non-negative integers below 2^128.
MAX_SEED = 2**128 - 1

#: A name of the config (the experiment, a panel): safe as a folder and file name.
#: At most :data:`MAX_NAME` characters: names become file names (``regret-<panel>-<y>.png``, written
#: through ``.<file>.<pid>.tmp``), which most file systems cap at 255 bytes.
MAX_NAME = 100
NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.-]{{0,{MAX_NAME - 1}}}")
NAME_RULE = f"a name of letters, digits, '.', '_' and '-' (a letter or digit first), at most {MAX_NAME} long"


class _Required:
    """The default of a key that must be given."""

    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of a required key.
REQUIRED: Final = _Required()

#: The value types of a field, and how the README names them.
TYPES: Final = {
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "string": "string",
    "path": "string",
    "numbers": "array of numbers",
    "strings": "string or array of strings",
    "table": "table",
    "tables": "array of tables",
}


# ---------------------------------------------------------------------------------------
# The validators (each raises a ConfigError naming ``where``)
# ---------------------------------------------------------------------------------------


def type_name(value: object) -> str:
    """The name of ``value``'s type, as an error message says it."""
    return type(value).__name__


def check_keys(where: str, table: Mapping[str, Any], allowed: Sequence[str]) -> None:
    """Every key of ``table`` is one of ``allowed``, else a :class:`ConfigError` naming the first other."""
    for key in table:
        if key not in allowed:
            path = f"{where}.{key}" if where else key
            raise ConfigError(path, table[key], "no such key; valid keys: " + ", ".join(allowed))


def table(where: str, value: object) -> Mapping[str, Any]:
    """``value`` if it is a TOML table."""
    if not isinstance(value, Mapping):
        raise ConfigError(where, value, f"a table, not a {type_name(value)}")
    return value


def array(where: str, value: object) -> list[Any]:
    """``value`` if it is a TOML array."""
    if not isinstance(value, list):
        raise ConfigError(where, value, f"an array, not a {type_name(value)}")
    return value


def string(where: str, value: object, *, pattern: re.Pattern[str] | None = None) -> str:
    """``value`` if it is a string (matching ``pattern``: a :data:`NAME`)."""
    if not isinstance(value, str):
        raise ConfigError(where, value, f"a string, not a {type_name(value)}")
    if pattern is not None and not pattern.fullmatch(value):
        raise ConfigError(where, value, NAME_RULE)
    return value


def integer(where: str, value: object, low: int, high: int | None = None, why: str = "") -> int:
    """An integer of the config in ``[low, high]``, by accounting's validator (a TOML float such as
    ``1e6`` is refused: TOML has integers, and a float in an integer field is a typo to point out);
    ``why`` is the reason of ``high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        hint = " (write 1_000_000, not 1e6)" if isinstance(value, float) else ""
        range_text = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ConfigError(where, value, f"an integer {range_text}{hint}")
    try:
        return v.integer(where, value, minimum=low, maximum=high, why=why)
    except ParameterError as err:
        raise ConfigError(where, err.value, err.valid) from None


def real(
    where: str,
    value: object,
    *,
    low: float = 0.0,
    high: float = math.inf,
    low_open: bool = True,
    high_open: bool = True,
    why: str = "",
) -> float:
    """A finite real of the config in ``(low, high)`` (``[low, ...`` with ``low_open=False``,
    ``..., high]`` with ``high_open=False``), by accounting's validator."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(where, value, f"a number, not a {type_name(value)}")
    try:
        x = v.interval(where, value, low, high, low_open=low_open, high_open=high_open, why=why)
    except (ParameterError, ParameterTypeError) as err:
        raise ConfigError(where, err.value, err.valid.replace("real number", "number")) from None
    return x


def data_file(where: str, value: object, base: Path, what: str) -> str:
    """The absolute path of an existing, readable regular file ``value`` (relative to ``base``, the
    config's folder); opened (without blocking, :func:`accounting.storage.open_regular`) and closed
    again, so that a folder, a pipe, a device or a file without read permission is refused here."""
    text = string(where, value)
    if not text or "\0" in text:
        raise ConfigError(where, value, f"{what} (a non-empty path without NUL characters)")
    try:
        given = Path(text).expanduser()
        resolved = given if given.is_absolute() else base / given
        found = resolved.is_file()
    except (OSError, RuntimeError):  # a name too long, a home folder that cannot be found
        found = False
        resolved = Path(text)
    if not found:
        raise ConfigError(where, value, f"{what} (looked for {resolved})")
    try:
        open_regular(resolved, where, what="data file").close()
    except ParameterError as err:
        raise ConfigError(where, value, f"{what} ({err.valid})") from None
    return str(resolved.resolve())


def names(where: str, raw: object, choices: Sequence[str], refusal: str) -> tuple[str, ...]:
    """``raw`` as one of ``choices`` or a non-empty list of them without repeats."""
    items = [raw] if isinstance(raw, str) else raw
    if (
        not isinstance(items, list)
        or not items
        or not all(isinstance(y, str) and y in choices for y in items)
        or len(set(items)) != len(items)
    ):
        raise ConfigError(where, raw, refusal)
    return tuple(items)


# ---------------------------------------------------------------------------------------
# Fields and sections
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One key of the config: its type, range, default, and what it means.

    Attributes
    ----------
    key : str
    type : str
        One of :data:`TYPES`.
    meaning : str
        What the key does (the README's "meaning" column).
    default : object
        The value a missing key takes (:data:`REQUIRED`: none, the key must be given; ``None``:
        the key is optional and absent means "none").
    low, high : float, int, str or None
        The range (of each element of a ``numbers`` array): a number, or the name of a key of the
        same section parsed before this one (``arms`` of ``linear-synthetic`` is at least ``dim``).
    low_open, high_open : bool
        Whether a ``number`` may not equal ``low``, ``high`` (integers: closed).
    why : str
        Why ``high`` is the limit (appended to the message).
    choices : tuple of str
        The valid strings of a ``string`` or ``strings`` field.
    refusal : str
        What the message says is valid, where the type and range do not say it well (also the
        message of a bad element of a ``numbers`` array, and of a ``path`` that is no file).
    missing : str
        What the message of a missing required key says is expected.
    min_items : int
        The fewest elements of a ``numbers`` array, refused with :attr:`few`.
    few : str
    distinct : str
        Non-empty: the elements of a ``numbers`` array must differ, and a repeat is refused with
        this message.
    pattern : re.Pattern or None
        A ``string`` field that is a name (:data:`NAME`).
    when : tuple of (str, str) or None
        ``(key, value)``: the field applies only where ``key`` of the section is ``value``;
        elsewhere it is ``None`` and giving it is refused.
    default_doc, valid_doc, type_doc : str
        The README's columns where the generated ones (from the default, range, type) fall short.
    algorithms : tuple of str
        A ``params`` field: the algorithms that take it (empty: every algorithm of the family).
    bad : tuple
        A ``params`` field: values ``make_learner`` refuses (the contract tests feed them to
        the first of :attr:`algorithms`, or of the family's private algorithms).
    """

    key: str
    type: str
    meaning: str = ""
    default: object = REQUIRED
    low: float | str | None = None
    high: float | str | None = None
    low_open: bool = False
    high_open: bool = False
    why: str = ""
    choices: tuple[str, ...] = ()
    refusal: str = ""
    missing: str = "a value (the key is required)"
    min_items: int = 0
    few: str = ""
    distinct: str = ""
    pattern: re.Pattern[str] | None = None
    when: tuple[str, str] | None = None
    default_doc: str = ""
    valid_doc: str = ""
    type_doc: str = ""
    algorithms: tuple[str, ...] = ()
    bad: tuple[object, ...] = ()

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"Field {self.key!r}: type {self.type!r} is not one of {', '.join(TYPES)}")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def parse(
        self, where: str, value: object, base: Path | None = None, context: Mapping[str, Any] | None = None
    ) -> Any:
        """``value`` validated (a :class:`ConfigError` naming ``where`` otherwise). ``base`` is the
        config's folder (``path`` fields); ``context`` the section's values parsed so far (bounds
        that name a key)."""
        low, high = self._bound(self.low, context), self._bound(self.high, context)
        if self.type == "integer":
            return integer(where, value, int(low if low is not None else 0), _int_or_none(high), self.why)
        if self.type == "number":
            return self._number(where, value, low, high)
        if self.type == "boolean":
            if not isinstance(value, bool):
                raise ConfigError(where, value, self.refusal or "true or false")
            return value
        if self.type == "string":
            return self._string(where, value)
        if self.type == "path":
            assert base is not None, "a path field is parsed with the config's folder"
            return data_file(where, value, base, self.refusal)
        if self.type == "numbers":
            return self._numbers(where, value, low, high)
        if self.type == "strings":
            return names(where, value, self.choices, self.refusal)
        if self.type == "table":
            return table(where, value)
        return array(where, value)

    @staticmethod
    def _bound(bound: float | str | None, context: Mapping[str, Any] | None) -> Any:
        if isinstance(bound, str):
            assert context is not None, f"the bound {bound!r} is a key of the section"
            assert bound in context, f"the bound {bound!r} is parsed first"
            return context[bound]
        return bound

    def _number(self, where: str, value: object, low: Any, high: Any) -> float:
        return real(
            where,
            value,
            low=0.0 if low is None else low,
            high=math.inf if high is None else high,
            low_open=self.low_open,
            high_open=self.high_open,
            why=self.why,
        )

    def _string(self, where: str, value: object) -> str:
        if self.refusal and self.choices:  # one message for any value not among them
            if not isinstance(value, str) or value not in self.choices:
                raise ConfigError(where, value, self.refusal)
            return value
        text = string(where, value, pattern=self.pattern)
        if self.choices and text not in self.choices:
            raise ConfigError(where, text, "one of " + ", ".join(self.choices))
        return text

    def _numbers(self, where: str, value: object, low: Any, high: Any) -> tuple[float, ...]:
        items = array(where, value)
        out: list[float] = []
        for j, item in enumerate(items):
            at = f"{where}[{j}]"
            if self.refusal:  # the element's own message (e.g. "a mean in [0, 1]")
                try:
                    x = self._number(at, item, low, high)
                except ConfigError:
                    raise ConfigError(at, item, self.refusal) from None
            else:
                x = self._number(at, item, low, high)
            if self.distinct and x in out:
                raise ConfigError(at, item, self.distinct)
            out.append(x)
        if len(out) < self.min_items:
            raise ConfigError(where, value, self.few)
        return tuple(out)

    # -- the README ------------------------------------------------------------------------

    def type_text(self) -> str:
        return self.type_doc or TYPES[self.type]

    def default_text(self) -> str:
        if self.default_doc:
            return self.default_doc
        if self.default is REQUIRED:
            return "required"
        return _value_doc(self.default)

    def valid_text(self) -> str:
        """The valid values, from the range and choices (or :attr:`valid_doc`)."""
        if self.valid_doc:
            return self.valid_doc
        if self.choices:
            return ", ".join(f"`{c}`" for c in self.choices)
        if self.type == "path":
            return "an existing file, relative to the config's folder"
        if self.type in ("integer", "number", "numbers"):
            text = _range_doc(self)
            if self.type == "numbers":
                text = f"each in {text}" if text[0] in "([" else f"each {text}"
                if self.min_items:
                    text += f", at least {self.min_items}"
                if self.distinct:
                    text += ", no repeats"
            return text
        return "any"

    def cell(self) -> str:
        """The field in one cell: ``key`` (type, default, valid)."""
        parts = [self.type_text(), self.default_text(), self.valid_text()]
        if self.when is not None:
            parts.append(f'`{self.when[0]} = "{self.when[1]}"` only')
        return f"`{self.key}` ({', '.join(parts)})"

    def row(self) -> str:
        """The field as a row of a README table: key, type, default, valid, meaning."""
        cells = [f"`{self.key}`", self.type_text(), self.default_text(), self.valid_text(), self.meaning]
        return "| " + " | ".join(cells) + " |"


#: The README's valid text of a :data:`NAME` field.
NAME_DOC = "letters, digits, `.`, `_`, `-`; a letter or digit first"


@dataclass(frozen=True)
class Section:
    """The keys of one table of the config, in order.

    Attributes
    ----------
    title : str
        What the table is (an instance kind's name, ``[quick]``, ...).
    fields : tuple of Field
    meaning : str
        What the table describes (an instance kind: the instance).
    """

    title: str
    fields: tuple[Field, ...]
    meaning: str = ""

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def __getitem__(self, key: str) -> Field:
        for f in self.fields:
            if f.key == key:
                return f
        raise KeyError(key)

    def names(self) -> tuple[str, ...]:
        return tuple(f.key for f in self.fields)

    def parse(self, where: str, given: Mapping[str, Any], base: Path | None = None) -> dict[str, Any]:
        """Every field's value: validated where ``given`` has it, else its default (a missing
        required key is a :class:`ConfigError`). ``where`` is the table's path (``""`` at the top)."""
        values: dict[str, Any] = {}
        for f in self.fields:
            path = f"{where}.{f.key}" if where else f.key
            if f.when is not None and values.get(f.when[0]) != f.when[1]:
                if f.key in given:
                    key, need = f.when
                    raise ConfigError(
                        path, given[f.key], f'no {f.key}: {key} = "{values.get(key)}" (set "{need}")'
                    )
                values[f.key] = None
            elif f.key in given:
                values[f.key] = f.parse(path, given[f.key], base, values)
            elif f.required:
                raise ConfigError(path, None, f.missing)
            elif f.default is None:
                values[f.key] = None
            else:
                values[f.key] = f.parse(path, f.default, base, values)
        return values

    def markdown(self, first: str = "key") -> str:
        """The section as a README table (a row per field)."""
        head = f"| {first} | type | default | valid | meaning |\n|---|---|---|---|---|\n"
        return head + "\n".join(f.row() for f in self.fields) + "\n"

    def cells(self) -> str:
        """The section's fields in one cell (an instance kind's row)."""
        return "; ".join(f.cell() for f in self.fields)


def _int_or_none(x: Any) -> int | None:
    return None if x is None else int(x)


def number_doc(x: float) -> str:
    """A number as the README writes it: ``10^6``, ``2^32 − 1``, ``1e-9``, ``0.5``."""
    if isinstance(x, int) and not isinstance(x, bool):
        if x >= 10**4 and 10 ** round(math.log10(x)) == x:
            return f"10^{round(math.log10(x))}"
        if x >= 2**16 - 1 and (x + 1) & x == 0:
            return f"2^{(x + 1).bit_length() - 1} − 1"
        return str(x)
    text = f"{x:g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


def _value_doc(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, int | float):
        return number_doc(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value_doc(x) for x in value) + "]"
    return f"`{value!r}`"


def _bound_doc(bound: float | str) -> str:
    return f"`{bound}`" if isinstance(bound, str) else number_doc(bound)


def _range_doc(f: Field) -> str:
    """The range of an integer or number field: ``2 … 10^6``, ``≥ 1``, ``(0, 1]``, ``> 0``."""
    low = 0 if f.low is None else f.low
    if f.type == "integer":
        if f.high is None:
            return f"≥ {_bound_doc(low)}"
        return f"{_bound_doc(low)} … {_bound_doc(f.high)}"
    if f.high is None or f.high == math.inf:
        return f"{'>' if f.low_open else '≥'} {_bound_doc(low)}"
    lo, hi = "(" if f.low_open else "[", ")" if f.high_open else "]"
    return f"{lo}{_bound_doc(low)}, {_bound_doc(f.high)}{hi}"


__all__ = [
    "MAX_ARMS",
    "MAX_CURVE_POINTS",
    "MAX_EPSILON",
    "MAX_HORIZON",
    "MAX_REPETITIONS",
    "MAX_SEED",
    "MIN_EPSILON",
    "NAME",
    "NAME_DOC",
    "REQUIRED",
    "TYPES",
    "Field",
    "Section",
    "array",
    "check_keys",
    "data_file",
    "integer",
    "names",
    "number_doc",
    "real",
    "string",
    "table",
    "type_name",
]

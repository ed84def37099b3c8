"""A small TOML writer for the resolved experiment config (the standard library only reads TOML).

:meth:`learners.config.Config.to_toml` writes the configuration a run resolved (``config.toml`` of
a results folder), which :func:`learners.config.load_config` reads back to the same config.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from learners.errors import ConfigError

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    # A JSON string is a TOML basic string, except that TOML also wants DEL escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value: Any) -> str:
    """One TOML value (an inline table for a mapping)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:_d}" if abs(value) >= 10**5 else str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise ConfigError("config", value, "strings, numbers, booleans, arrays and tables")


def dump_toml(data: Mapping[str, Any]) -> str:
    """``data`` as TOML: scalars first, then each array of tables (its tables' tables inline)."""
    lines: list[str] = []
    arrays: list[tuple[str, list[Mapping[str, Any]]]] = []
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            arrays.append((key, value))
        else:
            lines.append(f"{_toml_key(key)} = {toml_value(value)}")
    for key, tables in arrays:
        for table in tables:
            lines += ["", f"[[{_toml_key(key)}]]"]
            lines += [f"{_toml_key(k)} = {toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


__all__ = ["dump_toml", "toml_value"]

"""Where experiment configs come from: the shipped ones, and TOML files read with a bound.

A config file (``dp-regret run FILE``, a results folder's ``config.toml``) is read only when it is a
regular file of at most :data:`MAX_CONFIG_BYTES` (:func:`accounting.storage.read_text`: a pipe, a
device or a folder is refused before a byte is read), then parsed as TOML; every failure is a
:class:`~learners.errors.ConfigError` naming the file.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from accounting.errors import ParameterError
from accounting.storage import read_text
from learners.errors import ConfigError

__all__ = ["MAX_CONFIG_BYTES", "read_config", "read_toml", "shipped_configs"]

#: The largest config file read (the shipped ones are a few kB).
MAX_CONFIG_BYTES = 2**20


def read_toml(path: str | os.PathLike[str], name: str = "config") -> dict[str, Any]:
    """The table of the TOML file ``path``, or a :class:`ConfigError` naming ``name`` and the file."""
    try:
        text = read_text(path, name, MAX_CONFIG_BYTES, "TOML file")
    except ParameterError as err:
        raise ConfigError(name, str(path), err.valid) from None
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise ConfigError(name, str(path), f"a valid TOML file ({detail})") from None


def read_config(source: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[Mapping[str, Any], Path]:
    """A config's table and the folder its relative data paths are taken from (the file's, or
    the working folder for a table)."""
    if isinstance(source, Mapping):
        return source, Path.cwd()
    if not isinstance(source, str | os.PathLike):
        raise ConfigError("config", source, "a TOML file path or a table (mapping)")
    path = Path(source)
    if not path.exists():
        raise ConfigError("config", str(source), "an existing TOML file")
    return read_toml(path), path.resolve().parent


def shipped_configs() -> dict[str, Path]:
    """The configs shipped with dpcert, one per reproduced figure: name -> file."""
    root = resources.files("learners").joinpath("configs")
    found: dict[str, Path] = {}
    for entry in root.iterdir():
        if entry.name.endswith(".toml"):
            found[entry.name.removesuffix(".toml")] = Path(str(entry))
    return dict(sorted(found.items()))

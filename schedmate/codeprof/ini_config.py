"""INI files read with Python's `configparser` (`config.read("train.ini")`, then
`config.getint("training", "epochs")` or `config["training"]["batch_size"]`).

The documented format: `[section]` headers, `key = value` or `key: value` lines, `#`/`;` comments, keys
case-insensitive (configparser lower-cases them), a `[DEFAULT]` section whose keys every other section
inherits, and `%(name)s` interpolation from the same section. Values are strings to configparser; the
program's getter types them (`getint`, `getfloat`, `getboolean`), so they are typed here the way those
getters would read them: whole numbers as int, other numbers as float, yes/no/true/false/on/off as bool.
"""

from __future__ import annotations

import configparser
import re
from typing import Any

from schedmate.codeprof.static.names import parse_scalar

_BOOL = {"yes": True, "true": True, "on": True, "no": False, "false": False, "off": False}


def looks_like_ini(text: str) -> bool:
    """A `[section]` header before any other content line (a `setup.cfg`-style or `train.ini` file)."""
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(("#", ";")):
            continue
        return bool(re.fullmatch(r"\[[^\]]+\]", s))
    return False


def typed(value: str) -> Any:
    """A value as configparser's getters read it: numbers as `parse_scalar` reads them, its booleans (on/off too),
    and no null (`none` stays a word)."""
    v = value.strip()
    if v.lower() in _BOOL:
        return _BOOL[v.lower()]
    if v.lower() in ("none", "null"):
        return v
    return parse_scalar(v)


def ini_config(text: str, path: str = "") -> dict[str, Any]:
    """{section: {key: typed value}} of an INI text (DEFAULT keys folded into every section)."""
    cp = configparser.ConfigParser(interpolation=configparser.BasicInterpolation(), strict=False)
    cp.read_string(text, source=path or "<ini>")
    out: dict[str, Any] = {}
    for section in cp.sections():
        out[section] = {}
        for key in cp[section]:
            try:
                raw = cp[section][key]
            except (configparser.InterpolationError, ValueError):
                raw = cp.get(section, key, raw=True)
            out[section][key] = typed(raw)
    if cp.defaults():
        out.setdefault("DEFAULT", {k: typed(v) for k, v in cp.defaults().items()})
    return out

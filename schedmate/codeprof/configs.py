"""Config files a job names: YAML, JSON, TOML and Python files of literal assignments.

Parsing never executes anything: YAML through `yaml.safe_load`, Python through `ast` (only literal
right-hand sides are kept). Each leaf is returned with the line that defines it (best effort: the
first line after its parent's line that names the key).
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import tomllib
from typing import Any

import yaml

from schedmate.codeprof import jinja_yaml
from schedmate.codeprof.ini_config import ini_config, looks_like_ini

CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".py", ".cfg", ".ini")


class ConfigError(ValueError):
    pass


class _TolerantLoader(yaml.SafeLoader):
    """safe_load that accepts application tags (`!ref <x>`, `!new:pkg.Class`, `!!python/...` are never
    constructed): a tagged node becomes its plain value; `!ref <a.b>` becomes `${a.b}` so the config tree's
    interpolation resolves it."""


def _any_tag(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
        if tag_suffix == "ref" or tag_suffix.startswith("ref"):
            m = re.fullmatch(r"\s*<([\w.\[\]-]+)>\s*", str(value))
            return f"${{{m.group(1)}}}" if m else value
        return loader.resolve_plain(value) if hasattr(loader, "resolve_plain") else value
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]


_TolerantLoader.add_multi_constructor("!", _any_tag)
_TolerantLoader.add_multi_constructor("tag:yaml.org,2002:python/", _any_tag)


def parse_config(path: str, text: str, context: dict[str, str] | None = None) -> dict[str, Any]:
    """A nested dict of the file's content; raises ConfigError naming the file on bad syntax. `context`: the
    values a Jinja-templated YAML's placeholders get when the job renders it (see `jinja_yaml.py`)."""
    low = path.lower()
    try:
        if low.endswith((".yaml", ".yml")):
            try:
                data = yaml.load(text, Loader=_TolerantLoader)
            except yaml.composer.ComposerError:
                data = _merged_documents(text)  # `---`-separated sections: one mapping, later keys win
            except yaml.YAMLError:
                if jinja_yaml.is_template(text):
                    return _template(path, text, context)  # `gpus: {{ gpus }}`: placeholders open, the rest read
                repaired = _missing_commas(text)  # a JSON-style YAML with a forgotten comma (GPT-NeoX configs)
                if repaired == text:
                    raise
                data = yaml.load(repaired, Loader=_TolerantLoader)
        elif low.endswith(".json"):
            data = json.loads(text)
        elif low.endswith(".toml"):
            data = tomllib.loads(text)
        elif low.endswith(".py"):
            data = python_literals(text)
        elif low.endswith((".ini", ".cfg")) and looks_like_ini(text):
            data = ini_config(text, path)
        else:
            raise ConfigError(f"{path}: unsupported config format")
    except (yaml.YAMLError, json.JSONDecodeError, tomllib.TOMLDecodeError, SyntaxError, configparser.Error) as e:
        raise ConfigError(f"{path}: cannot parse: {e}".splitlines()[0]) from e
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level is {type(data).__name__}, expected a mapping")
    return data


def _template(path: str, text: str, context: dict[str, str] | None) -> dict[str, Any]:
    """A Jinja-templated YAML read with its placeholders open (or filled from `context`)."""
    got = jinja_yaml.template_text(text)
    if got is None:
        raise ConfigError(f"{path}: a Jinja template with statements ({{% ... %}}): its rendered shape is open")
    marked, exprs = got
    try:
        data = jinja_yaml.fill(yaml.load(marked, Loader=_TolerantLoader), exprs, context)
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: cannot parse the template: {e}".splitlines()[0]) from e
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level is {type(data).__name__}, expected a mapping")
    return data


def _merged_documents(text: str) -> dict[str, Any]:
    """A YAML stream of several mappings (`data: ...` / `---` / `train: ...`), read as its scripts read it
    (`for doc in yaml.load_all(f): cfg.update(doc)`): their top-level keys in one mapping, a later document's
    key replacing an earlier one's. Raises the YAML error when a document is not a mapping."""
    merged: dict[str, Any] = {}
    for doc in yaml.load_all(text, Loader=_TolerantLoader):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise yaml.YAMLError(f"a document of the stream is a {type(doc).__name__}, expected a mapping")
        merged.update(doc)
    return merged


_ENDS_VALUE = re.compile(r"""(["'\]}\d]|true|false|null)\s*(#.*)?$""")
_STARTS_KEY = re.compile(r"""^\s*["'][^"']+["']\s*:""")


def _missing_commas(text: str) -> str:
    """A flow-style (JSON-like) YAML mapping with a comma missing at a line end before the next `"key":`
    (the same text with those commas; the file itself is never changed)."""
    if not text.lstrip().startswith("{"):
        return text
    lines = text.splitlines()
    nxt = [i for i, ln in enumerate(lines) if ln.strip() and not ln.strip().startswith("#")]
    for a, b in zip(nxt, nxt[1:], strict=False):
        code = lines[a].split(" #", 1)[0].rstrip()
        if _STARTS_KEY.match(lines[b]) and _ENDS_VALUE.search(code) and not code.endswith((",", "{", "[")):
            lines[a] = code + "," + lines[a][len(code):]
    return "\n".join(lines)


def python_literals(text: str) -> dict[str, Any]:
    """Module-level `name = <literal or constant arithmetic>` assignments of a Python config file."""
    from schedmate.codeprof.pyast import const_eval

    out: dict[str, Any] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            ok, v = const_eval(node.value, out)
            if ok:
                out[node.targets[0].id] = v
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            ok, v = const_eval(node.value, out)
            if ok:
                out[node.target.id] = v
    return out


def flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in data.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict):
            out.extend(flatten(v, key))
        else:
            out.append((key, v))
    return out


def key_lines(text: str, dotted_keys: list[str]) -> dict[str, int]:
    """1-based line of each dotted key: its leaf named after its parents' lines (TOML sections too)."""
    lines = text.splitlines()
    out: dict[str, int] = {}
    for dk in dotted_keys:
        start = 0
        found = 0
        for part in dk.split("."):
            pat = re.compile(r"""(^|[\s{,\[."'])["']?""" + re.escape(part) + r"""["']?\s*(:|=|\]|\.)""")
            for i in range(start, len(lines)):
                if pat.search(lines[i]):
                    found = i + 1
                    start = i
                    break
        if found:
            out[dk] = found
    return out

"""`load_trace(spec, ...)`: the one entry point that turns a trace spec into jobs (`.table` columns, `.jobs` records)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedmate.traces.base import TRACES_DIR, LoadedTrace, OnError, RowError, TraceFormatError
from schedmate.traces.loaders import LOADERS, detect_format

DEFAULT_TRACE = TRACES_DIR / "default" / "default_trace.csv"


def _ints(parts: list[str], spec: str, names: list[str]) -> list[float]:
    out = []
    for p, name in zip(parts, names):
        try:
            out.append(float(p) if name == "compress" else int(p))
        except ValueError:
            raise ValueError(f"bad {name} {p!r} in trace spec {spec!r}") from None
    return out


def load_trace(spec: str, fmt: str | None = None, on_error: OnError = "fail", limit: int | None = None,
               seed: int = 0, **options: Any) -> LoadedTrace:
    """Load a trace.

    spec: a file path (format from `fmt`, else from the name/header), a directory (gavel
    `*.trace` files, or pai2020 tables), `synth:<philly|helios|acme|distributed>:<N>[:<seed>]`,
    `derived:philly:<N>[:<seed>[:<compress>]]`, or `default` (the embedded demo trace).
    on_error: "fail" raises `TraceFormatError` at the first bad row; "skip" drops bad rows and
    returns them in `.errors`. limit: keep the first `limit` jobs by submit time. seed: for
    synth/derived (a seed in the spec wins). Other keyword options go to the loader/generator.
    """
    if on_error not in ("fail", "skip"):
        raise ValueError(f"on_error must be 'fail' or 'skip', not {on_error!r}")
    if spec.startswith("synth:"):
        from schedmate.traces import distributed
        from schedmate.traces.synth import generate_table

        parts = spec.split(":")
        if len(parts) not in (3, 4):
            raise ValueError(f"bad spec {spec!r}: expected synth:<philly|helios|acme|distributed>:<N>[:<seed>]")
        kind = parts[1]
        n, *rest = _ints(parts[2:], spec, ["N", "seed"])
        seed = int(rest[0]) if rest else seed
        if kind == distributed.KIND:
            table = distributed.generate_table(int(n), seed, **options)
        else:
            table = generate_table(kind, int(n), seed, **options)
        result = LoadedTrace(table=table, source=spec, fmt=f"synth:{kind}", stats={"jobs": len(table), "seed": seed})
    elif spec.startswith("derived:"):
        from schedmate.traces.derived import derived_philly_table

        parts = spec.split(":")
        if len(parts) not in (3, 4, 5) or parts[1] != "philly":
            raise ValueError(f"bad spec {spec!r}: expected derived:philly:<N>[:<seed>[:<compress>]]")
        vals = _ints(parts[2:], spec, ["N", "seed", "compress"])
        n = int(vals[0])
        seed = int(vals[1]) if len(vals) > 1 else seed
        compress = float(vals[2]) if len(vals) > 2 else float(options.pop("compress", 1.0))
        table, stats = derived_philly_table(n, seed=seed, compress=compress, **options)
        result = LoadedTrace(table=table, source=spec, fmt="derived:philly", stats={"jobs": len(table), "seed": seed, **stats})
    else:
        path = DEFAULT_TRACE if spec == "default" else Path(spec)
        if not path.exists():
            raise FileNotFoundError(f"trace {spec!r} not found ({path})")
        name = fmt or ("csv" if spec == "default" else detect_format(path))
        if name not in LOADERS:
            raise ValueError(f"unknown trace format {name!r}: expected one of {', '.join(sorted(LOADERS))}")
        result = LOADERS[name].load(path, {"on_error": on_error, **options})
        if spec == "default":
            result.source = "default"
    if limit is not None:
        result.table = result.table.sorted().head(int(limit))
        result.stats["limit"] = limit
    return result


__all__ = ["DEFAULT_TRACE", "LoadedTrace", "RowError", "TraceFormatError", "load_trace"]

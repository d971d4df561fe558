"""Shared pieces of the trace loaders: errors, the loaded-trace record, row validation, paths.

Validation is vectorised: a loader reads a whole file into a pandas frame of strings, keeps the
1-based source line of each row in a `_line` column, and runs column checks that each add one
`RowError` per offending row. `fail` mode raises the error with the smallest line number (the
first bad row in the file); `skip` mode drops every row with an error and returns the errors.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

from schedmate.jobtable import JobTable
from schedmate.records import Job

OnError = Literal["fail", "skip"]

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The checkout that holds `traces/` (calibration data, the default trace, fixtures)."""
TRACES_DIR = REPO_ROOT / "traces"


def shared_traces_dir() -> Path:
    """`$SCHEDMATE_SHARED_TRACES`, else `<repo>/../shared/traces` (may not exist)."""
    env = os.environ.get("SCHEDMATE_SHARED_TRACES")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "traces"


class RowError(BaseModel):
    """One bad row (or a bad file header, reported at line 1)."""

    model_config = ConfigDict(frozen=True)

    file: str
    line: int
    field: str | None = None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return f"{where} field {self.field!r}: {self.message}" if self.field else f"{where}: {self.message}"


class TraceFormatError(ValueError):
    """A trace row or file that cannot be read; `str()` names file:line, the field and the problem."""

    def __init__(self, error: RowError):
        super().__init__(str(error))
        self.error = error


class LoadedTrace:
    """Jobs sorted by (submit_time, id), the row errors skip mode collected, and loader statistics.

    The jobs are held as a `JobTable` (what loaders and generators build, and what the replay engine
    reads) or as `Job` records; each form is made from the other on first use of `.table` / `.jobs`."""

    def __init__(self, jobs: list[Job] | None = None, errors: list[RowError] | None = None, source: str = "",
                 fmt: str = "", stats: dict[str, Any] | None = None, table: JobTable | None = None) -> None:
        if (jobs is None) == (table is None):
            raise ValueError("a LoadedTrace holds jobs or a table (one of them)")
        self._jobs = list(jobs) if jobs is not None else None
        self._table = table
        self.errors: list[RowError] = list(errors or [])
        self.source = source
        self.fmt = fmt
        self.stats: dict[str, Any] = dict(stats or {})

    @property
    def jobs(self) -> list[Job]:
        if self._jobs is None:
            assert self._table is not None
            self._jobs = self._table.to_jobs()
        return self._jobs

    @jobs.setter
    def jobs(self, jobs: list[Job]) -> None:
        self._jobs, self._table = list(jobs), None

    @property
    def table(self) -> JobTable:
        if self._table is None:
            self._table = JobTable.from_jobs(self.jobs)
        return self._table

    @table.setter
    def table(self, table: JobTable) -> None:
        self._table, self._jobs = table, None

    def __len__(self) -> int:
        return len(self._table) if self._table is not None else len(self.jobs)

    def to_frame(self) -> pd.DataFrame:
        """The jobs as a table (one row per job, the `Job` fields as columns)."""
        return jobs_frame(self.jobs)


def jobs_frame(jobs: Iterable[Job]) -> pd.DataFrame:
    rows = [j.model_dump(exclude={"semantic"}) for j in jobs]
    df = pd.DataFrame(rows)
    if "outcome" in df:
        df["outcome"] = df["outcome"].map(lambda o: getattr(o, "value", o))
    return df


class Loader(Protocol):
    name: str
    description: str

    def load(self, path: Path, options: Mapping[str, Any]) -> LoadedTrace: ...


# --------------------------------------------------------------------------- reading


def read_csv_strings(path: Path, *, header: bool = True, names: list[str] | None = None,
                     sep: str = ",", skipinitialspace: bool = False) -> tuple[pd.DataFrame, list[RowError]]:
    """Read a delimited file as strings with a `_line` column (1-based source line; header = line 1).

    Blank lines are dropped but counted. Rows with too many fields are reported as errors (field
    None) and left out; the fast C parser is used unless such a row exists.
    """
    first_data_line = 2 if header else 1
    kw: dict[str, Any] = {"sep": sep, "dtype": object, "keep_default_na": False, "skip_blank_lines": False,
                              "skipinitialspace": skipinitialspace}
    if not header:
        kw.update(header=None, names=names)
    try:
        df = pd.read_csv(path, **kw)
        df.insert(0, "_line", np.arange(first_data_line, first_data_line + len(df)))
        errors: list[RowError] = []
    except pd.errors.ParserError:
        df, errors = _read_csv_slow(path, header=header, names=names, sep=sep, skipinitialspace=skipinitialspace)
    except pd.errors.EmptyDataError:
        raise TraceFormatError(RowError(file=str(path), line=1, message="file is empty")) from None
    df.columns = [str(c).strip() for c in df.columns]
    data_cols = [c for c in df.columns if c != "_line"]
    if len(df) and data_cols:
        blank = np.ones(len(df), dtype=bool)
        for c in data_cols:
            blank &= df[c].fillna("").to_numpy(dtype=str) == ""
        df = df[~blank]
    return df.reset_index(drop=True), errors


def _read_csv_slow(path: Path, *, header: bool, names: list[str] | None, sep: str,
                   skipinitialspace: bool) -> tuple[pd.DataFrame, list[RowError]]:
    errors: list[RowError] = []
    rows: list[list[str]] = []
    lines: list[int] = []
    with open(path, newline="") as fh:
        reader = csv.reader(fh, delimiter=sep, skipinitialspace=skipinitialspace)
        cols = names
        for rec in reader:
            line = reader.line_num
            if cols is None:
                cols = [c.strip() for c in rec]
                continue
            if not rec:
                continue
            if len(rec) > len(cols):
                errors.append(RowError(file=str(path), line=line, field=None,
                                       message=f"expected {len(cols)} fields, saw {len(rec)}"))
                continue
            rows.append(rec + [""] * (len(cols) - len(rec)))
            lines.append(line)
    df = pd.DataFrame(rows, columns=cols or [], dtype=str)
    df.insert(0, "_line", np.array(lines, dtype=np.int64))
    return df, errors


# --------------------------------------------------------------------------- validation


MAX_DURATION_S = 365 * 86400.0
"""A job longer than a year is a units mistake or a corrupt row, not a job: a row error."""


class Validator:
    """Collects per-row errors for one frame; every check returns a parsed column."""

    def __init__(self, df: pd.DataFrame, file: str, parse_errors: list[RowError] | None = None):
        self.df = df
        self.file = file
        self.errors: list[RowError] = list(parse_errors or [])
        self.bad = np.zeros(len(df), dtype=bool)
        self.lines = df["_line"].to_numpy() if "_line" in df else np.arange(2, 2 + len(df))

    # -- bookkeeping
    def flag(self, mask: np.ndarray | pd.Series, field: str | None,
             message: str | Callable[[int], str]) -> None:
        mask = np.asarray(mask, dtype=bool)
        mask &= ~self.bad  # one error per row: the first check that fails
        idx = np.flatnonzero(mask)
        for i in idx:
            msg = message(int(i)) if callable(message) else message
            self.errors.append(RowError(file=self.file, line=int(self.lines[i]), field=field, message=msg))
        self.bad |= mask

    def raw(self, col: str, i: int) -> str:
        return str(self.df[col].iat[i])

    def require_columns(self, cols: Iterable[str]) -> None:
        missing = [c for c in cols if c not in self.df.columns]
        if missing:
            raise TraceFormatError(RowError(file=self.file, line=1, field=missing[0],
                                            message=f"missing column(s) {', '.join(missing)}; "
                                                    f"found {', '.join(c for c in self.df.columns if c != '_line')}"))

    # -- column parsers
    def strings(self, col: str, *, required: bool = False) -> pd.Series:
        s = self.df[col].fillna("").astype(str).str.strip() if col in self.df else pd.Series([""] * len(self.df))
        if required:
            self.flag(s.to_numpy() == "", col, "missing value")
        return s

    def number(self, col: str, *, required: bool = True, ge: float | None = None, integer: bool = False,
               what: str = "a number", le: float | None = None, le_why: str = "") -> np.ndarray:
        s = self.strings(col)
        empty = s.to_numpy() == ""
        vals = pd.to_numeric(s.where(~empty, None), errors="coerce").to_numpy(dtype=float)
        if required:
            self.flag(empty, col, "missing value")
        unparsable = ~empty & ~np.isfinite(vals)
        self.flag(unparsable, col, lambda i: f"not {what}: {self.raw(col, i)!r}")
        if integer:
            frac = np.isfinite(vals) & (np.floor(vals) != vals)
            self.flag(frac, col, lambda i: f"not an integer: {self.raw(col, i)!r}")
        if ge is not None:
            with np.errstate(invalid="ignore"):
                neg = np.isfinite(vals) & (vals < ge)
            self.flag(neg, col, lambda i: f"must be >= {ge:g}, got {self.raw(col, i)!r}")
        if le is not None:
            with np.errstate(invalid="ignore"):
                big = np.isfinite(vals) & (vals > le)
            self.flag(big, col, lambda i: f"implausible: {self.raw(col, i)!r} {le_why or f'> {le:g}'}")
        return vals

    def timestamp(self, col: str, *, fmt: str = "%Y-%m-%d %H:%M:%S", required: bool = True) -> np.ndarray:
        """Seconds since the epoch (float, NaN when empty and not required)."""
        s = self.strings(col)
        empty = s.to_numpy() == ""
        ts = pd.to_datetime(s.where(~empty, None), format=fmt, errors="coerce")
        secs = (ts - pd.Timestamp("1970-01-01")).dt.total_seconds().to_numpy(dtype=float)
        if required:
            self.flag(empty, col, "missing value")
        self.flag(~empty & ~np.isfinite(secs), col,
                  lambda i: f"not a timestamp {fmt!r}: {self.raw(col, i)!r}")
        return secs

    def enum(self, col: str, mapping: Mapping[str, Any], *, normalise: Callable[[str], str] = str,
             required: bool = True) -> pd.Series:
        s = self.strings(col).map(normalise)
        known = s.isin(list(mapping)).to_numpy()
        empty = s.to_numpy() == ""
        if required:
            self.flag(empty, col, "missing value")
        allowed = ", ".join(sorted({str(k) for k in mapping if k != ""}))
        self.flag(~known & ~empty, col, lambda i: f"unknown value {self.raw(col, i)!r} (expected one of {allowed})")
        return s.map(mapping)

    def order(self, earlier: np.ndarray, later: np.ndarray, field: str, message: str) -> None:
        with np.errstate(invalid="ignore"):
            wrong = np.isfinite(earlier) & np.isfinite(later) & (later < earlier)
        self.flag(wrong, field, message)

    def finish(self, on_error: OnError) -> np.ndarray:
        """Raise the first error in fail mode; return the mask of good rows."""
        if self.errors and on_error == "fail":
            raise TraceFormatError(min(self.errors, key=lambda e: e.line))
        return ~self.bad


def raise_or_collect(errors: list[RowError], on_error: OnError) -> None:
    if errors and on_error == "fail":
        raise TraceFormatError(min(errors, key=lambda e: (e.file, e.line)))


def sort_jobs(jobs: list[Job]) -> list[Job]:
    return sorted(jobs, key=attrgetter("submit_time", "id"))


def opt(options: Mapping[str, Any], key: str, default: Any) -> Any:
    return options.get(key, default) if options else default


def csv_header(path: Path) -> list[str]:
    """The first line of a delimited text file split on commas (for format detection)."""
    with open(path, newline="") as fh:
        first = fh.readline()
    return [c.strip() for c in next(csv.reader(io.StringIO(first)), [])]

"""Trace loaders (validated, row-level errors), calibrated synthetic generators, derived workloads.

    from schedmate.traces import load_trace
    t = load_trace("default")                      # embedded demo trace (about 500 jobs)
    t = load_trace("synth:helios:1000:7")          # calibrated synthetic jobs
    t = load_trace("derived:philly:2000:0:50")     # Philly arrivals/GPUs, real durations (needs ../shared)
    t = load_trace("trace.csv", on_error="skip")   # bad rows in t.errors

Formats and mapping decisions: traces/README.md.
"""

from schedmate.traces.base import (
    LoadedTrace,
    Loader,
    RowError,
    TraceFormatError,
    jobs_frame,
    shared_traces_dir,
)
from schedmate.traces.load import DEFAULT_TRACE, load_trace
from schedmate.traces.loaders import LOADERS, detect_format
from schedmate.traces.synth import calibration_report, generate

__all__ = [
    "DEFAULT_TRACE",
    "LOADERS",
    "LoadedTrace",
    "Loader",
    "RowError",
    "TraceFormatError",
    "calibration_report",
    "detect_format",
    "generate",
    "jobs_frame",
    "load_trace",
    "shared_traces_dir",
]

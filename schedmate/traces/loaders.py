"""File loaders, one per trace format, registered in `LOADERS` (name -> loader object).

Every loader validates each row (types, non-negative times, end >= start, GPUs >= 0, known
enums) and reports bad rows as `RowError(file, line, field, message)`; mapping decisions are
documented in `traces/README.md` and on each class.

One module per family: `loader_common` (shared column handling, the generic CSV loader),
`loaders_cluster` (Helios, Acme), `loaders_philly` (Philly, Gavel), `loaders_alibaba` (PAI 2020,
Alibaba 2023); this module keeps the registry and format detection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedmate.traces.base import (
    RowError,
    TraceFormatError,
    csv_header,
)
from schedmate.traces.loader_common import (
    CsvLoader,
    _workload,
)
from schedmate.traces.loaders_alibaba import (
    PAI_COLUMNS,
    Alibaba2023Loader,
    Pai2020Loader,
    _pai_file,
)
from schedmate.traces.loaders_cluster import (
    AcmeLoader,
    HeliosLoader,
)
from schedmate.traces.loaders_philly import (
    GAVEL_COLUMNS,
    GavelLoader,
    PhillyLoader,
    gavel_base_type,
    gavel_steps_per_second,
    gpu_class,
)

LOADERS: dict[str, Any] = {
    ld.name: ld
    for ld in (CsvLoader(), PhillyLoader(), HeliosLoader(), AcmeLoader(), Pai2020Loader(), Alibaba2023Loader(),
               GavelLoader())
}


def detect_format(path: Path) -> str:
    """Guess a file's format from its name, then from its header."""
    name = path.name.lower()
    if path.is_dir():
        if any(path.glob("*.trace")):
            return "gavel"
        if _pai_file(path, "job") is not None:
            return "pai2020"
        raise TraceFormatError(RowError(file=str(path), line=0,
                                        message="cannot tell the format of this directory (no *.trace, no pai_job_table)"))
    if name.endswith((".json", ".jsonl")) or name.startswith("cluster_job_log"):
        return "philly"
    if name.endswith(".trace"):
        return "gavel"
    if name.startswith("pai_"):
        return "pai2020"
    if name.startswith("openb_pod_list"):
        return "alibaba2023"
    if name.startswith(("trace_seren", "trace_kalos")):
        return "acme"
    if name.startswith("cluster_log"):
        return "helios"
    header = set(csv_header(path))
    if {"pod_phase", "creation_time"} <= header:
        return "alibaba2023"
    if {"type", "state", "job_id"} <= header:
        return "acme"
    if {"state", "job_id", "vc"} <= header:
        return "helios"
    if {"id", "submit_time", "duration_s"} <= header:
        return "csv"
    raise TraceFormatError(RowError(file=str(path), line=1, field=None,
                                    message=f"cannot tell the trace format from the name or header; pass fmt= one of "
                                            f"{', '.join(sorted(LOADERS))}"))


__all__ = ["GAVEL_COLUMNS", "LOADERS", "PAI_COLUMNS", "AcmeLoader", "Alibaba2023Loader", "CsvLoader", "GavelLoader", "HeliosLoader", "Pai2020Loader", "PhillyLoader", "_workload", "detect_format", "gavel_base_type", "gavel_steps_per_second", "gpu_class"]

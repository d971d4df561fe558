"""Cluster specs from short strings, for the CLI and the experiments.

SPEC forms:

* `64`, `1024`: that many GPUs in 8-GPU nodes, 16 nodes a rack.
* `nodes=128,gpus=8,rack=16[,type=V100]`: explicit uniform cluster.
* `philly`: the real Philly machine list (552 machines, 2- and 8-GPU) from the shared traces folder,
  racks of 16 machines in list order (the trace does not say which rack a machine is in).
* `alibaba2023`: the GPU nodes of the Alibaba openb 2023 trace (1,213 nodes, 6,212 GPUs, mixed types).
* a CSV path with columns `name,gpus[,gpu_type,rack]`.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

from schedmate.records import ClusterSpec, NetworkSpec, NodeSpec

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_traces_dir() -> Path:
    """Where the real public trace data lives (`../shared/traces` beside the repo unless overridden)."""
    env = os.environ.get("SCHEDMATE_SHARED_TRACES")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "traces"


def parse_cluster(spec: str, network: NetworkSpec | None = None, nodes_per_rack: int = 16) -> ClusterSpec:
    network = network or NetworkSpec()
    spec = spec.strip()
    if spec.isdigit():
        gpus = int(spec)
        if gpus < 8 or gpus % 8:
            raise ValueError(f"cluster spec {spec!r}: a GPU count must be a positive multiple of 8")
        return ClusterSpec.uniform(gpus // 8, 8, nodes_per_rack, network=network)
    if "=" in spec:
        fields: dict[str, str] = {}
        for part in spec.split(","):
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"cluster spec {spec!r}: expected key=value pairs, got {part!r}")
            fields[key.strip()] = value.strip()
        unknown = set(fields) - {"nodes", "gpus", "rack", "type"}
        if unknown:
            raise ValueError(f"cluster spec {spec!r}: unknown keys {sorted(unknown)} (use nodes, gpus, rack, type)")
        try:
            return ClusterSpec.uniform(
                int(fields.get("nodes", "8")),
                int(fields.get("gpus", "8")),
                int(fields.get("rack", str(nodes_per_rack))),
                fields.get("type", "V100"),
                network=network,
            )
        except ValueError as e:
            raise ValueError(f"cluster spec {spec!r}: {e}") from e
    if spec == "philly":
        return _from_rows(_philly_rows(), network, nodes_per_rack)
    if spec == "alibaba2023":
        return _from_rows(_alibaba_rows(), network, nodes_per_rack)
    path = Path(spec)
    if path.is_file():
        return _from_rows(_csv_rows(path), network, nodes_per_rack)
    raise ValueError(
        f"unknown cluster spec {spec!r}: use a GPU count (e.g. 1024), nodes=N,gpus=G,rack=R, "
        "philly, alibaba2023 or a CSV file"
    )


def _from_rows(rows: list[tuple[str, int, str, int | None]], network: NetworkSpec, per_rack: int) -> ClusterSpec:
    nodes = tuple(
        NodeSpec(name=name, gpus=gpus, gpu_type=gtype, rack=rack if rack is not None else i // per_rack)
        for i, (name, gpus, gtype, rack) in enumerate(rows)
        if gpus > 0
    )
    if not nodes:
        raise ValueError("cluster has no GPU nodes")
    return ClusterSpec(nodes=nodes, network=network)


def _need(path: Path) -> Path:
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: set SCHEDMATE_SHARED_TRACES to the shared traces folder")
    return path


def _philly_rows() -> list[tuple[str, int, str, int | None]]:
    path = _need(shared_traces_dir() / "philly" / "cluster_machine_list")
    rows = []
    with path.open() as f:
        reader = csv.reader(f, skipinitialspace=True)
        next(reader)
        for line_no, rec in enumerate(reader, start=2):
            if not rec:
                continue
            try:
                rows.append((rec[0], int(rec[1]), "P100" if int(rec[1]) == 8 else "K80", None))
            except (IndexError, ValueError) as e:
                raise ValueError(f"{path}:{line_no}: bad machine row {rec!r}: {e}") from e
    return rows


def _alibaba_rows() -> list[tuple[str, int, str, int | None]]:
    path = _need(shared_traces_dir() / "alibaba-gpu-v2023" / "csv" / "openb_node_list_gpu_node.csv")
    with path.open() as f:
        return [(r["sn"], int(r["gpu"]), r["model"], None) for r in csv.DictReader(f)]


def _csv_rows(path: Path) -> list[tuple[str, int, str, int | None]]:
    rows = []
    with path.open() as f:
        for line_no, r in enumerate(csv.DictReader(f), start=2):
            try:
                rack = r.get("rack")
                rows.append((r["name"], int(r["gpus"]), r.get("gpu_type") or "V100", int(rack) if rack else None))
            except (KeyError, ValueError) as e:
                raise ValueError(f"{path}:{line_no}: bad node row (need name,gpus[,gpu_type,rack]): {e}") from e
    return rows

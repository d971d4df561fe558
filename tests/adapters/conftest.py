"""Fixtures for the adapter tests: example inputs and a throw-away local Slurm."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import livestack
import localslurm

from adapters.slurm_live.install import install

EXAMPLES = Path(__file__).resolve().parents[2] / "adapters" / "examples"
REFERENCE = Path(__file__).parent / "reference"
NOW = 1_800_000_000.0
"""When the example dumps were taken."""


def compare_with_reference(text: str, name: str) -> None:
    """Like submitit's sbatch tests: the generated commands must equal the committed file.
    SCHEDMATE_UPDATE_REFERENCE=1 rewrites it (then review the diff)."""
    path = REFERENCE / name
    if os.environ.get("SCHEDMATE_UPDATE_REFERENCE") == "1":
        path.write_text(text)
    assert text == path.read_text(), f"plan differs from {path}; rerun with SCHEDMATE_UPDATE_REFERENCE=1 and review"


def require_slurm() -> None:
    missing = localslurm.missing_binaries()
    if missing:
        pytest.skip(f"Slurm not installed (missing {', '.join(missing)}): apt-get install -y slurm-wlm munge")
    if os.geteuid() != 0:
        pytest.skip("a local slurmd must run as root to start jobs")


@pytest.fixture(scope="session")
def local_slurm():
    """A running single-node Slurm; skips when its binaries are missing or we are not root."""
    require_slurm()
    cluster = localslurm.start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def slurm_with_plugin():
    """A local Slurm whose slurmctld runs schedmate's job_submit.lua (skips like local_slurm, or without curl),
    with a second partition `short` (DefaultTime 20 min, MaxTime 45 min). Only the backfill scheduler starts
    jobs here (every second), so the path where a job with a TimeMin starts under it is taken every time."""
    require_slurm()
    if shutil.which("curl") is None:
        pytest.skip("the plugin calls the service with curl: apt-get install -y curl")
    nowhere = Path(os.devnull)
    cluster = localslurm.start(job_submit=lambda d: install(d, "http://127.0.0.1:9", nowhere), extra_conf=(
        "PartitionName=short Nodes=localhost DefaultTime=20 MaxTime=45 State=UP\n"
        "SchedulerParameters=defer,sched_interval=-1,bf_interval=1\n"))
    yield cluster
    cluster.stop()


@pytest.fixture
def slurm_stack(slurm_with_plugin, tmp_path):
    """That Slurm with a fresh annotation service (own database and history) behind its plugin."""
    stack = livestack.start(slurm_with_plugin, tmp_path / "service")
    yield stack
    stack.service.stop()

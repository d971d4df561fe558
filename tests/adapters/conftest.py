"""Fixtures for the adapter tests: example inputs and a throw-away local Slurm."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import localslurm

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


@pytest.fixture(scope="session")
def local_slurm():
    """A running single-node Slurm; skips when its binaries are missing or we are not root."""
    missing = localslurm.missing_binaries()
    if missing:
        pytest.skip(f"Slurm not installed (missing {', '.join(missing)}): apt-get install -y slurm-wlm munge")
    if os.geteuid() != 0:
        pytest.skip("a local slurmd must run as root to start jobs")
    cluster = localslurm.start()
    yield cluster
    cluster.stop()

"""Shared paths for the trace tests: our fixtures, and the real traces in ../shared/traces."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.traces import shared_traces_dir

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "traces" / "fixtures"


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def shared() -> Path:
    """../shared/traces (or $SCHEDMATE_SHARED_TRACES); tests that need it skip when it is absent."""
    d = shared_traces_dir()
    if not d.is_dir():
        pytest.skip(f"real traces not found at {d} (set SCHEDMATE_SHARED_TRACES to the shared/traces folder)")
    return d

"""Shared helpers of the log-monitor tests (a plain module: conftest names clash across folders)."""

from __future__ import annotations

from schedmate.logmon.cli import make_monitor


def report_of(text: str):
    """The rules-only monitor's final report on a whole log text."""
    mon = make_monitor("fixture", use_llm=False)
    mon.feed(text)
    return mon.finish()

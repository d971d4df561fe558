"""Compatibility: the launch parser now lives in `schedmate.codeprof.launch` (one module per family)."""

from schedmate.codeprof.launch import (
    Launch,
    LaunchError,
    Setting,
    combine,
    parse_launch,
    scan_options,
    to_int,
)

__all__ = ["Launch", "LaunchError", "Setting", "combine", "parse_launch", "scan_options", "to_int"]

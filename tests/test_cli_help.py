"""Every command's --help reads as written: docstring paragraphs are rewrapped, never cut mid-line."""

import inspect
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from schedmate.cli import app


def commands() -> list[tuple[list[str], Any]]:
    root = typer.main.get_command(app)
    out: list[tuple[list[str], Any]] = []

    def walk(cmd: Any, path: list[str]) -> None:
        if hasattr(cmd, "commands"):  # a group (typer vendors its own click)
            for name, sub in cmd.commands.items():
                walk(sub, path + [name])
        else:
            out.append((path, cmd))

    walk(root, [])
    return out


def paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n") if p.strip()]


@pytest.mark.parametrize("path,cmd", commands(), ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_each_help_paragraph_is_one_line_on_a_wide_terminal(path, cmd):
    res = CliRunner().invoke(app, path + ["--help"], env={"COLUMNS": "1000", "TERMINAL_WIDTH": "1000"})
    assert res.exit_code == 0, res.output
    lines = [" ".join(line.split()) for line in res.output.splitlines()]
    first = paragraphs(cmd.help or "")[0]
    plain = first.replace("`", "").replace("**", "")
    assert any(plain[:60] in line and line.endswith(plain[-20:]) for line in lines), (path, first)

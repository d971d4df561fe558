"""The state a launcher family works on, and the registry that picks a family by program name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from schedmate.codeprof.launch.model import PYTHONS, Launch, LaunchError
from schedmate.codeprof.reader import Workdir

Handler = Callable[["Ctx", list[str]], bool]
"""A family's handler: reads its options from argv, fills the launch, dispatches what it runs; True when
an entry (script, module or framework command) was found."""

FAMILIES: dict[str, Handler] = {}


def family(*programs: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for p in programs:
            FAMILIES[p] = fn
        return fn

    return register


@dataclass
class Ctx:
    wd: Workdir
    launch: Launch
    where: list[str] = field(default_factory=lambda: ["cmd"])
    """evidence for the command being read: its line and the lines of the variables it used"""
    depth: int = 0

    def dispatch(self, argv: list[str]) -> bool:
        """Hand `argv` to the family of its program (python, torchrun, srun, a wrapper, ...)."""
        if not argv:
            return False
        self.depth += 1
        if self.depth > 12:
            raise LaunchError("launchers nest too deep")
        prog = PurePosixPath(argv[0]).name
        handler = FAMILIES.get(prog)
        if handler is None and PYTHONS.match(prog):
            handler = FAMILIES["python"]
        if handler is None and argv[0].endswith(".py"):
            handler = FAMILIES["<script.py>"]
        if handler is None:
            from schedmate.codeprof.launch.clis import framework_cli

            return framework_cli(self, argv)
        return handler(self, argv)

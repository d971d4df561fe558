"""The log writer (rank prefixes, ANSI colours, timestamps, tqdm bars) and the base class of a framework's log style."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime

ANSI = {"green": "\x1b[32m", "yellow": "\x1b[33m", "red": "\x1b[31m", "blue": "\x1b[34m", "reset": "\x1b[0m"}


@dataclass
class Writer:
    rng: random.Random
    prefix: str  # "", "rank", "srun", "mpi"
    ansi: bool
    t: float
    nranks: int = 8
    parts: list[str] = field(default_factory=list)
    n: int = 0

    def _pfx(self, rank: int) -> str:
        if self.prefix == "rank":
            return f"[rank{rank}]:"
        if self.prefix == "srun":
            return f"{rank}: "
        if self.prefix == "mpi":
            return f"[1,{rank}]<stdout>:"
        return ""

    def line(self, text: str, rank: int = 0) -> int:
        self.parts.append(self._pfx(rank) + text + "\n")
        self.n += 1
        return self.n

    def color(self, text: str, c: str) -> str:
        return f"{ANSI[c]}{text}{ANSI['reset']}" if self.ansi else text

    def text(self) -> str:
        return "".join(self.parts)


def iso(t: float, sep: str = " ", ms: bool = True, comma: bool = True) -> str:
    d = datetime.fromtimestamp(t, tz=UTC)
    s = d.strftime(f"%Y-%m-%d{sep}%H:%M:%S")
    if ms:
        s += ("," if comma else ".") + f"{int((t % 1) * 1000):03d}"
    return s


def tqdm_bar(step: int, total: int, elapsed: float, rate: float, prefix: str = "", extra: str = "") -> str:
    pct = int(100 * step / total)
    filled = int(10 * step / total)
    bar = "█" * filled + " " * (10 - filled)
    def mmss(x: float) -> str:
        x = int(x)
        return f"{x // 3600:d}:{x // 60 % 60:02d}:{x % 60:02d}" if x >= 3600 else f"{x // 60:02d}:{x % 60:02d}"
    remain = (total - step) / rate if rate > 0 else 0
    r = f"{rate:.2f}it/s" if rate >= 1 else f"{1 / rate:.2f}s/it"
    return f"{prefix}{pct:3d}%|{bar}| {step}/{total} [{mmss(elapsed)}<{mmss(remain)}, {r}{extra}]"


# ----------------------------------------------------------------------------------------- frameworks
class Framework:
    name = "base"
    per_epoch = False
    timestamps = False
    log_every = 10
    epoch_base = 0

    def __init__(self, rng: random.Random, w: Writer, total: int, it: float, epochs: int = 1) -> None:
        self.rng, self.w, self.total, self.it, self.epochs = rng, w, total, it, epochs
        self.loss = rng.uniform(6.0, 10.0)
        self.lr = rng.choice([1e-4, 3e-4, 6e-4, 2e-5, 5e-5])
        self.start_t = w.t
        self.epoch = epoch_base = self.epoch_base
        self.epoch = epoch_base
        self.last_step = 0

    def ts(self) -> str:
        return ""

    def next_loss(self, nan: bool = False, spike: bool = False) -> float:
        if nan:
            return float("nan")
        if spike:
            return self.rng.uniform(2e4, 9e4)
        self.loss = max(0.5, self.loss * self.rng.uniform(0.97, 1.0))
        return self.loss

    def header(self) -> None: ...

    def progress(self, step: int, loss: float) -> int:
        raise NotImplementedError

    def eval(self) -> None:
        self.w.line(self.ts() + "Running evaluation ...")

    def ckpt(self, step: int) -> None:
        self.w.line(self.ts() + f"Saving checkpoint to /ckpt/step_{step}")

    def done(self) -> None:
        self.w.line(self.ts() + "Training completed.")

    def label_step(self, step: int) -> int:
        return step

    def label_epoch(self) -> float | None:
        return None


def fmt_loss(x: float, spec: str = ".4f") -> str:
    return "nan" if math.isnan(x) else format(x, spec)

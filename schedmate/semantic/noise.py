"""What real clusters add on top of the semantic templates, and the calibrated amount of it.

`SemanticNoise` holds the knobs, `CALIBRATED_NOISE` their values derived from real data by
`eval/realjobs/calibrate.py` (sources and derivations in traces/semantic/README.md), and `hide_length`
rewrites a rendered workdir so that its configured length comes from an environment variable set at
submission, which no reader of the workdir can resolve (the logs still print it, as real ones do).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

EARLY_STOP_SHARE = 0.25
"""Share of completed jobs that end before their configured steps (documented in traces/semantic/README.md)."""
EARLY_STOP_FRACTION = (0.3, 0.9)
"""Where in the planned run an early-stopped job ends (uniform)."""


PLAIN_ITER_SPREAD = (0.8, 1.25)
"""The plain augmentation draws each job's nominal iteration time as the template's x U(0.8, 1.25)."""


def _log_uniform_sd(lo: float, hi: float) -> float:
    """Standard deviation of ln X for X ~ U(lo, hi)."""
    def f1(x: float) -> float:
        return x * math.log(x) - x

    def f2(x: float) -> float:
        return x * math.log(x) ** 2 - 2 * x * math.log(x) + 2 * x

    m1 = (f1(hi) - f1(lo)) / (hi - lo)
    m2 = (f2(hi) - f2(lo)) / (hi - lo)
    return math.sqrt(max(0.0, m2 - m1 * m1))


PLAIN_ITER_SIGMA = _log_uniform_sd(*PLAIN_ITER_SPREAD)
"""Between-job sigma of log iteration time that the plain augmentation already has (0.128)."""


@dataclass(frozen=True)
class SemanticNoise:
    """What real clusters add on top of the templates, where a template's iteration time and a job's
    configured steps would otherwise fix its duration almost exactly. Scale with `scaled(k)`: 0 is the
    plain augmentation, 1 the calibrated defaults (`CALIBRATED_NOISE`, sources in traces/semantic/README.md),
    2 twice as much."""

    iter_time_sigma: float = 0.0
    """log-normal sigma of a job's real iteration time around what its template and size imply, added to
    the plain U(0.8, 1.25) spread: data, sequence lengths, input pipelines, node health differ between jobs"""
    stop_early_share: float = 0.0
    """added share of completed jobs whose run ends before the configured steps or epochs (the user stops a
    run that is good enough, or runs until the time limit): their configured length overshoots"""
    stop_early_fraction: tuple[float, float] = EARLY_STOP_FRACTION
    """where in the configured run such a job ends (uniform)"""
    no_length_share: float = 0.0
    """share of jobs whose workdir states no length a reader can resolve: the step or epoch count comes
    from an environment variable set at submission (`hide_length`); the log still prints it"""
    iter_time_total: float | None = None
    """when set: the between-job sigma of log iteration time the augmentation should have in all (the
    plain spread included), so the added sigma is sqrt(total^2 - PLAIN_ITER_SIGMA^2) (0 when the plain
    spread already reaches it); `iter_time_sigma` is then ignored"""

    @property
    def added_iter_sigma(self) -> float:
        """The log-normal sigma the augmentation multiplies into each job's nominal iteration time."""
        if self.iter_time_total is None:
            return self.iter_time_sigma
        return math.sqrt(max(0.0, self.iter_time_total ** 2 - PLAIN_ITER_SIGMA ** 2))

    def scaled(self, k: float) -> SemanticNoise:
        """k times the noise: every share and sigma (for `iter_time_total`, the total dispersion) times k."""
        if k < 0 or not math.isfinite(k):
            raise ValueError(f"semantic noise scale must be a finite number >= 0, got {k}")
        return SemanticNoise(iter_time_sigma=self.iter_time_sigma * k,
                             stop_early_share=min(1.0 - EARLY_STOP_SHARE, self.stop_early_share * k),
                             stop_early_fraction=self.stop_early_fraction,
                             no_length_share=min(1.0, self.no_length_share * k),
                             iter_time_total=None if self.iter_time_total is None else self.iter_time_total * k)


CALIBRATED_NOISE = SemanticNoise(
    iter_time_total=0.113,
    stop_early_share=0.117,
    stop_early_fraction=(0.07, 0.49),
    no_length_share=0.062,
)
"""Derived from real data by `python -m eval.realjobs.calibrate` (observations and their sources in
eval/realjobs/calibration/; derivations in traces/semantic/README.md): iteration-time dispersion between
MLPerf systems running one benchmark on one GPU count; user cancellations among non-failed jobs in the
Helios, Philly and Acme summaries; where committed logs of stopped runs end; code-corpus scripts that
state no length. `tests/semantic/test_semantic_noise.py` checks these equal what calibrate.py derives."""


LENGTH_ENV = "TRAIN_LENGTH"
"""The environment variable a length-hidden job reads its step or epoch count from."""

_FLAG = re.compile(r"(--(?:max[-_]steps|max-update|train-iters|epochs|max_epochs))([ =])(\d+)(?=\s|$)", re.MULTILINE)
_ASSIGN = re.compile(r"^(max_iters|max_epochs)\s*=\s*\d+\s*$", re.MULTILINE)
_TOML_STEPS = re.compile(r"^steps = \d+\n", re.MULTILINE)


def hide_length(files: dict[str, str]) -> dict[str, str]:
    """The same workdir with its configured length taken from `$TRAIN_LENGTH` (set by the submitter, absent
    from the workdir): a length flag on the command line or in a launch script gets `${TRAIN_LENGTH}`, a
    Python config `int(os.environ["TRAIN_LENGTH"])`, a TOML config loses its `steps` for a command-line
    override. Raises ValueError when the files state no length this knows how to hide."""
    out: dict[str, str] = {}
    hidden = 0
    override = ""
    for path, text in files.items():
        new, n = _FLAG.subn(rf"\1\2${{{LENGTH_ENV}}}", text)
        if path.endswith(".py"):
            new, m = _ASSIGN.subn(rf'\1 = int(os.environ["{LENGTH_ENV}"])', new)
            if m:
                new = "import os\n" + re.sub(r"^lr_decay_iters = \d+$", "lr_decay_iters = max_iters", new, flags=re.MULTILINE)
            n += m
        elif path.endswith(".toml"):
            new, m = _TOML_STEPS.subn("", new)
            if m:
                override = f" --training.steps ${{{LENGTH_ENV}}}"
            n += m
        out[path] = new
        hidden += n
    if not hidden:
        raise ValueError("no configured length found to hide in: " + ", ".join(sorted(files)))
    if override:
        out["command.txt"] = out["command.txt"].rstrip("\n") + override + "\n"
    return out


__all__ = ["CALIBRATED_NOISE", "EARLY_STOP_FRACTION", "EARLY_STOP_SHARE", "LENGTH_ENV", "PLAIN_ITER_SIGMA",
           "PLAIN_ITER_SPREAD", "SemanticNoise", "hide_length"]

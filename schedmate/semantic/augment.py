"""`augment(jobs, root, seed)`: give every trace job a template, a workdir and a plan for its log.

Per job (seeded by `(seed, job id)`, so one job's draw does not depend on the others except through its
user's history):

1. **Template**: one that fits the job's GPU count and its kind (Acme `job_type`, or `eval`/`debug` in
   the name), then its workload class (the trace's, e.g. Gavel job types; otherwise drawn from
   `schedmate.workloads.DEFAULT_MIX`). Relaxed in that order when nothing fits; the catch-all
   (`srun_generic_ddp`) runs on any GPU count, the CPU template takes 0-GPU jobs. The job's
   `workload`/`spread_slowdown` are set from the template's class.
2. **Resubmission**: with probability `RESUBMIT_SHARE`, a job whose user submitted a fitting job before
   reuses that job's template and settings with a small edit (learning rate, steps), `variant` + 1.
3. **Runtime fit**: the configured steps x the nominal iteration time (plus start-up, warm-up, eval and
   checkpoint pauses) equal the job's *planned* runtime: its trace duration for a completed job, longer
   for jobs that end early: `EARLY_STOP_SHARE` of completed jobs stop early (early stopping or the user
   ending a run that is good enough), failed, cancelled and timed-out jobs end before their configured
   steps. The trace duration stays the truth the simulator replays.
4. **Failures**: failed jobs without a category from the trace draw one from `FAILURE_MIX`; hung jobs get
   `hang_onset_s` before their trace end.

Files: `root/<job>/` (the workdir: scripts, configs, `command.txt`), `root/_plans/<job>.json` (what the
log writer needs) and the log at `root/_logs/<job>.log` (written during a replay by
`schedmate.semantic.logs`). Plans and logs live outside the workdir so the code analyzer never reads them.
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from schedmate.records import FailureCategory, Job, Outcome, SemanticRefs
from schedmate.semantic.catalogue import (
    CATCH_ALL,
    CPU_TEMPLATE,
    TEMPLATES,
    Params,
    Template,
    default_params,
    layout,
    templates_for,
)
from schedmate.semantic.noise import (
    CALIBRATED_NOISE,
    EARLY_STOP_FRACTION,
    EARLY_STOP_SHARE,
    PLAIN_ITER_SPREAD,
    SemanticNoise,
    hide_length,
)
from schedmate.workloads import CATALOGUE, sample_workload

FAILED_FRACTION = (0.05, 0.95)
CANCELLED_FRACTION = (0.1, 0.95)
TIMEOUT_FRACTION = (0.4, 0.9)
HANG_ONSET_FRACTION = (0.3, 0.9)
"""A hung job stops progressing at this fraction of its trace duration (the trace end is the kill)."""
RESUBMIT_SHARE = 0.35
"""Probability that a job of a user with an earlier fitting job is an edited resubmission of it."""

FAILURE_MIX: dict[str, float] = {
    "user_code": 0.36,
    "oom": 0.14,
    "other": 0.10,
    "nccl": 0.10,
    "node": 0.08,
    "hang": 0.07,
    "dataloader": 0.06,
    "segfault": 0.05,
    "nan": 0.04,
}
"""Failure categories of failed jobs (see traces/semantic/README.md for the sources and their limits)."""

ACME_KINDS: dict[str, set[str]] = {
    "pretrain": {"pretrain"},
    "sft": {"sft"},
    "mllm": {"mllm"},
    "eval": {"eval"},
    "debug": {"debug"},
    "other": {"train", "sft", "pretrain"},
}
TRAINING_KINDS = {"train", "pretrain", "sft", "mllm"}
LOG_LINES_TARGET = 2000
"""Progress lines per job are kept near this by raising the logging interval of very long runs..."""
MAX_LOG_GAP_S = 1800.0
"""...as long as progress lines stay at most about this far apart (nominal speed); the log monitor
scales its hang threshold with the gap between progress lines, so a quiet log is not a hung one."""


@dataclass
class Plan:
    """Everything the log writer needs about one augmented job (JSON in `root/_plans/`)."""

    job_id: str
    template: str
    params: dict
    outcome: str
    duration_s: float
    planned_s: float
    """Runtime the configured steps would take on a consolidated placement."""
    startup_s: float
    iter_s: float
    warmup_steps: int
    eval_pause_s: float
    ckpt_pause_s: float
    early_stop: bool = False
    failure_category: str | None = None
    failure_variant: int = 0
    hang_onset_s: float | None = None
    log_seed: int = 0
    base_job: str | None = None
    workdir: str = ""
    log_path: str = ""
    expected: dict = field(default_factory=dict)

    @property
    def p(self) -> Params:
        return Params(**self.params)

    def work_at_step(self, s: int) -> float:
        """Consolidated seconds after which step `s` is complete (pauses after earlier steps included)."""
        p = self.params
        if s <= 0:
            return self.startup_s
        pauses = 0.0
        if p["eval_every"]:
            pauses += ((s - 1) // p["eval_every"]) * self.eval_pause_s
        if p["ckpt_every"]:
            pauses += ((s - 1) // p["ckpt_every"]) * self.ckpt_pause_s
        return self.startup_s + (s + min(s, self.warmup_steps)) * self.iter_s + pauses

    def step_at_work(self, w: float) -> int:
        """Steps complete after `w` consolidated seconds (1 us tolerance for rounding)."""
        w += 1e-6
        lo, hi = 0, int(self.params["steps"])
        if self.work_at_step(hi) <= w:
            return hi
        while lo < hi:  # largest s with work_at_step(s) <= w
            mid = (lo + hi + 1) // 2
            if self.work_at_step(mid) <= w:
                lo = mid
            else:
                hi = mid - 1
        return lo


def safe_name(job_id: str) -> str:
    s = re.sub(r"\.{2,}", "_", re.sub(r"[^A-Za-z0-9._-]", "_", job_id))
    if s != job_id or s in (".", "..") or s.startswith("_"):
        s = f"j{s}-{abs(hash_str(job_id)) % 10**8:08d}"
    return s


def hash_str(s: str) -> int:
    """A stable (process-independent) hash."""
    h = 1469598103934665603
    for b in s.encode():
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def job_kinds(job: Job) -> set[str] | None:
    """Kinds a job can be, from its trace type or name; None when the trace says nothing."""
    jt = (job.job_type or "").strip().lower()
    if jt in ACME_KINDS:
        return set(ACME_KINDS[jt])
    name = (job.name or "").lower()
    if re.search(r"(^|[^a-z])(eval|evaluate|validation|benchmark)([^a-z]|$)", name):
        return {"eval"}
    if re.search(r"(^|[^a-z])(debug|smoke|test)([^a-z]|$)", name):
        return {"debug"}
    if "sft" in name or "finetune" in name or "fine-tune" in name:
        return {"sft"}
    if "pretrain" in name:
        return {"pretrain"}
    return None


def choose_template(job: Job, rng: random.Random) -> Template:
    g = job.num_gpus
    if g == 0:
        return TEMPLATES[CPU_TEMPLATE]
    kinds = job_kinds(job)
    workload = job.workload
    if workload is None or workload not in CATALOGUE:
        workload = sample_workload(rng, g).name
    if kinds == {"pretrain"} and (job.job_type or "").lower() == "pretrain":
        workload = "gpt"  # Acme `Pretrain` is LLM pre-training (as the Acme loader maps it)
    tries: list[tuple[set[str] | None, str | None]] = []
    if kinds is not None:
        tries += [(kinds, workload), (kinds, None)]
        if kinds == {"mllm"}:  # a multimodal job that no MLLM template fits: an SFT template
            tries.append(({"sft"}, None))
        if not kinds & {"eval", "debug"}:
            tries.append((TRAINING_KINDS, None))
    else:
        tries += [(TRAINING_KINDS, workload), (TRAINING_KINDS, None)]
    for ks, wl in tries:
        cands = templates_for(g, ks, wl)
        if cands:
            return cands[rng.randrange(len(cands))]
    return TEMPLATES[CATCH_ALL]


def _nice_floor(x: float) -> int:
    """Largest 1, 2 or 5 x 10^k not above x (at least 1)."""
    if x < 2:
        return 1
    k = 10 ** math.floor(math.log10(x))
    return max(m * k for m in (1, 2, 5) if m * k <= x)


def _nice(n: int) -> int:
    """Round a logging interval up to 1, 2 or 5 x 10^k."""
    if n <= 1:
        return 1
    k = 10 ** math.floor(math.log10(n))
    for m in (1, 2, 5, 10):
        if m * k >= n:
            return m * k
    return 10 * k


def fit_plan(t: Template, job: Job, planned_s: float, rng: random.Random, base: Params | None,
             catch_all_arch: str = "resnet50", iter_factor: float = 1.0) -> tuple[Params, dict]:
    """Parameters and timing so that the configured run takes `planned_s` consolidated seconds.
    `iter_factor`: this job's real iteration time relative to its template's (semantic noise)."""
    F = max(planned_s, 1.0)
    short = F < 600
    startup = min(120.0, max(2.0, 0.04 * F)) * rng.uniform(0.8, 1.2)
    iter_s = t.iter_s * rng.uniform(*PLAIN_ITER_SPREAD) * iter_factor
    n_evals = 0 if short or "eval" in t.kinds else int(min(10, max(1, F // 3600)))
    eval_pause = rng.uniform(20, 90) if n_evals else 0.0
    ckpt_pause = rng.uniform(10, 45) if n_evals else 0.0
    n_ckpts = (n_evals + 1) // 2 if n_evals else 0
    budget = F - startup - n_evals * eval_pause - n_ckpts * ckpt_pause
    if budget < 0.5 * F:  # pauses too long for this run: drop them
        n_evals = n_ckpts = 0
        eval_pause = ckpt_pause = 0.0
        startup = min(startup, 0.2 * F)
        budget = F - startup
    min_steps = 20
    steps = max(min_steps, round(budget / iter_s))
    p = default_params(t, job.num_gpus, steps, seed=rng.randrange(1 << 30))
    if base is not None:  # a resubmission: the user's earlier settings, a changed lr, new steps
        p = replace(base, num_gpus=p.num_gpus, nodes=p.nodes, gpus_per_node=p.gpus_per_node, steps=p.steps,
                    epochs=p.epochs, steps_per_epoch=p.steps_per_epoch, log_every=p.log_every, seed=p.seed,
                    lr=float(f"{base.lr * rng.choice([0.5, 0.7, 1.5, 2.0]):.2g}") or base.lr,
                    variant=base.variant + 1)
    log_every = p.log_every
    if p.steps // max(1, log_every) > LOG_LINES_TARGET:
        log_every = _nice(math.ceil(p.steps / LOG_LINES_TARGET))
        # but at most ~MAX_LOG_GAP_S between progress lines (a quiet log looks hung)
        log_every = max(p.log_every, min(log_every, _nice_floor(MAX_LOG_GAP_S / iter_s)))
        if t.per_epoch and p.steps_per_epoch:
            log_every = min(log_every, p.steps_per_epoch)
    eval_every = ckpt_every = 0
    if n_evals:
        if t.per_epoch and p.steps_per_epoch:
            eval_every = p.steps_per_epoch
            n_evals = max(1, p.steps // eval_every - 1)
            eval_pause = min(eval_pause, 0.02 * F / n_evals)
            ckpt_every = eval_every
            ckpt_pause = min(ckpt_pause, 0.01 * F / n_evals)
        else:
            eval_every = max(log_every, (p.steps // (n_evals + 1)) // log_every * log_every)
            ckpt_every = eval_every * 2
    if job.num_gpus and t.name == CATCH_ALL:
        p = replace(p, arch=catch_all_arch)
    p = replace(p, log_every=log_every, eval_every=eval_every, ckpt_every=ckpt_every)
    warm = min(p.log_every, p.steps)
    evals = (p.steps - 1) // eval_every if eval_every else 0
    ckpts = (p.steps - 1) // ckpt_every if ckpt_every else 0
    rest = F - startup - evals * eval_pause - ckpts * ckpt_pause
    if rest <= 0:
        eval_pause = ckpt_pause = 0.0
        startup = min(startup, 0.2 * F)
        rest = F - startup
    iter_s = rest / (p.steps + warm)
    timing = {"startup_s": startup, "iter_s": iter_s, "warmup_steps": warm, "eval_pause_s": eval_pause,
                  "ckpt_pause_s": ckpt_pause}
    return p, timing


def _planned(job: Job, rng: random.Random, noise: SemanticNoise | None = None,
             noise_rng: random.Random | None = None) -> tuple[float, bool]:
    """(planned full runtime, stopped early?) for a job whose trace duration is `job.duration_s`."""
    d = job.duration_s
    if job.outcome is Outcome.completed:
        if rng.random() < EARLY_STOP_SHARE:
            return d / rng.uniform(*EARLY_STOP_FRACTION), True
        # a separate stream, so that noise 0 gives exactly the plain augmentation
        if (noise is not None and noise.stop_early_share > 0 and noise_rng is not None
                and noise_rng.random() < noise.stop_early_share / (1.0 - EARLY_STOP_SHARE)):
            return d / noise_rng.uniform(*noise.stop_early_fraction), True
        return d, False
    lo, hi = {Outcome.failed: FAILED_FRACTION, Outcome.cancelled: CANCELLED_FRACTION,
              Outcome.timeout: TIMEOUT_FRACTION}[job.outcome]
    return d / rng.uniform(lo, hi), False


def _draw_failure(rng: random.Random) -> FailureCategory:
    names = list(FAILURE_MIX)
    return FailureCategory(rng.choices(names, weights=[FAILURE_MIX[n] for n in names], k=1)[0])


def plan_path(root: Path, job_id: str) -> Path:
    return Path(root) / "_plans" / f"{safe_name(job_id)}.json"


def load_plan(path_or_job: Path | str | Job) -> Plan:
    """The plan of an augmented job (by Job, or the plan file's path)."""
    if isinstance(path_or_job, Job):
        sem = path_or_job.semantic
        if sem is None or sem.workdir is None:
            raise ValueError(f"job {path_or_job.id!r} was not augmented (no semantic.workdir)")
        wd = Path(sem.workdir)
        path = wd.parent / "_plans" / f"{wd.name}.json"
    else:
        path = Path(path_or_job)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no augmentation plan (run schedmate.semantic.augment first)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: line {e.lineno}: not valid JSON: {e.msg}") from e
    try:
        return Plan(**data)
    except TypeError as e:
        raise ValueError(f"{path}: not an augmentation plan: {e}") from e


def materialize(plan: Plan) -> Path:
    """Write a plan's workdir (idempotent); returns it."""
    wd = Path(plan.workdir)
    files = TEMPLATES[plan.template].render(plan.p)
    _write_files(wd, hide_length(files) if length_hidden(plan) else files)
    return wd


def length_hidden(plan: Plan) -> bool:
    """Whether the job's workdir takes its length from `$TRAIN_LENGTH` (semantic noise `no_length_share`):
    every template states steps or epochs, so a plan expecting neither is one whose length was hidden."""
    return plan.expected.get("train_steps") is None and plan.expected.get("epochs") is None


def _write_files(wd: Path, files: dict[str, str]) -> None:
    made: set[Path] = set()
    for rel, text in files.items():
        f = wd / rel
        if f.parent not in made:
            f.parent.mkdir(parents=True, exist_ok=True)
            made.add(f.parent)
        f.write_text(text)


def augment(jobs: list[Job], root: Path, seed: int, write: bool = True,
            noise: SemanticNoise | None = None) -> list[Job]:
    """Augmented copies of `jobs` (same order). `write=False` writes only the plans; call
    `materialize(load_plan(job))` to write a workdir when it is needed (lazy mode). `noise`: what real
    clusters add (see `SemanticNoise`; None or zero: the plain augmentation)."""
    root = Path(root).resolve()
    (root / "_plans").mkdir(parents=True, exist_ok=True)
    (root / "_logs").mkdir(parents=True, exist_ok=True)
    order = sorted(range(len(jobs)), key=lambda i: (jobs[i].submit_time, jobs[i].id))
    history: dict[str, list[tuple[Template, Params, str]]] = {}
    out: list[Job | None] = [None] * len(jobs)
    seen: set[str] = set()
    for i in order:
        job = jobs[i]
        if job.id in seen:
            raise ValueError(f"duplicate job id {job.id!r}: ids must be unique to augment")
        seen.add(job.id)
        rng = random.Random(f"semantic:{seed}:{job.id}")
        kinds = job_kinds(job)
        base: tuple[Template, Params, str] | None = None
        prior = history.get(job.user or "", []) if job.user else []
        if prior and job.num_gpus > 0 and rng.random() < RESUBMIT_SHARE:
            fitting = [h for h in prior[-5:] if h[0].fits(job.num_gpus) and h[0].name != CATCH_ALL
                       and (kinds is None or h[0].kinds & kinds)]
            if fitting:
                base = fitting[rng.randrange(len(fitting))]
        t = base[0] if base is not None else choose_template(job, rng)
        noise_rng = random.Random(f"semantic-noise:{seed}:{job.id}") if noise is not None else None
        planned, early = _planned(job, rng, noise, noise_rng)
        iter_factor = 1.0
        if noise is not None and noise.added_iter_sigma > 0 and noise_rng is not None:
            iter_factor = math.exp(noise_rng.gauss(0.0, noise.added_iter_sigma))
        workload = t.workload
        if t.name == CATCH_ALL:
            workload = job.workload if job.workload in CATALOGUE else "resnet50"
        arch = {"resnet18": "resnet18", "imagenet-small-batch": "mobilenet_v3_large"}.get(workload or "", "resnet50")
        params, timing = fit_plan(t, job, planned, rng, base[1] if base else None, catch_all_arch=arch,
                                  iter_factor=iter_factor)
        category = job.failure_category
        hang = job.hang_onset_s
        if job.outcome is Outcome.failed and category is None:
            category = _draw_failure(rng)
        if category is FailureCategory.hang and hang is None:
            hang = job.duration_s * rng.uniform(*HANG_ONSET_FRACTION)
        name = safe_name(job.id)
        wd = root / name
        log = root / "_logs" / f"{name}.log"
        expected = t.expected(params)
        hide = (noise is not None and noise.no_length_share > 0
                and random.Random(f"semantic-noise-length:{seed}:{job.id}").random() < noise.no_length_share)
        if hide:
            expected.update(train_steps=None, epochs=None)
        plan = Plan(job_id=job.id, template=t.name, params=asdict(params), outcome=job.outcome.value,
                    duration_s=job.duration_s, planned_s=planned, early_stop=early,
                    failure_category=category.value if category else None, failure_variant=rng.randrange(1000),
                    hang_onset_s=hang, log_seed=rng.randrange(1 << 30), base_job=base[2] if base else None,
                    workdir=str(wd), log_path=str(log), expected=expected, **timing)
        plan_path(root, job.id).write_text(json.dumps(asdict(plan), sort_keys=True))
        files = hide_length(t.render(params)) if hide else t.render(params)
        if write:
            _write_files(wd, files)
        command = files["command.txt"].strip()
        if job.user and job.num_gpus > 0:
            history.setdefault(job.user, []).append((t, params, job.id))
        update: dict = {
            "semantic": SemanticRefs(workdir=str(wd), command=command, log_source=str(log), template=t.name),
            "failure_category": category,
            "hang_onset_s": hang,
        }
        if workload is not None:
            update["workload"] = workload
            update["spread_slowdown"] = CATALOGUE[workload].spread_slowdown
        elif job.num_gpus == 0:
            update["spread_slowdown"] = 1.0
        out[i] = job.model_copy(update=update)
    return [j for j in out if j is not None]


__all__ = [
    "CALIBRATED_NOISE",
    "EARLY_STOP_SHARE",
    "FAILURE_MIX",
    "RESUBMIT_SHARE",
    "Plan",
    "SemanticNoise",
    "augment",
    "choose_template",
    "fit_plan",
    "job_kinds",
    "layout",
    "length_hidden",
    "load_plan",
    "materialize",
    "plan_path",
    "safe_name",
]

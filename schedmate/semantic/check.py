"""Agreement of our readers with the augmentation's ground truth.

* `check_code(job)`: the code analyzer's static pass (`analyze_code(..., use_llm=False)`) on the job's
  workdir vs the plan's expected GPUs, nodes, steps/epochs.
* `check_log(job)`: the log monitor (rules only) on the job's simulator-written log vs what the plan says
  the log holds: last step (as the framework counts it), total steps, iteration time (within 20 % of the
  nominal iteration time / the job's mean speed) and failure category.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from schedmate.records import Job
from schedmate.semantic.augment import Plan, load_plan
from schedmate.semantic.catalogue import TEMPLATES

PER_EPOCH_STYLES = {"lightning", "mmengine", "timm"}
NO_TOTAL_STYLES = {"deepspeed", "nanogpt"}
"""These frameworks never print the total step count."""


@dataclass
class Agreement:
    job_id: str
    template: str
    fields: dict[str, tuple[object, object]] = field(default_factory=dict)
    """name -> (expected, got)."""
    ok: dict[str, bool] = field(default_factory=dict)

    @property
    def all_ok(self) -> bool:
        return all(self.ok.values())


def check_code(job: Job) -> Agreement:
    from schedmate.codeprof.analyzer import analyze_code

    plan = load_plan(job)
    prof = analyze_code(plan.workdir, None, use_llm=False).to_contract()
    a = Agreement(job.id, plan.template)
    for k, exp in plan.expected.items():
        got = prof.get(k)
        a.fields[k] = (exp, got)
        a.ok[k] = exp == got
    return a


def expected_log(plan: Plan) -> dict[str, object]:
    """What the log of a job that ran its whole trace duration shows at its end."""
    p = plan.params
    stop = plan.duration_s if plan.hang_onset_s is None else min(plan.duration_s, plan.hang_onset_s)
    s = plan.step_at_work(stop)
    total = int(p["steps"])
    le = int(p["log_every"])
    last = s if s == total else s // le * le
    style = TEMPLATES[plan.template].style
    exp: dict[str, object] = {"category": plan.failure_category or "none"}
    if plan.outcome != "failed":
        exp["category"] = "preempted" if plan.outcome == "timeout" else "none"
    if style in PER_EPOCH_STYLES:
        spe = int(p["steps_per_epoch"] or total)
        within = (last - 1) % spe + (0 if style == "timm" else 1) if last else None
        exp["current_step"] = within
        exp["total_steps"] = spe if last else None  # printed on progress lines only
    else:
        exp["current_step"] = last or None
        exp["total_steps"] = None if style in NO_TOTAL_STYLES else total
    return exp


def check_log(job: Job, mean_speed: float = 1.0, text: str | None = None) -> Agreement:
    """`mean_speed`: the job's consolidated work per wall second over its run (1.0 when it ran alone on
    one node); the expected iteration time is the plan's nominal one divided by it."""
    from schedmate.logmon import Monitor

    plan = load_plan(job)
    if text is None:
        text = Path(plan.log_path).read_text(encoding="utf-8")
    mon = Monitor()
    mon.feed(text)
    rep = mon.finish()
    exp = expected_log(plan)
    a = Agreement(job.id, plan.template)
    got_cat = rep.failure.category.value
    a.fields["category"] = (exp["category"], got_cat)
    hang_gap = None
    if plan.failure_category == "hang" and plan.hang_onset_s is not None:
        hang_gap = (plan.duration_s - plan.hang_onset_s) / mean_speed
    if hang_gap is None or hang_gap >= max(20 * plan.iter_s / mean_speed, 300.0) + 600.0:
        a.ok["category"] = exp["category"] == got_cat
    # else: the job was killed too soon after it hung for any reader to call it a hang: not scored
    a.fields["current_step"] = (exp["current_step"], rep.progress.current_step)
    a.ok["current_step"] = exp["current_step"] == rep.progress.current_step
    a.fields["total_steps"] = (exp["total_steps"], rep.progress.total_steps)
    a.ok["total_steps"] = exp["total_steps"] == rep.progress.total_steps
    n_lines = (exp["current_step"] or 0) // max(1, int(plan.params["log_every"]))
    if n_lines >= 3 and n_lines * int(plan.params["log_every"]) * plan.iter_s >= 10:  # a few lines over >= 10 s
        want = plan.iter_s / mean_speed
        got = rep.progress.iteration_time_s
        a.fields["iteration_time_s"] = (round(want, 4), got)
        a.ok["iteration_time_s"] = got is not None and abs(got - want) <= 0.2 * want
    return a


__all__ = ["Agreement", "check_code", "check_log", "expected_log"]

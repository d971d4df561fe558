"""Annotators that follow running jobs (log monitors) update annotations and can end dead jobs."""

from helpers import cluster, ends, job
from pytest import approx

from schedmate.annotators.builtin import NoAnnotator
from schedmate.policies import build_scheduler
from schedmate.records import Annotation, DurationEstimate
from schedmate.sim.engine import ReplayConfig, Simulator


class HangWatcher(NoAnnotator):
    """Ends a job at the first look after it stopped progressing; reports remaining time otherwise."""

    monitor_interval_s = 60.0

    def __init__(self) -> None:
        self.looks = 0

    def on_running(self, sim, js, now):
        self.looks += 1
        onset = js.job.hang_onset_s
        if onset is not None and js.work_done >= onset:
            sim.terminate(js, now, reason="signal")
            return None
        return Annotation(job_id=js.job.id, made_at=now, predicted_remaining_s=js.work_total - js.work_done,
                          predicted_duration=DurationEstimate.point(js.work_total))


def test_a_hung_job_is_ended_at_the_first_look_after_its_hang_instead_of_at_its_trace_end():
    """The trace says the job ran 1,000 s, but it hung after 130 s: looks at 60, 120, 180 -> ended at 180."""
    hung = job("h", 0, 1, 1000, hang_onset_s=130)
    watcher = HangWatcher()
    sim = Simulator([hung, job("next", 10, 1, 50)], cluster(1, 1), build_scheduler("fifo"), watcher,
                    ReplayConfig(audit=True)).run()
    assert ends(sim) == {"h": approx(180), "next": approx(230)}
    assert sim.jobs[0].ended_by == "signal"
    assert watcher.looks == 3


def test_monitoring_updates_do_not_change_a_healthy_jobs_end():
    watcher = HangWatcher()
    sim = Simulator([job("ok", 0, 1, 300)], cluster(1, 1), build_scheduler("srtf"), watcher, ReplayConfig()).run()
    assert ends(sim) == {"ok": approx(300)}
    assert watcher.looks == 4  # 60, 120, 180, 240
    assert sim.jobs[0].annotation.predicted_remaining_s == approx(60)


class DoublingWatcher(NoAnnotator):
    """Looks at 10 s of run, then each time the run has doubled, at most every 100 s."""

    monitor_interval_s = 100.0

    def __init__(self) -> None:
        self.looked_at: list[float] = []

    def monitor_delay(self, js, run_s):
        return min(self.monitor_interval_s, max(10.0, run_s))

    def on_running(self, sim, js, now):
        self.looked_at.append(now)


def test_the_engine_asks_the_annotator_when_to_look_next_so_short_runs_get_early_looks():
    """Run of 500 s started at 0: looks at 10, 20, 40, 80, 160 (capped steps of 100 from then), 260, 360, 460."""
    watcher = DoublingWatcher()
    Simulator([job("a", 0, 1, 500)], cluster(1, 1), build_scheduler("fifo"), watcher, ReplayConfig()).run()
    assert watcher.looked_at == approx([10, 20, 40, 80, 160, 260, 360, 460])

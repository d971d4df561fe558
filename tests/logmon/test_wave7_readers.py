"""Readers added for the seventh real-log wave, each on our own fixture lines (written in the styles of real
frameworks, with our own names and numbers): running elapsed totals, per-epoch batch ids, evaluation and
fetch bars, deep tracebacks, divergence reported by the run's own check, counters without other evidence,
counters whose second number grows, start-up banners and CSV metric records."""

from __future__ import annotations

from schedmate.logmon.cli import make_monitor
from schedmate.logmon.progress import side_label
from schedmate.logmon.tables import elapsed_figure


def report_of(text: str):
    mon = make_monitor("fixture", use_llm=False)
    mon.feed(text)
    return mon.finish()


# -- running elapsed totals ------------------------------------------------------------------------------


def test_a_capitalised_time_elapsed_total_is_a_running_total():
    assert elapsed_figure("Step: 4000. Time Elapsed: 52.250 s Mean Score: 1.5") == {"elapsed_s": 52.25}


def test_the_step_time_comes_from_the_growth_of_a_running_elapsed_total():
    lines = "".join(f"INFO:agents.learner: run_a: Walker: Step: {n}. Time Elapsed: {40.0 + 2.5 * (n - 6000) / 500:.3f} s "
                    f"Mean Score: 0.{n // 500}. Training.\n" for n in range(6000, 9500, 500))
    r = report_of(lines)
    assert r.progress.current_step == 9000
    assert abs(r.progress.iteration_time_s - 0.005) < 1e-9


# -- per-epoch batch ids ---------------------------------------------------------------------------------


def test_a_batch_id_beside_the_epoch_is_the_counter_and_the_epoch_summary_is_not():
    lines = []
    for ep in range(3):
        for k, b in enumerate((0, 400, 800)):
            lines.append(f"2023-05-0{ep + 1} 10:{k * 3:02d}:00,000 - INFO - epoch: {ep}, batch_id: {b}, auc: 0.71, "
                         f"loss: 0.{40 - ep}, avg_reader_cost: 0.00010 sec, avg_batch_cost: 0.45000 sec, ips: 900 ins/s")
        lines.append(f"2023-05-0{ep + 1} 10:09:00,000 - INFO - epoch: {ep} done, auc: 0.72, loss: 0.3, epoch time: 540.0 s")
    r = report_of("\n".join(lines) + "\n")
    assert (r.progress.current_step, r.progress.epoch) == (800, 2)
    assert abs(r.progress.iteration_time_s - 0.45) < 1e-9


# -- bars that are not training --------------------------------------------------------------------------


def test_an_inference_bar_is_not_training_even_when_it_names_the_train_set():
    assert side_label("Inferencing model in train datasets.: 100%|█████| ")
    assert side_label("Fetching 9 files:  40%|████      | ")
    assert not side_label("Epoch 3:  40%|████      | ")


# -- failures --------------------------------------------------------------------------------------------


def test_a_deep_traceback_takes_its_category_from_the_exception_that_ends_it():
    frames = "".join(f'  File "/opt/app/pkg/mod{i}.py", line {10 + i}, in f{i}\n    f{i + 1}()\n' for i in range(30))
    r = report_of("step 1/100 loss 2.0 time 0.5\nTraceback (most recent call last):\n" + frames
                  + "RuntimeError: CUDA error: device-side assert triggered\n")
    assert r.failure.category.value == "user_code"
    assert r.failure.onset_line == 2


def test_a_warning_raised_on_a_non_finite_loss_is_divergence():
    r = report_of("loop 3 of 10\nRuntimeWarning: round 2, batch 7, loss nan\n")
    assert (r.failure.category.value, r.failure.failed) == ("nan", True)


def test_a_warning_about_a_non_finite_loss_scale_is_not_divergence():
    r = report_of("loop 3 of 10\nUserWarning: loss_scale is inf, lowering it\n")
    assert r.failure.failed is False

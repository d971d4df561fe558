"""Counter mechanisms of the seventeenth real-log wave, each on our own fixture lines written in the styles of
real frameworks with our own names and numbers: a total belongs to the counter that printed it, a second
training run restarting its counter after the first one finished is the run to report (an evaluation bar
after a finished run is not), and an episode's step count is read as a running total or an episode length
by how it moves."""

from __future__ import annotations

from schedmate.logmon.owners import counter_key
from tests.logmon.logmon_support import report_of

# -- a total belongs to the counter that printed it ---------------------------------------------------------


def test_a_counter_line_names_its_counter_by_the_word_before_the_number():
    assert counter_key("Optimizer Step: ") == "step"
    assert counter_key("| SGD | epoch: 002 | loss: 0.91 -- seen: ") == "seen"
    assert counter_key(None) is None


def test_a_samples_total_printed_by_another_counter_is_not_the_step_counters_total():
    lines = []
    for step in range(21, 27):
        lines.append(f"Optimizer Step: {step}  | total loss: {1.9 - step / 100:.5f} | time: 0.31{step % 10}s")
        lines.append(f"| SGD | epoch: 002 | loss: {1.9 - step / 100:.5f} - acc: 0.61 -- seen: {step * 128:05d}/40000")
    lines.append("Optimizer Step: 27  | total loss: 1.62000 | time: 0.302s")
    p = report_of("\n".join(lines) + "\n").progress
    assert p.current_step == 27
    assert p.total_steps is None


def test_a_second_print_of_the_same_counter_keeps_its_total():
    lines = []
    for step in (100, 200, 300):
        lines.append(f"[train] iter {step}/3000 loss {2.0 - step / 1000:.3f}")
        lines.append(f"step {step} lr 0.0004 grad_norm 1.2")
    p = report_of("\n".join(lines) + "\n").progress
    assert (p.current_step, p.total_steps) == (300, 3000)


# -- a second run in the same log ----------------------------------------------------------------------------


def _session(n: int, upto: int) -> list[str]:
    out = ["=== run started 2031-04-02 09:12:00 ==="]
    out += [f"Episode {i}/{n} | Reward: {10 * i} | Loss: {3.0 / i:.4f} | eps: 0.050" for i in range(1, upto + 1)]
    if upto == n:
        out.append("--- results: mean reward 41.0 ---")
    return out


def test_a_new_training_run_restarting_after_a_finished_one_is_the_run_reported():
    lines = _session(1, 1) + _session(1, 1) + _session(1, 1) + _session(12, 5)
    p = report_of("\n".join(lines) + "\n").progress
    assert (p.current_step, p.total_steps) == (5, 12)


def test_an_evaluation_bar_after_a_finished_run_does_not_replace_it():
    lines = [f"step {i}/40 loss={2.0 / i:.3f} lr=0.0003" for i in range(1, 41)]
    lines += [f"100%|{'#' * i}| {i}/9 [00:0{i}<00:00,  4.10it/s]" for i in range(1, 10)]
    p = report_of("\n".join(lines) + "\n").progress
    assert (p.current_step, p.total_steps) == (40, 40)


# -- running totals of time beside the counter -------------------------------------------------------------


def test_a_running_total_of_minutes_beside_every_step_gives_the_time_per_step():
    lines = [f"Epoch [1/3], Step [{s}/9000], Loss: 2.41, Perplexity: 11.1, Time (mins): {s * 0.009:.3f}"
             for s in range(1, 401)]
    p = report_of("\n".join(lines) + "\n").progress
    assert p.current_step == 400
    assert abs(p.iteration_time_s - 0.54) < 0.05


def test_a_time_column_restarting_with_a_per_epoch_counter_is_still_a_running_total():
    lines = []
    for epoch in (4, 5, 6):
        for b in range(0, 1200, 10):
            lines.append(f"Epoch: {epoch:3d} | Batch: {b:5d}/ 1200 | LR: 1.2e-04 | Loss: 3.1 | Time: {0.2 + b * 0.41:6.1f}s")
    p = report_of("\n".join(lines) + "\n").progress
    assert (p.current_step, p.total_steps) == (1190, 1200)
    assert abs(p.iteration_time_s - 0.41) < 0.03


def test_a_per_step_time_that_does_not_grow_stays_a_per_step_time():
    lines = [f"Epoch [1/3], Step [{s}/9000], Loss: 2.41, Time (mins): {0.02 + (s % 3) * 0.001:.3f}" for s in range(1, 60)]
    p = report_of("\n".join(lines) + "\n").progress
    assert abs(p.iteration_time_s - 1.26) < 0.1


# -- failures stated in the job's own words ------------------------------------------------------------------


def test_a_cli_failure_mark_is_a_user_error():
    f = report_of("\n[x] Invalid value for 'training.seed_list': must be an integer\n\n").failure
    assert f.failed and f.category.value == "user_code"


def test_a_logged_error_that_the_data_could_not_be_set_up_is_a_data_loading_failure():
    text = ("[2031-02-03 10:00:01] - Crop Train Logs - {fit.py:40} - INFO - Tiled the images into patches\n"
            "[2031-02-03 10:00:09] - Crop Train Logs - {fit.py:77} - INFO - Built the network\n"
            "[2031-02-03 10:00:09] - Crop Train Logs - {fit.py:91} - ERROR - Unable to build the train and val datasets!\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "dataloader"


def test_a_logged_error_about_something_else_is_not_a_data_loading_failure():
    text = ("2031-02-03 10:00:01 INFO step 10 loss 2.1\n"
            "2031-02-03 10:00:02 ERROR failed to push metrics to the dashboard\n"
            "2031-02-03 10:00:03 INFO step 20 loss 2.0\n")
    f = report_of(text).failure
    assert f.category.value != "dataloader"


def test_an_episode_counter_alone_in_brackets_is_the_counter():
    lines = [f"[EP {e}] len={100 + (e * 37) % 90} R={-900 + e * 3.5:.1f} hits=2 stuck=0" for e in range(1, 25)]
    p = report_of("\n".join(lines) + "\n").progress
    assert (p.current_step, p.total_steps) == (24, None)


def test_a_bracketed_word_with_a_number_that_is_no_counter_word_is_not_a_counter():
    lines = [f"[GPU 1] mem={10 + e} util=0.9" for e in range(1, 6)]
    p = report_of("\n".join(lines) + "\n").progress
    assert p.current_step is None


# -- an episode's steps: a running total or the episode's length ---------------------------------------------


def test_episode_steps_that_grow_with_every_episode_are_the_running_step_counter():
    total, lines = 0, []
    for e, n in enumerate((180, 231, 205, 260, 199, 244, 221), start=1):
        total += n
        lines.append(f"Episode: {e}, steps: {total}, reward: {n / 3:.1f}, epsilon: 0.{90 - e}")
    p = report_of("\n".join(lines) + "\n").progress
    assert p.current_step == total


def test_episode_steps_that_reset_are_the_episode_length_and_the_episode_stays_the_counter():
    lines = [f"Episode: {e}, steps: {n}, reward: {n / 3:.1f}, epsilon: 0.{90 - e}"
             for e, n in enumerate((180, 231, 205, 260, 199, 244, 221), start=1)]
    p = report_of("\n".join(lines) + "\n").progress
    assert p.current_step == 7


def test_episode_lengths_that_happen_to_grow_are_not_a_running_total():
    lines = [f"Episode: {e}, steps: {20 + e}, reward: {e * 1.5:.1f}" for e in range(10, 30)]
    p = report_of("\n".join(lines) + "\n").progress
    assert p.current_step == 29

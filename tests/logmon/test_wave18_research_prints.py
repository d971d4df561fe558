"""Progress mechanisms of the eighteenth real-log wave (research code printing its own progress lines), each
on our own fixture lines with our own names and numbers: the counter with a total is the main one when a bare
counter precedes it, a bracketed count closing a metrics line advances by any amount per line, two counters
named by a unit and a qualifier are an outer and an inner loop, an epoch glued to its number is still the epoch
counter, a run restarted with another total is the run reported, and timestamps on only some lines still time the counter."""

from __future__ import annotations

from schedmate.logmon.custom_counters import main_counter
from tests.logmon.logmon_support import report_of


def _stamp(seconds: int) -> str:
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"2031-05-01 {10 + h:02d}:{m:02d}:{s:02d},250"


# -- the counter with a total is the main one ---------------------------------------------------------------


def test_a_counter_with_its_total_after_a_bare_counter_is_the_main_counter():
    values = main_counter({"step": 4.0, "loss": 1.2}, "iteration:4 step:300/880, tag loss:1.2", 11)
    assert (values["step"], values["total_steps"], values["epoch"]) == (300.0, 880.0, 4.0)


def test_a_bare_counter_alone_keeps_its_reading():
    values = {"step": 40.0, "loss": 0.7}
    assert main_counter(values, "iteration 40, loss 0.7", 12) == values


def test_an_outer_bare_counter_does_not_hide_the_inner_counter_and_its_total():
    lines = ["learning_rate : 0.002", "start training"]
    t = 0
    for outer, inner in [(1, 100), (1, 200), (1, 300), (1, 400), (2, 60), (2, 160), (2, 260)]:
        t += 9
        lines.append(f"{_stamp(t)} - tagger - INFO - iteration:{outer} step:{inner}/480, tag loss:{5.0 / inner:.4f}")
    p = report_of("\n".join(lines) + "\n").progress
    assert (p.current_step, p.total_steps) == (260, 480)
    assert abs(p.iteration_time_s - 0.09) < 0.01  # 9 s per 100 steps


# -- a bracketed count closing a line of metrics ------------------------------------------------------------


def test_a_padded_bracketed_count_closing_a_metrics_line_is_the_counter_and_jumps_are_timed_per_unit():
    lines = ["2031-05-01 10:00:00,000\tmain\tINFO\t====> Round: 3"]
    for i, n in enumerate([64, 12864, 25664, 38464, 51264]):
        lines.append(f"2031-05-01 10:00:{i * 4:02d},500\tmain\tINFO\tloss: {0.5 - i / 100:.4f}  acc: {60 + i:.3f} [{n:>6}/90210]")
    p = report_of("\n".join(lines) + "\n").progress
    assert (p.current_step, p.total_steps) == (51264, 90210)
    assert abs(p.iteration_time_s - 4 / 12800) < 0.2 * 4 / 12800  # 12800 per 4 s


def test_a_bracketed_count_inside_a_line_is_not_read_by_the_closing_bracket_reader():
    text = "loss: 0.31 [12/40] lr 0.001\nloss: 0.30 [13/40] lr 0.001\n"
    p = report_of(text).progress
    assert p.current_step != 13 or p.total_steps == 40  # another reader may take it, never with a foreign total


# -- two counters named by a unit and a qualifier -------------------------------------------------------------


def test_qualified_outer_and_inner_counters_report_the_inner_one_timed_by_its_stamps():
    lines = ["2031/05/01 09:59:00 available device: cpu"]
    pairs = [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2)]
    for i, (outer, inner) in enumerate(pairs):
        lines.append(f"2031/05/01 10:{i * 3:02d}:00 iter_outer: {outer}, iter_inner: {inner}, loss: {1 - i / 10:.3f}")
    p = report_of("\n".join(lines) + "\n").progress
    assert p.current_step == 2
    assert p.total_steps is None
    assert p.iteration_time_s == 180.0


def test_one_qualified_counter_alone_is_not_read_as_two_loops():
    text = "".join(f"epoch_id: {i}, loss: {1 / (i + 1):.3f}, acc_val: 0.{i}\n" for i in range(4))
    p = report_of(text).progress
    assert p.total_steps is None
    assert p.current_step in (None, 3)


# -- an epoch glued to its number -------------------------------------------------------------------------


def test_an_epoch_glued_to_its_fraction_is_the_counter_and_sub_second_stamps_time_it():
    lines = []
    for i in range(1, 9):
        lines.append(f"2031-05-01 10:00:00.{100 + i * 6:03d} | INFO | __main__:<module>:7 - epoch{i}/8:")
        lines.append(f"2031-05-01 10:00:00.{101 + i * 6:03d} | INFO | __main__:<module>:8 - train_mse:{9 - i / 2:.3f}")
    p = report_of("\n".join(lines) + "\n").progress
    assert (p.current_step, p.total_steps) == (8, 8)
    assert abs(p.iteration_time_s - 0.006) < 0.0012


def test_a_global_step_beside_an_epochs_fraction_stays_the_counter():
    values = {"step": 7310.0, "loss": 2.1}
    text = "Train: Rank: 0, epoch: 2, step: 7310, batch : 412/3000, train_loss: 2.1"
    assert main_counter(values, text, 33) == values


# -- timestamps on only some lines ------------------------------------------------------------------------------


def test_timestamps_on_only_some_lines_still_time_the_counter():
    lines = []
    t = 0
    for step in range(50, 450, 50):
        t += 20
        lines.append(f"[{_stamp(t)}] iteration:2 step:{step}/900, loss {3.0 / step:.4f}")
        lines.append(f"    grad_norm {0.5 + step / 1000:.3f}  lr 0.0003")  # an unstamped detail line
    p = report_of("\n".join(lines) + "\n").progress
    assert (p.current_step, p.total_steps) == (400, 900)
    assert abs(p.iteration_time_s - 0.4) < 0.05  # 20 s per 50 steps


# -- a run restarted with another total ---------------------------------------------------------------------


def _run(start: int, total: int, upto: int) -> list[str]:
    out = [f"2031-05-0{start} 09:00:00,000 INFO begin run with {total} samples"]
    for i, n in enumerate(range(32, upto, 8000)):
        out.append(f"2031-05-0{start} 09:00:{i * 2:02d},000 INFO loss: {0.6 - i / 100:.3f} acc: {70 + i}.0 [{n:>6}/{total}]")
    return out


def test_a_run_restarted_with_another_total_after_one_that_stopped_short_is_the_run_reported():
    lines = _run(1, 52000, 30000) + _run(2, 52000, 30000) + _run(3, 97000, 50000)
    r = report_of("\n".join(lines) + "\n")
    assert (r.progress.current_step, r.progress.total_steps) == (48032, 97000)
    assert r.failure is None or r.failure.category != "hang"


def test_an_evaluation_count_with_another_total_does_not_replace_the_training_run():
    lines = []
    for i, n in enumerate(range(32, 40000, 8000)):
        lines.append(f"2031-05-01 09:00:{i * 2:02d},000 INFO loss: {0.6 - i / 100:.3f} [{n:>6}/52000]")
    lines += [f"2031-05-01 09:01:{i:02d},000 INFO scoring [{n}/900]" for i, n in enumerate((100, 300, 500, 700))]
    p = report_of("\n".join(lines) + "\n").progress
    assert (p.current_step, p.total_steps) == (32032, 52000)


# -- a time column: per print interval, or a running total in minutes or named total time ------------------


def test_a_bare_duration_between_pipes_that_stays_level_is_the_time_of_the_print_interval():
    text = "".join(f"Iter {i} | lr 0.0004 | {9.0 + i % 3 / 10:.1f}s\n" for i in range(200, 2200, 200))
    p = report_of(text).progress
    assert p.current_step == 2000
    assert abs(p.iteration_time_s - 9.1 / 200) < 0.005  # about 9.1 s per 200 iterations


def test_an_elapsed_column_in_minutes_is_a_running_total():
    text = "".join(f"step {i} | elapsed {i * 0.01:.2f}m | loss: {2.0 - i / 1000:.3f}\n" for i in range(0, 700, 100))
    p = report_of(text).progress
    assert p.current_step == 600
    assert abs(p.iteration_time_s - 0.6) < 0.06  # 0.01 min per step


def test_a_named_total_time_that_grows_with_the_counter_is_a_running_total():
    text = "".join(f"epoch: 2, batch: {i}, loss: 0.41, total time: {i * 0.3:.1f}s\n" for i in range(40, 440, 40))
    p = report_of(text).progress
    assert p.current_step == 400
    assert abs(p.iteration_time_s - 0.3) < 0.03


def test_timestamps_on_every_other_progress_line_time_the_steps_between_the_stamped_lines():
    lines = []
    for i in range(100, 1300, 100):
        stamp = f"[2031-05-01 10:{i // 100:02d}:00] " if i % 200 == 0 else ""
        lines.append(f"{stamp}epoch: 3, batch: {i}, loss: 0.412")
    p = report_of("\n".join(lines) + "\n").progress
    assert p.current_step == 1200
    assert abs(p.iteration_time_s - 0.6) < 0.06  # 2 minutes per 200 batches, not per 100


def test_a_time_that_names_how_many_iterations_it_covers_is_divided_by_them():
    text = "".join(f"it {i}/6000 loss 1.20 | 200 iters took {48.0 + i % 3 / 10:.1f}s\n" for i in range(200, 2200, 200))
    p = report_of(text).progress
    assert (p.current_step, p.total_steps) == (2000, 6000)
    assert abs(p.iteration_time_s - 0.24) < 0.01
    text = "".join(f"Iter: {i}, loss: 0.5, time for 25 iters: {5.0 + i % 3 / 10:.1f}\n" for i in range(25, 300, 25))
    assert abs(report_of(text).progress.iteration_time_s - 0.2) < 0.01

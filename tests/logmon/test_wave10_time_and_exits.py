"""Mechanisms added for the tenth real-log wave (iteration time and failure categories), each on our own fixture
lines written in the styles of real frameworks with our own names and numbers: time stamps on a 12-hour clock,
glued to the next tag or holding only a time of day across midnight, stamps inside a progress line, a line that
is only a duration, a time column that is a running total, a loop's closing average, launcher and batch-system
exit lines, an epoch line with any named metric, counters with no keyword or wrapped in braces, and a thread's
traceback after the end of training."""

from __future__ import annotations

from schedmate.logmon.ingest import LineNormalizer, parse_timestamp
from schedmate.logmon.shapes import duration_line, embedded_stamp
from tests.logmon.logmon_support import report_of

# -- time stamps -----------------------------------------------------------------------------------------


def test_a_twelve_hour_clock_stamp_reads_the_afternoon_as_afternoon():
    am, rest = parse_timestamp("[2025-02-03 11:50:00 AM-trainer.py-INFO:epoch: 4, iou: 0.51]")
    pm, _ = parse_timestamp("[2025-02-03 01:10:00 PM-trainer.py-INFO:epoch: 5, iou: 0.52]")
    assert am is not None and pm is not None
    assert pm - am == 80 * 60
    assert rest.startswith("trainer.py")


def test_a_bracketed_stamp_glued_to_the_level_tag_by_a_dash_is_a_stamp():
    ts, rest = parse_timestamp("[2025-02-03 09:15:07,250]-[INFO]: Epoch: 7/90\tLoss:0.41")
    assert ts is not None and ts % 60 == 7.25
    assert rest.startswith("[INFO]")


def test_a_word_after_a_stamp_that_merely_starts_like_am_is_no_clock_suffix():
    ts, rest = parse_timestamp("2025-02-03 09:15:07 Amplitude 3")
    assert ts is not None and rest == "Amplitude 3"


def test_time_of_day_stamps_that_pass_midnight_move_to_the_next_day():
    norm = LineNormalizer()
    lines = norm.push("[23:59:30.000] Epoch: [2]  [ 40/300]  time: 1.5\n[00:00:30.000] Epoch: [2]  [ 80/300]  "
                      "time: 1.5\n")
    assert lines[1].ts - lines[0].ts == 60.0


def test_an_epoch_log_on_a_twelve_hour_clock_gives_the_time_per_epoch_across_noon():
    stamps = ["09:40:10 AM", "11:10:10 AM", "12:40:10 PM", "02:10:10 PM", "03:40:10 PM"]
    log = "".join(f"[2025-02-03 {t}-fit.py-INFO:epoch: {n}, iou: 0.{50 + n}]\n" for n, t in enumerate(stamps, 1))
    r = report_of(log)
    assert r.progress.current_step == 5
    assert r.progress.iteration_time_s == 5400.0


def test_a_metric_logger_with_times_of_day_over_midnight_is_no_hang():
    rows = []
    for i, (h, m) in enumerate([(23, 50), (23, 55), (0, 0), (0, 5), (0, 10)]):
        rows.append(f"[{h:02d}:{m:02d}:00.000000] Epoch: [3]  [{(i + 1) * 150:4d}/2000]  eta: 0:50:00  "
                    f"loss: 0.5{i}  time: 2.0000  data: 0.1\n")
    rows.append("[00:11:00.000000] Test: [3]  [ 99/100]  eta: 0:00:00  f1: 0.61  time: 0.5\n")
    rows.append("[00:11:30.000000] Averaged stats: f1: 0.61\n")
    r = report_of("".join(rows))
    assert not r.failure.failed
    assert r.progress.current_step == 750


def test_a_date_and_time_inside_an_epoch_line_times_the_epochs():
    log = "".join(f"[epoch:{n}/400] [loss:0.0{n}] [lr:0.002] [Stamp:[2025-03-01 10:{n * 3:02d}:00]] [took:0:03:00]\n"
                  for n in range(1, 7))
    r = report_of(log)
    assert (r.progress.current_step, r.progress.total_steps) == (6, 400)
    assert r.progress.iteration_time_s == 180.0


def test_a_line_with_two_moments_has_no_single_embedded_stamp():
    assert embedded_stamp("window 2025-03-01 10:00:00 to 2025-03-01 11:00:00") is None
    assert embedded_stamp("[step:3] at 2025-03-01 10:00:05.5") == embedded_stamp("x 2025-03-01 10:00:05") + 0.5


# -- durations, running totals, averages -----------------------------------------------------------------


def test_a_line_that_is_only_a_duration_is_the_time_of_the_iterations_since_the_previous_one():
    rows = ["Training START\n"]
    for n in range(50, 3001, 50):
        rows.append(f"iter {n}:, triplet_metric=0.{n % 97:02d}, mean_dist=1.{n % 89:02d}, lr=0.000100\n")
        if n % 500 == 0:
            rows.append("0:02:30.125000\n")  # 500 iterations took 150.125 s
    r = report_of("".join(rows))
    assert r.progress.current_step == 3000
    assert abs(r.progress.iteration_time_s - 0.30025) < 1e-6


def test_durations_that_are_no_whole_line_or_no_clock_are_not_durations():
    assert duration_line("0:02:30.125000") == 150.125
    assert duration_line("2 days, 1:00:00") == 2 * 86400 + 3600
    assert duration_line("took 0:02:30") is None
    assert duration_line("12:75:00") is None
    assert duration_line("0:00:00") is None


def test_a_unit_less_elapsed_time_column_is_a_running_total_not_a_time_per_step():
    log = "".join(f"[{n}/50000] Train loss: 0.0{n % 7}, Valid loss: 0.0{n % 5}, Elapsed_time: {n * 2.5 + 1.25:.5f}\n"
                  for n in range(100, 1100, 100))
    r = report_of(log)
    assert (r.progress.current_step, r.progress.total_steps) == (1000, 50000)
    assert abs(r.progress.iteration_time_s - 2.5) < 1e-9


def test_a_time_column_that_grows_with_the_counter_on_every_line_is_read_as_a_running_total():
    log = "".join(f"step {n}/9000 loss={3 - n / 9000:.3f} time={n * 0.8 + 4:.1f}\n" for n in range(500, 4001, 500))
    r = report_of(log)
    assert abs(r.progress.iteration_time_s - 0.8) < 1e-9


def test_a_time_column_that_stays_level_is_a_time_per_step():
    log = "".join(f"step {n}/9000 loss={3 - n / 9000:.3f} time={0.8 + (n % 3) * 0.01:.2f}\n"
                  for n in range(500, 4001, 500))
    r = report_of(log)
    assert 0.79 <= r.progress.iteration_time_s <= 0.82


def test_a_loops_closing_average_counts_and_an_evaluation_loops_does_not():
    log = ("Epoch: [0]  [ 0/40]  eta: 0:03:00  loss: 2.1  time: 5.9000  data: 0.0\n"
           "Epoch: [0]  [39/40]  eta: 0:00:00  loss: 1.1  time: 0.2000  data: 0.0\n"
           "Epoch: [0] Total time: 0:00:18 (0.4500 s / it)\n"
           "Test: [0] Total time: 0:00:50 (5.0000 s / it)\n")
    r = report_of(log)
    assert (r.progress.current_step, r.progress.total_steps) == (39, 40)
    assert r.progress.iteration_time_s == 0.45


def test_a_per_iteration_timer_key_is_a_time_per_step():
    log = "".join(f"iter {n} || Loss: 3.{n % 9} || timer: 0.31{n % 3} sec.\n" for n in range(10, 200, 10))
    r = report_of(log)
    assert r.progress.current_step == 190
    assert 0.31 <= r.progress.iteration_time_s <= 0.313


# -- counters ----------------------------------------------------------------------------------------------


def test_an_epoch_line_with_any_named_metric_makes_the_epoch_the_counter():
    log = "".join(f"2025-02-03 10:{n:02d}:00,000 INFO fit: epoch: {n}, psnr: 2{n}.5\n" for n in range(1, 9))
    r = report_of(log)
    assert r.progress.current_step == 8
    assert r.progress.iteration_time_s == 60.0


def test_a_best_epoch_summary_is_no_epoch_counter():
    r = report_of("2025-02-03 10:00:00,000 - best epoch: 31 \t F1 = 0.74\n")
    assert r.progress.current_step is None


def test_a_bare_bracketed_counter_before_a_loss_is_the_counter_without_an_epoch():
    log = "".join(f"[{n}/3000] train loss: 1.{n % 9} (1.25 s/it)\n" for n in range(10, 60, 10))
    r = report_of(log)
    assert (r.progress.current_step, r.progress.total_steps) == (50, 3000)
    assert r.progress.iteration_time_s == 1.25


def test_epoch_and_step_fractions_wrapped_in_braces_are_read():
    rows = []
    for e in range(1, 6):
        for s in (1, 2, 3):
            rows.append(f"2025-02-03 10:00:{(e - 1) * 9 + s * 3:02d},000 INFO epoch: {{{e}/80}}, step: {{{s}/3}}, "
                        f"loss : {{0.{e}{s}}}\n")
    r = report_of("".join(rows))
    assert (r.progress.current_step, r.progress.total_steps) == (3, 3)
    assert r.progress.epoch == 5
    assert r.progress.iteration_time_s == 3.0


def test_a_batch_range_after_a_bracketed_epoch_is_the_counter():
    log = "".join(f"Epoch[4] Batch [{n - 50}-{n}]\tSpeed: 12.50 samples/sec\tloss=0.{n % 7}\n"
                  for n in range(50, 401, 50))
    r = report_of(log)
    assert r.progress.current_step == 400


# -- exits and thread tracebacks -----------------------------------------------------------------------


def test_a_batch_systems_exit_report_is_a_failure():
    log = ("Subject: Job 4242: <fit_job> in cluster <gpuhall> Exited\n"
           "Started at Mon Mar 3 10:00:00 2025\nTerminated at Mon Mar 3 10:00:40 2025\n"
           "------------------------------------------------------------\n\nExited with exit code 1.\n\n"
           "Resource usage summary:\n    Run time :    40 sec.\n")
    r = report_of(log)
    assert r.failure.failed and r.failure.category.value == "other"


def test_a_launcher_reporting_a_child_that_exits_with_a_negative_return_code_is_a_failure():
    log = ("Loading the text encoder ...\n"
           "[2025-03-03 10:00:01,000] [INFO] [launch.py:300:sigkill_handler] Killing subprocess 4100\n"
           "[2025-03-03 10:00:02,000] [ERROR] [launch.py:306:sigkill_handler] ['python', '-u', 'fit.py', "
           "'--local_rank=0'] exits with return code = -9\n")
    r = report_of(log)
    assert r.failure.failed and r.failure.category.value == "other"


def test_a_successful_exit_code_is_no_failure():
    r = report_of("step 10/10 loss=0.1 time=0.2\nTraining completed.\nExited with exit code 0.\n")
    assert not r.failure.failed


THREAD_TB = ("Exception in thread Thread-2:\n"
             "Traceback (most recent call last):\n"
             '  File "/opt/py/lib/python3.10/threading.py", line 1016, in _bootstrap_inner\n'
             "    self.run()\n"
             '  File "/opt/py/lib/python3.10/site-packages/eventlog/writer.py", line 90, in run\n'
             "    item = self._queue.get(True, 5)\n"
             "OSError: handle is closed\n")


def test_a_threads_traceback_after_training_ended_does_not_fail_the_run():
    bar = "".join(f"g: 0.1{n % 9}: {n * 10}%|#| {n * 50}/500 [00:{n:02d}<00:10, 1.20s/it]\n" for n in range(1, 11))
    r = report_of(bar + "Training completed.\n" + THREAD_TB)
    assert not r.failure.failed
    assert r.progress.current_step == 500


def test_a_threads_traceback_in_a_run_that_stops_unfinished_still_counts():
    bar = "".join(f"g: 0.1{n % 9}: {n * 10}%|#| {n * 50}/500 [00:{n:02d}<00:10, 1.20s/it]\n" for n in range(1, 5))
    r = report_of(bar + THREAD_TB)
    assert r.failure.failed

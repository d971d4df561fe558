"""Mechanisms added for the ninth real-log wave (progress formats), each on our own fixture lines written in the
styles of real frameworks with our own names and numbers: counters written without a colon (`Episode 40 | ...`,
`Iter 120  loss=...`) read by structure, counter-only lines (`current step: 41th step`) once they grow, metric
tables apart by tabs or spaces, totals with thousands separators and a run banner's `Num steps = N`, drawn bars
without brackets, a message glued to a bar's end, and an out-of-memory warning the program works around."""

from __future__ import annotations

from schedmate.logmon.ingest import LineNormalizer
from schedmate.logmon.tables import inline_pairs
from tests.logmon.logmon_support import report_of

# -- counters without a colon ----------------------------------------------------------------------------


def test_an_episode_counter_written_without_a_colon_is_the_progress_of_an_rl_loop():
    log = "".join(f"INFO:agent:Episode {n} | Mean Return: {n * 0.7:.2f} | Eps: 0.{90 - n // 10:02d}\n"
                  for n in range(0, 130, 10))
    r = report_of(log)
    assert r.progress.current_step == 120
    assert r.progress.total_steps is None
    assert not r.failure.failed


def test_an_iteration_counter_without_a_colon_beside_a_loss_and_a_time_is_read_with_its_time():
    log = "".join(f"Iter {n}  loss={2.5 - n / 1000:.3f}  time=0.42\n" for n in range(100, 700, 100))
    r = report_of(log)
    assert r.progress.current_step == 600
    assert abs(r.progress.iteration_time_s - 0.42) < 0.01


def test_an_episode_counter_with_its_total_gives_the_total():
    log = "".join(f"Episode {n}/25 | Parcels: {n * 3} | Loss: {1.0 / n:.3f}\n" for n in range(1, 9))
    r = report_of(log)
    assert (r.progress.current_step, r.progress.total_steps) == (8, 25)


def test_words_like_step_in_prose_dates_clocks_and_versions_are_no_counters():
    assert inline_pairs("step 2 of the setup: fetching shards") == []
    assert inline_pairs("Iter 12:30 started") == []
    assert inline_pairs("update 2024-05-01 applied") == []
    assert inline_pairs("step 3.1.0 of the installer") == []
    assert inline_pairs("Episode 7 | Reward: 3.5") == [("reward", "3.5"), ("episode", "7")]


def test_counter_only_lines_count_once_three_have_grown_in_a_row():
    log = "restoring from ckpt\n" + "".join(f"current step: {n}th step\nbatch loss:{3.0 / n:.4f}\n"
                                              for n in range(1, 12))
    r = report_of(log)
    assert r.progress.current_step == 11


def test_one_or_two_counter_only_lines_are_set_up_messages_not_progress():
    r = report_of("Step: 1. Resolving the data files\nStep: 2. Building the index\nready\n")
    assert r.progress.current_step is None


# -- tables apart by tabs or spaces ----------------------------------------------------------------------


def test_a_tab_separated_metric_table_with_a_step_column_gives_the_step():
    log = "step\tloss\n" + "".join(f"{n}\t{9.0 - n / 100:.4f}\n" for n in range(25, 400, 25))
    r = report_of(log)
    assert r.progress.current_step == 375


def test_a_tab_separated_table_of_losses_without_a_step_column_is_no_counter():
    log = "total loss\tbox loss\tcls loss\n" + "".join(f"{40 - n:.4f}\t0.{n + 10}\t0.{n + 30}\n" for n in range(12))
    r = report_of(log)
    assert r.progress.current_step is None


# -- totals -----------------------------------------------------------------------------------------------


def test_a_total_with_thousands_separators_is_read_whole():
    r = report_of("2031-04-02 10:00:00,001 - INFO - Computed max_steps: 12,500\n")
    assert r.progress.total_steps == 12500


def test_a_run_banner_num_steps_line_is_the_total():
    log = ("INFO:estimator:***** Running training *****\nINFO:estimator:  Num examples = 80000\n"
           "INFO:estimator:  Batch size = 32\nINFO:estimator:  Num steps = 2500\n"
           "INFO:estimator:loss = 0.91, step = 0\nINFO:estimator:global_step/sec: 2.04\n"
           "INFO:estimator:loss = 0.52, step = 100 (49.1 sec)\nINFO:estimator:global_step/sec: 2.01\n"
           "INFO:estimator:loss = 0.44, step = 200 (49.7 sec)\n")
    r = report_of(log)
    assert (r.progress.current_step, r.progress.total_steps) == (200, 2500)
    assert abs(r.progress.iteration_time_s - 0.495) < 0.05


# -- drawn bars without brackets, glued messages ---------------------------------------------------------


def _row(step: int, rate: str) -> str:
    return (f"      2/40      7.1G      1.204      2.331      1.088        61        640: {step * 100 // 900}% "
            f"━━━───────── {step}/900 {rate} 0:{step // 30:02d}<5:10\n")


def test_a_detector_row_with_a_drawn_bar_gives_epoch_step_and_rate():
    log = "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n"
    log += "".join(_row(n, "3.2it/s") for n in range(100, 160, 10))
    r = report_of(log)
    assert (r.progress.current_step, r.progress.total_steps) == (150, 900)
    assert abs(r.progress.iteration_time_s - 1 / 3.2) < 0.01


def test_a_bar_with_a_warning_glued_to_its_end_counts_and_the_warning_is_read_apart():
    lines = LineNormalizer().push(" 40% ━━━━━─────── 80/200 2.4it/s 0:33<0:50WARNING low disk on /scratch\n")
    assert [ll.text for ll in lines] == [" 40% ━━━━━─────── 80/200 2.4it/s 0:33<0:50", "WARNING low disk on /scratch"]
    assert lines[0].lineno == lines[1].lineno == 1


def test_an_out_of_memory_warning_the_program_works_around_is_no_failure():
    log = "".join(_row(n, "3.0it/s") for n in range(100, 130, 10))
    log += _row(130, "3.0it/s").rstrip("\n") + "WARNING CUDA OutOfMemoryError in the target assigner, using CPU\n"
    log += _row(140, "2.1it/s")
    r = report_of(log)
    assert not r.failure.failed
    assert r.progress.current_step == 140


def test_an_out_of_memory_error_without_a_workaround_is_still_a_failure():
    log = "".join(_row(n, "3.0it/s") for n in range(100, 130, 10))
    log += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB\n"
    r = report_of(log)
    assert r.failure.category.value == "oom"


# -- JSON records with a quoted fraction -----------------------------------------------------------------


def _record(kind: str, epoch: int, extra: str) -> str:
    return f'stats: {{"mem": "3.10/15.50G", "_type": "{kind}", "epoch": "{epoch}/120", "eta": "1:02:03"{extra}}}\n'


def test_epoch_records_whose_epoch_is_a_quoted_fraction_give_the_epoch_and_its_total():
    log = "".join(_record("train_epoch", e, f', "loss": {2.0 / e:.4f}, "lr": 0.0001')
                  + _record("val_epoch", e, ', "top1_err": 30.5') for e in range(1, 8))
    r = report_of(log)
    assert (r.progress.current_step, r.progress.total_steps) == (7, 120)


def test_a_quoted_size_or_clock_is_no_fraction_counter():
    assert inline_pairs('{"mem": "3.10/15.50G", "eta": "1:02:03", "epoch": "3/9"}') == [("epoch", "3/9")]

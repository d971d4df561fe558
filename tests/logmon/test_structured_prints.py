"""Progress from tables and key/value prints, and where the iteration time comes from (our own fixture lines,
in the shapes these libraries print)."""

from __future__ import annotations

import re

from schedmate.logmon.ingest import LogLine
from schedmate.logmon.safety import static_problems
from schedmate.logmon.tables import TableReader, rate_figures
from tests.logmon.logmon_support import report_of


def sb3_block(iteration: int, elapsed: int) -> str:
    rows = [("rollout/", ""), ("   ep_len_mean", "812"), ("time/", ""), ("   fps", "2210"),
            ("   iterations", str(iteration)), ("   time_elapsed", str(elapsed)),
            ("   total_timesteps", str(iteration * 2048)), ("train/", ""), ("   loss", "0.0413"),
            ("   learning_rate", "0.0003")]
    body = "".join(f"| {k:<22} | {v:<10} |\n" for k, v in rows)
    return "-" * 38 + "\n" + body + "-" * 38 + "\n"


def test_stable_baselines_tables_give_the_iteration_and_its_time_from_time_elapsed():
    # 2.5 s per iteration, printed in whole seconds: the span over the run, not one rounded difference
    text = "".join(sb3_block(300 + i, 750 + (5 * i) // 2) for i in range(9))
    r = report_of(text)
    assert r.progress.current_step == 308
    assert r.progress.total_steps is None
    assert abs(r.progress.iteration_time_s - 2.5) < 0.2
    assert not r.failure.failed


def test_a_yaml_result_block_and_a_status_table_of_the_same_run_share_one_counter():
    text = ""
    for it in (40, 44, 48):
        text += ("Result for PPO_env_0001:\n  date: 2025-01-01_10-00-00\n  done: false\n"
                 f"  time_this_iter_s: 2.02\n  time_total_s: {it * 2.0:.3f}\n  training_iteration: {it}\n  \n")
        text += ("+------------+----------+--------+------------------+\n"
                 "| Trial name | status   |   iter |   total time (s) |\n"
                 "|------------+----------+--------+------------------|\n"
                 f"| PPO_env_01 | RUNNING  |   {it + 1:>4} |   {(it + 1) * 2.0:>14.3f} |\n"
                 "+------------+----------+--------+------------------+\n\n")
    r = report_of(text)
    assert r.progress.current_step == 49
    assert abs(r.progress.iteration_time_s - 2.0) < 0.05


def test_a_table_with_a_header_row_gives_steps_and_the_time_from_its_elapsed_column():
    rows = "".join(f"| {i:<5} | {3.1 - i / 10:<7.4f} | {0.5 + 1.25 * i:.2f}s |\n" for i in (1, 2, 3, 4, 8))
    r = report_of("+-------+---------+--------+\n| Iter  | Loss    | Elapsed Time |\n+-------+---------+--------+\n"
                  + rows + "+-------+---------+--------+\n")
    assert r.progress.current_step == 8
    assert abs(r.progress.iteration_time_s - 1.25) < 0.01


def test_a_table_without_a_counter_column_and_a_model_summary_give_no_steps():
    r = report_of("| Index | Class name | AP      |\n| 0     | car        | 0.71234 |\n| 1     | bus        | 0.55012 |\n"
                  "  | Name  | Type   | Params\n0 | net   | ResNet | 11.2 M\n")
    assert r.progress.current_step is None


def test_a_configuration_dump_with_an_iter_key_is_not_a_step():
    r = report_of("solver:\n  iter: 90000\n  lr: 0.02\n  momentum: 0.9\n\nmodel:\n  depth: 50\n")
    assert r.progress.current_step is None


def test_key_value_lines_with_a_step_and_a_loss_are_read_and_an_epoch_with_its_total_too():
    r = report_of("".join(f"[2025/03/01 10:0{i}:00] ppdet INFO: epoch: [2/120], global_step: {400 + 20 * i}, "
                          f"lr: 0.000100, loss: {1.5 - i / 10:.4f}, avg_batch_cost: 2.51 s, ips: 3.2 samples/s\n"
                          for i in range(4)))
    assert r.progress.current_step == 460
    assert r.progress.epoch == 2 and r.progress.total_epochs == 120
    assert abs(r.progress.iteration_time_s - 3.0) < 0.01  # 60 s per 20 steps, from the timestamps


def test_a_line_with_error_words_is_never_read_as_a_key_value_progress_line():
    reader = TableReader()
    assert reader.accept(LogLine(1, "iteration=12 loss=0.5 status=worker 3 failed")) is False
    assert reader.accept(LogLine(2, "iteration=13 loss=0.5 status=ok")) is True
    reader.flush()
    assert [v["step"] for v, _ in reader.ready()] == [13]


def test_a_finished_keras_epoch_gives_elapsed_over_steps_when_the_per_step_figure_is_rounded():
    lines = "".join(f"Epoch {e}/50\n200/200 [==============================] - {s}s 2s/step - loss: 0.8 - "
                    "val_loss: 0.9\n" for e, s in ((1, 452), (2, 301), (3, 305)))
    r = report_of(lines)
    assert (r.progress.current_step, r.progress.total_steps) == (200, 200)
    assert abs(r.progress.iteration_time_s - 1.51) < 0.02
    assert not r.finished  # 3 of 50 epochs


def test_old_keras_bars_without_a_per_step_figure_give_the_time_from_the_epoch_seconds():
    r = report_of("Epoch 1/1\n640/640 [==============================] - 32s - loss: 0.4 - acc: 0.91\n")
    assert (r.progress.current_step, r.progress.total_steps) == (640, 640)
    assert abs(r.progress.iteration_time_s - 0.05) < 1e-9


def test_whole_second_timestamps_a_few_seconds_apart_defer_to_the_framework_figure():
    lines = "".join(f"[06/01 09:00:{s:02d} d2.utils.events]:  eta: 0:10:00  iter: {i}  total_loss: 1.2  "
                    f"time: 0.4210  data_time: 0.01  lr: 0.01\n" for i, s in ((19, 0), (39, 10), (59, 15), (79, 23),
                                                                             (99, 31)))
    r = report_of(lines)
    assert r.progress.current_step == 99
    assert abs(r.progress.iteration_time_s - 0.421) < 1e-6


def test_whole_second_timestamps_without_a_figure_give_the_span_over_all_intervals():
    lines = "".join(f"[06/01 09:{m:02d}:{s:02d} d2.utils.events]:  iter: {i}  total_loss: 1.2  lr: 0.01\n"
                    for i, m, s in ((19, 0, 0), (39, 0, 9), (59, 0, 19), (79, 0, 28), (99, 0, 38)))
    r = report_of(lines)
    assert abs(r.progress.iteration_time_s - 38 / 80) < 1e-6


def test_rate_figures_are_read_in_the_framework_s_own_words():
    assert rate_figures("step 5 | 0.52 s/it") == {"s_it": 0.52}
    assert rate_figures("step 5 | 247ms/step") == {"ms_it": 247.0}
    assert rate_figures("step 5 | 3.9 it/s") == {"it_s": 3.9}
    assert rate_figures("[5] loss=2.3, timing/steps_per_second=4.5") == {"it_s": 4.5}
    assert rate_figures("iter 5 loss 2.3 time: 0.61 data_time: 0.02") == {"s_it": 0.61}
    assert rate_figures("iter 5 data_time: 0.02 eta: 0:01:00") == {}
    assert rate_figures("epoch time: 345.2 elapsed time: 12") == {}


def test_the_structured_print_regexes_pass_the_static_backtracking_check():
    from schedmate.logmon import tables

    patterns = [v for v in vars(tables).values() if isinstance(v, re.Pattern)]
    patterns += [rx for rx, _ in tables._RATES]
    assert len(patterns) > 8
    for p in patterns:
        assert static_problems(p.pattern) == [], p.pattern

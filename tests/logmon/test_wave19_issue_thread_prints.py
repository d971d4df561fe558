"""Mechanisms of the nineteenth real-log wave (research code's progress lines as users quote them in issue
threads), each on our own fixture lines with our own names and numbers: a loop's number before a bracketed
fraction with its percentage, a step fraction before the epoch's fraction, keys written in brackets, a keyword
with its count in brackets and a colon, an epoch count in brackets, a phase-epoch-dash-fraction bracket, a tqdm
bar of an iterable with no length and the shell's segfault report glued to it, two bare integers before a loss,
and a pipe-separated phase line whose one-decimal rate is too coarse to time with."""

from __future__ import annotations

from schedmate.logmon.ingest import LogLine, unglue
from tests.logmon.logmon_support import report_of

# -- a loop's number, then the position inside it with its percentage -------------------------------------


def test_the_fraction_inside_a_numbered_loop_is_the_counter_and_timestamps_time_each_increment():
    text = ("2032-02-03 08:00:00,100 [fit_xvec:210 - I] Train Iter: 2 [4000/52000 (8%)]  Loss: 7.410000\n"
            "2032-02-03 08:01:40,100 [fit_xvec:210 - I] Train Iter: 2 [8000/52000 (15%)]  Loss: 7.002000\n"
            "2032-02-03 08:03:20,100 [fit_xvec:210 - I] Train Iter: 2 [12000/52000 (23%)]  Loss: 6.850000\n")
    p = report_of(text).progress
    assert (p.current_step, p.total_steps, p.epoch) == (12000, 52000, 2)
    assert abs(p.iteration_time_s - 0.025) < 1e-6  # 100 s per 4000


def test_the_mnist_style_epoch_line_is_still_read_by_its_own_rule():
    p = report_of("Train Epoch: 4 [2560/30000 (9%)]\tLoss: 0.412300\n"
                  "Train Epoch: 4 [5120/30000 (17%)]\tLoss: 0.398100\n").progress
    assert (p.current_step, p.total_steps, p.epoch) == (5120, 30000, 4)


# -- a step fraction before the epoch's fraction --------------------------------------------------------------


def test_a_step_fraction_before_an_epoch_fraction_is_the_step_not_the_epoch():
    p = report_of("train: 35/4200 @ epoch:1/12 loss: 3.91 box_loss: 1.20 cls_loss: 2.71 run7\n").progress
    assert (p.current_step, p.total_steps, p.epoch, p.total_epochs) == (35, 4200, 1, 12)


def test_an_epoch_fraction_alone_is_still_the_epoch():
    p = report_of("epoch: 3/40 loss: 0.82\nepoch: 4/40 loss: 0.79\n").progress
    assert (p.current_step, p.total_steps) == (4, 40)


# -- keys written in brackets -------------------------------------------------------------------------------


def test_keys_in_brackets_before_their_colons_give_the_epoch_and_a_batch_counter_across_epochs():
    text = ("2032-07-09 11:20:00,000 - __main__ - INFO - [epoch]: 41, [batch]: 8800, [loss]: 3.21\n"
            "2032-07-09 11:20:04,000 - __main__ - INFO - [epoch]: 41, [batch]: 9000, [loss]: 3.19\n"
            "2032-07-09 11:20:08,000 - __main__ - INFO - [epoch]: 41, [batch]: 9200, [loss]: 3.20\n")
    p = report_of(text).progress
    assert (p.current_step, p.epoch) == (9200, 41)
    assert abs(p.iteration_time_s - 0.02) < 1e-6


# -- a keyword with its count in brackets, an epoch count in brackets ------------------------------------------


def test_a_keyword_with_its_count_in_brackets_and_a_colon_is_the_counter():
    p = report_of("step [1201]: loss: 2.871\nstep [1202]: loss: 2.866\n").progress
    assert p.current_step == 1202 and p.total_steps is None and p.last_loss == 2.866


def test_an_epoch_count_in_brackets_with_metrics_is_the_counter_while_no_step_shows():
    text = ("Epoch: [37] Avg accuracy 0.701; Average Loss 0.522; Avg Time x Batch 0.011\n"
            " * Average accuracy 0.688; Average Loss 0.540\n")
    p = report_of(text).progress
    assert p.current_step == 37 and p.total_steps is None


def test_an_epoch_in_brackets_followed_by_a_step_bracket_is_left_to_the_metric_logger_rule():
    p = report_of("Epoch: [2]  [ 140/3300]  eta: 0:41:02  lr: 0.0002  loss: 1.1042 (1.2011)  time: 0.7400  data: 0.0100\n"
                  "Epoch: [2]  [ 160/3300]  eta: 0:40:45  lr: 0.0002  loss: 1.0921 (1.1985)  time: 0.7420  data: 0.0100\n").progress
    assert (p.current_step, p.total_steps, p.epoch) == (160, 3300, 2)


# -- a phase, its epoch and a fraction in one bracket with a dash ---------------------------------------------


def test_a_phase_epoch_dash_fraction_bracket_is_the_counter_inside_that_epoch():
    p = report_of("[TRAIN 3 - 12/4800]: avg loss: 5.1200, avg time: 0.41s, ETA: 0h32m41s\n"
                  "[TRAIN 3 - 95/4800]: avg loss: 4.9930, avg time: 0.44s, ETA: 0h34m31s\n").progress
    assert (p.current_step, p.total_steps, p.epoch) == (95, 4800, 3)


# -- a tqdm bar of an iterable with no length, and what the shell says after it --------------------------------


def test_a_lengthless_tqdm_bar_gives_its_count_and_rate():
    p = report_of("$ python fit_small.py\n41it [00:10,  4.00it/s]\n").progress
    assert p.current_step == 41 and p.total_steps is None and abs(p.iteration_time_s - 0.25) < 1e-9


def test_the_shells_segfault_report_glued_to_a_lengthless_bar_is_a_segfault_and_the_bar_still_counts():
    r = report_of("$ python fit_small.py\n23it [00:07,  3.20it/s]zsh: segmentation fault  python fit_small.py\n")
    assert r.failure.failed and r.failure.category.value == "segfault" and r.failure.onset_line == 2
    assert r.progress.current_step == 23


def test_bash_reports_a_segfault_with_its_line_and_pid():
    r = report_of("step 10 loss 2.2\nbash: line 1:  4242 Segmentation fault      (core dumped) python fit.py\n")
    assert r.failure.category.value == "segfault"


def test_a_lengthless_bar_is_split_only_where_something_is_glued_to_it():
    assert [x.text for x in unglue(LogLine(3, "7it [00:02,  3.1it/s]bash: killed"))] == ["7it [00:02,  3.1it/s]",
                                                                                         "bash: killed"]
    assert len(unglue(LogLine(3, "7it [00:02,  3.1it/s]"))) == 1


def test_a_sentence_about_segmentation_faults_is_no_failure():
    r = report_of("step 5 loss 1.0\nnote: the segmentation fault handler is installed for workers\nstep 6 loss 0.9\n")
    assert not r.failure.failed


# -- two bare integers before a named loss --------------------------------------------------------------------


def test_two_bare_integers_before_a_loss_are_the_epoch_and_the_iteration_and_a_nan_loss_is_divergence():
    text = "".join(f"88 {i} Loss=nan Time=0.052\n" for i in range(40, 46)) + "89 1 Loss=nan Time=0.050\n"
    r = report_of(text)
    assert r.failure.category.value == "nan"
    assert (r.progress.current_step, r.progress.epoch) == (1, 89)
    assert abs(r.progress.iteration_time_s - 0.052) < 1e-9


def test_two_bare_integers_before_a_finite_loss_are_healthy_progress():
    r = report_of("5 10 Loss=0.081 Time=0.120\n5 11 Loss=0.079 Time=0.118\n")
    assert not r.failure.failed and r.progress.current_step == 11


# -- a phase with its step and rate between pipes ------------------------------------------------------------


def _pipes(stamp: str | None, step: int, rate: str) -> str:
    head = f"I0304 {stamp} 1402 controller.py:300] " if stamp else ""
    return f"{head}train | step:  {step:5d} | steps/sec:  {rate} | output:\n    {{'total_loss': 0.51}}\n"


def test_a_one_decimal_rate_below_one_is_too_coarse_and_timestamps_time_the_step_past_an_unstamped_echo():
    text = _pipes("10:00:00.000000", 300, "0.1") + _pipes(None, 300, "0.1") + _pipes("10:04:10.000000", 320, "0.1")
    p = report_of(text).progress
    assert p.current_step == 320 and abs(p.iteration_time_s - 12.5) < 1e-6


def test_a_rate_of_one_or_more_between_pipes_is_read():
    p = report_of(_pipes(None, 40, "2.5") + _pipes(None, 60, "2.5")).progress
    assert p.current_step == 60 and abs(p.iteration_time_s - 0.4) < 1e-9

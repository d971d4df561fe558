"""Mechanisms added for the twenty-fifth real-log wave (tqdm, HF-style and MetricLogger output from issue threads),
each on our own fixture lines written in the styles of real loggers with our own names and numbers: a source line
a traceback quotes is code, not an event (a signal named in it is no preemption); a launcher's child killed by
SIGKILL with no cause printed stays `other`; a DataLoader worker's death still reads as such when the quote cuts
the message; a program that catches its own OOM and retries smaller is a tentative `oom`; a MetricLogger that
prints the epoch with its total (`Epoch: [2/50]`) keeps the within-epoch counter; a Lightning bar with no total
(`1234it`) still counts."""

from __future__ import annotations

from schedmate.records import FailureCategory
from tests.logmon.logmon_support import report_of

LAUNCH = "/opt/env/lib/python3.9/site-packages/runner/launch.py"


def _launcher_traceback(last: str) -> str:
    return ("Traceback (most recent call last):\n"
            f'  File "{LAUNCH}", line 120, in main\n'
            "    stop_children(signal.SIGTERM, None)  # forward the stop\n"
            f'  File "{LAUNCH}", line 96, in stop_children\n'
            "    raise subprocess.CalledProcessError(returncode=code, cmd=cmd)\n" + last)


def test_a_signal_named_in_a_quoted_source_line_is_not_a_preemption():
    r = report_of(_launcher_traceback(
        "subprocess.CalledProcessError: Command '['python', 'fit.py', '--rank=3']' died with <Signals.SIGKILL: 9>.\n"))
    assert r.failure.failed
    assert r.failure.category == FailureCategory.other


def test_a_launcher_child_killed_by_sigsegv_is_still_a_crash():
    r = report_of(_launcher_traceback(
        "subprocess.CalledProcessError: Command '['python', 'fit.py']' died with <Signals.SIGSEGV: 11>.\n"))
    assert r.failure.category == FailureCategory.segfault


def test_an_error_line_right_after_a_frame_without_quoted_source_still_counts():
    r = report_of("Traceback (most recent call last):\n"
                  '  File "/opt/env/lib/python3.9/multiprocessing/resource_sharer.py", line 48, in __init__\n'
                  "OSError: [Errno 24] Too many open files\n")
    assert r.failure.category == FailureCategory.dataloader


def test_a_dataloader_worker_death_cut_by_the_quote_is_still_the_data_loader():
    r = report_of("Epoch 2:  41% 812/1980 [20:11<29:02,  1.49s/it]\n"
                  "Traceback (most recent call last):\n"
                  '  File "fit.py", line 40, in <module>\n'
                  "    run()\n"
                  '  File "/opt/env/lib/python3.10/site-packages/torch/utils/data/_utils/signal_handling.py", '
                  "line 66, in handler\n"
                  "    _error_if_any_worker_fails()\n"
                  "RuntimeError: DataLoader worker (pid 4411) is killed by\n")
    assert r.failure.category == FailureCategory.dataloader
    assert r.progress.current_step == 812


def test_an_oom_the_program_retries_smaller_is_oom_when_nothing_follows():
    r = report_of("  Total optimization steps = 1200\n"
                  "Steps:   0%|          | 0/1200 [00:00<?, ?it/s]\n"
                  "OOM Detected, reducing batch/grad size to 8/1.\n"
                  "Traceback (most recent call last):\n")
    assert r.failure.failed
    assert r.failure.category == FailureCategory.oom


def test_a_warning_about_avoiding_oom_is_not_a_failure():
    r = report_of("tip: lower the batch size to avoid OOM on small cards\n"
                  "Steps:  10%|#         | 12/120 [00:24<03:36,  2.00s/it]\n")
    assert not r.failure.failed


def test_a_metric_logger_that_prints_the_epoch_total_keeps_the_within_epoch_counter():
    lines = "".join(f"Epoch: [2/50]  [{n}/880]  eta: 0:04:10  loss: 3.{n % 7}1  lr: 0.0004  time: 0.40{n % 3}  "
                    f"data: 0.001  max mem: 9120\n" for n in range(100, 160, 10))
    r = report_of(lines)
    assert r.progress.current_step == 150
    assert r.progress.total_steps == 880
    assert r.progress.epoch == 2
    assert r.progress.total_epochs == 50


def test_a_lightning_bar_with_no_total_counts_its_iterations():
    r = report_of("Epoch 1: : 410it [02:03,  3.33it/s, loss=2.1, v_num=ab12]\n"
                  "Epoch 1: : 455it [02:16,  3.35it/s, loss=2.0, v_num=ab12]\n")
    assert r.progress.current_step == 455
    assert r.progress.total_steps is None
    assert abs(r.progress.iteration_time_s - 1 / 3.35) < 0.01

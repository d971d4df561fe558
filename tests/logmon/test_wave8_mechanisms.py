"""Mechanisms added for the eighth real-log wave, each on our own fixture lines (written in the styles of real
frameworks, with our own names and numbers): a full file system as a failure of its own, the step counter
bracketed right after an epoch counter, rounded counters (`Step: 12k`) never taken as exact, among bars
with equally frequent totals the latest bar's total, a job runner's tags repeated on every line, and exit
statuses read by their signal (137, 143, 139) and container/eviction reports."""

from __future__ import annotations

from schedmate.logmon.ingest import LineNormalizer
from schedmate.logmon.tables import fields_of, inline_pairs
from tests.logmon.logmon_support import report_of

# -- a full file system ----------------------------------------------------------------------------------


def test_a_checkpoint_write_on_a_full_disk_is_an_environment_failure_not_a_code_bug():
    log = ("step 300/900 loss 2.114 time 0.41\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/env/lib/python3.10/site-packages/torch/serialization.py", line 440, in save\n'
           "    _save(obj, opened_zipfile, pickle_module, pickle_protocol)\n"
           "OSError: [Errno 28] No space left on device\n")
    r = report_of(log)
    assert r.failure.category.value == "other"
    assert r.failure.failed
    assert r.failure.onset_line == 2


def test_a_full_disk_is_found_behind_a_job_runner_prefix_on_every_line():
    prefix = "2025-03-02 11:04:17.201 [42/fit/9 (pid 5150)] [a1b2c3d4-0000-4e5f-8a9b-0c1d2e3f4a5b] "
    log = "".join(prefix + ln + "\n" for ln in (
        "ERROR [runner] step failed", "Traceback (most recent call last):",
        '  File "/srv/app/save.py", line 12, in dump', "    fh.write(blob)",
        "OSError: [Errno 122] Disk quota exceeded"))
    r = report_of(log)
    assert r.failure.category.value == "other"


def test_a_full_dev_shm_stays_a_data_loader_failure():
    r = report_of("ERROR: Unexpected bus error encountered in worker. No space left on device (/dev/shm)\n")
    assert r.failure.category.value == "dataloader"


def test_a_warning_that_mentions_a_full_disk_while_training_goes_on_is_no_failure():
    lines = ["/opt/env/lib/python3.10/site-packages/pool/helpers.py:46: UserWarning: [Errno 28] No space left "
             "on device.  pool will operate in serial mode"]
    lines += [f"step {n}/900 loss {2.5 - n / 1000:.3f} time 0.40" for n in range(10, 90, 10)]
    r = report_of("\n".join(lines) + "\n")
    assert not r.failure.failed
    assert r.progress.current_step == 80


# -- a step counter bracketed right after the epoch counter ----------------------------------------------


def test_the_counter_in_parentheses_after_an_epoch_counter_is_the_step_within_the_epoch():
    lines = [f"{{| Epoch: 7/90 ({n}/2400) | Loss: 0.41{n % 7} | 1.25 steps/s | Step: {16 + n // 1000}k | }}"
             for n in range(500, 2500, 500)]
    r = report_of("\n".join(lines) + "\n")
    assert (r.progress.current_step, r.progress.total_steps) == (2000, 2400)
    assert (r.progress.epoch, r.progress.total_epochs) == (7, 90)
    assert abs(r.progress.iteration_time_s - 0.8) < 1e-6


def test_an_epoch_counter_without_an_inner_counter_stays_the_counter():
    lines = [f"Epoch: {e}/40 | Loss: 0.{60 - e} | 12.5 s" for e in range(1, 6)]
    r = report_of("\n".join(lines) + "\n")
    assert r.progress.current_step == 5
    assert r.progress.total_steps == 40


def test_a_parenthesised_counter_counts_only_beside_an_epoch_key():
    assert fields_of(inline_pairs("batch_size (8/16) loss: 0.5")) is None
    assert fields_of(inline_pairs("epoch: 2 (30/120) loss: 0.5")) == {"epoch": 2.0, "loss": 0.5, "step": 30.0,
                                                                        "total_steps": 120.0}


def test_a_date_in_parentheses_is_no_counter():
    assert ("_bracket", "3/14") not in inline_pairs("epoch: 2 (3/14/2025) loss: 0.5")


# -- rounded counters ------------------------------------------------------------------------------------


def test_a_counter_printed_with_a_magnitude_suffix_is_not_read_as_an_exact_step():
    assert ("step", "425") not in inline_pairs("| Loss: 0.29 | Step: 425k |")
    assert ("step", "425") in inline_pairs("| Loss: 0.29 | Step: 425 |")


# -- equally frequent totals -----------------------------------------------------------------------------


def test_of_fits_with_their_own_totals_the_latest_fit_gives_the_total():
    fits = [(48, 44), (30, 51), (77, 47), (12, 50)]
    lines = [f"{n}/{n} ━━━━━━━━━━━━━━━━━━━━ {max(1, n * ms // 1000)}s {ms}ms/step - accuracy: 0.4 - loss: 0.0021"
             for n, ms in fits]
    r = report_of("\n".join(lines) + "\n")
    assert (r.progress.current_step, r.progress.total_steps) == (12, 12)


def test_an_evaluation_bar_after_a_long_training_bar_does_not_take_the_total():
    lines = [f"{n}/500 [{n // 60:02d}:{n % 60:02d}<05:00,  2.00it/s, loss={1 - n / 1000:.3f}]" for n in range(10, 60, 10)]
    lines.append("3/20 [00:01<00:05,  3.10it/s]")
    r = report_of("\n".join(lines) + "\n")
    assert r.progress.total_steps == 500
    assert r.progress.current_step == 50


# -- a job runner's tags on every line -------------------------------------------------------------------


def _texts(raw: str) -> list[str]:
    return [ll.text for ll in LineNormalizer().push(raw)]


def test_tags_that_open_consecutive_lines_alike_are_the_runners_and_are_dropped():
    tag = "[7/prep/31 (pid 8812)] [0f1e2d3c-aaaa-bbbb] "
    texts = _texts("".join(f"2025-06-01 08:00:0{i}.5 {tag}{ln}\n" for i, ln in enumerate(
        ("starting", "Traceback (most recent call last):", '  File "/srv/job/run.py", line 3, in go',
         "KeyError: 'batch'"))))
    assert texts == ["[7/prep/31 (pid 8812)] [0f1e2d3c-aaaa-bbbb] starting", "Traceback (most recent call last):",
                     '  File "/srv/job/run.py", line 3, in go', "KeyError: 'batch'"]


def test_an_exception_behind_runner_tags_is_still_the_failure():
    tag = "[7/prep/31 (pid 8812)] [0f1e2d3c-aaaa-bbbb] "
    log = "".join(f"{tag}{ln}\n" for ln in ("loading shards", "Traceback (most recent call last):",
                                            '  File "/srv/job/run.py", line 3, in go', "KeyError: 'batch'"))
    r = report_of(log)
    assert r.failure.category.value == "user_code"
    assert r.failure.onset_line == 2


def test_tags_that_hold_a_counter_or_a_short_level_stay():
    assert _texts("[Epoch 3] [train split] step 5 loss 0.4\n[Epoch 3] [train split] step 6 loss 0.3\n")[1] \
        == "[Epoch 3] [train split] step 6 loss 0.3"
    assert _texts("[INFO] [TRAIN] iter 5\n[INFO] [TRAIN] iter 6\n")[1] == "[INFO] [TRAIN] iter 6"


# -- exit statuses read by their signal ------------------------------------------------------------------


def _progress_then(line: str) -> str:
    return "".join(f"step {n}/400 loss {3 - n / 100:.2f} time 0.31\n" for n in range(10, 60, 10)) + line + "\n"


def test_an_exit_status_of_137_is_a_sigkill_most_often_the_memory_limit():
    assert report_of(_progress_then("srun: error: gpu-a12: task 0: Exited with exit code 137")).failure.category.value == "oom"
    assert report_of(_progress_then("    Reason:       OOMKilled")).failure.category.value == "oom"


def test_an_exit_status_of_143_or_an_eviction_is_the_scheduler_stopping_the_job():
    assert report_of(_progress_then("job runner: container exited with code 143")).failure.category.value == "preempted"
    r = report_of(_progress_then("Message: The node was low on resource: memory. Container trainer was using 50Gi."))
    assert r.failure.category.value == "preempted"


def test_an_exit_status_of_139_is_a_segmentation_fault():
    r = report_of(_progress_then("subprocess.CalledProcessError: Command '['python', 'fit.py']' returned non-zero exit status 139."))
    assert r.failure.category.value == "segfault"


def test_a_metric_that_happens_to_read_137_is_no_exit_status():
    r = report_of(_progress_then("eval: images 137 recall 0.143 code_len 139"))
    assert not r.failure.failed

"""Mechanisms added for the fourteenth real-log wave, each on our own fixture lines written in the styles of real
frameworks and schedulers with our own names and numbers: root cause first when a line names the machine
(a GPU lost to the node, a job preempted because its node failed, a spot machine reclaimed), an OOM the program
works around, a checkpoint directory listing that is no progress, and two time columns read by how they move
with the counter (an `elapsed` per print interval, a running mean)."""

from __future__ import annotations

from schedmate.logmon.timing import interval_elapsed, running_mean_field
from tests.logmon.logmon_support import report_of


def test_an_unspecified_launch_failure_is_a_node_fault_not_a_kernel_bug():
    r = report_of("step 40/900 loss 2.1\n"
                  "RuntimeError: CUDA error: unspecified launch failure\n"
                  "CUDA kernel errors might be asynchronously reported at some other API call\n")
    assert (r.failure.category.value, r.failure.failed) == ("node", True)


def test_a_native_trainer_error_naming_a_launch_failure_is_a_node_fault():
    r = report_of('ERROR (mytrainer[2.1]:CopyOut():buffers.cc:120) cudaError_t 4 : "unspecified launch failure" '
                  "returned from 'cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost)'\n")
    assert r.failure.category.value == "node"


def test_a_job_preempted_because_its_node_failed_is_a_node_failure():
    r = report_of("Job Id: 77123.headnode\nExec host:  gpu-07/3\njob deleted\njob preempted (node failure)\n")
    assert r.failure.category.value == "node"
    r = report_of("slurmstepd: error: *** JOB 4242 ON gpu-07 CANCELLED AT 2025-02-01T10:00:00 DUE TO NODE FAILURE ***\n")
    assert r.failure.category.value == "node"


def test_a_priority_preemption_stays_a_preemption():
    r = report_of("slurmstepd: error: *** JOB 4242 ON gpu-07 CANCELLED AT 2025-02-01T10:00:00 DUE TO PREEMPTION ***\n")
    assert r.failure.category.value == "preempted"


def test_a_cloud_notice_that_the_spot_machine_is_reclaimed_is_a_preemption():
    r = report_of("Mar 03 09:14:02Z worker-12 agent 2025/03/03 09:14:02 metadata server says termination is imminent\n"
                  "Mar 03 09:14:20Z worker-12 systemd-logind Power key pressed.\n")
    assert (r.failure.category.value, r.failure.failed) == ("preempted", True)
    assert report_of("INFO: received a spot instance interruption notice, draining\n").failure.category.value \
        == "preempted"


def test_a_job_runner_saying_the_job_failed_is_a_failure_whose_cause_is_elsewhere():
    r = report_of("queue.pl: job failed, log is in exp/run7/log/train.3.log\n")
    assert (r.failure.category.value, r.failure.failed) == ("other", True)


def test_an_oom_the_loop_catches_and_skips_is_no_failure():
    r = report_of("2025-01-05 10:00:01 host app[11] INFO Iteration: 14/500, epoch 1, loss: 0.31\n"
                  "2025-01-05 10:00:03 host app[11] DEBUG CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0)\n"
                  "2025-01-05 10:00:03 host app[11] DEBUG Traceback (most recent call last):\n"
                  "2025-01-05 10:00:03 host app[11] WARNING CUDA OOM Error during batch execution, skipping batch.\n"
                  "2025-01-05 10:00:05 host app[11] DEBUG batch loss: 0.29\n")
    assert (r.failure.category.value, r.failure.failed) == ("none", False)
    assert (r.progress.current_step, r.progress.total_steps) == (14, 500)


def test_an_oom_that_is_not_worked_around_still_fails_the_job():
    r = report_of("Iteration: 14/500, epoch 1, loss: 0.31\n"
                  "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0)\n")
    assert r.failure.category.value == "oom"


def test_a_checkpoint_directory_listing_is_not_the_training_counter():
    r = report_of("-rw-r--r-- 1 ana lab 310M Jun 02 08:11 'epoch=12-step=4100.ckpt'\n"
                  "-rw-r--r-- 1 ana lab 310M Jun 02 09:40 'epoch=3-step=900.ckpt'\n"
                  "drwxr-xr-x 2 ana lab 4.0K Jun 02 09:41 logs\n")
    assert r.progress.current_step is None


def test_a_metric_logger_counter_padded_on_both_sides_of_the_slash_is_read():
    r = report_of("Epoch: [2][   20/  150]    Overall Loss 0.52    LR 0.001\n"
                  "Epoch: [2][   30/  150]    Overall Loss 0.50    LR 0.001\n")
    assert (r.progress.current_step, r.progress.total_steps) == (30, 150)


def test_an_elapsed_figure_that_falls_between_prints_is_the_time_of_each_interval():
    assert interval_elapsed([(500, 5.2), (520, 5.0)]) == [0.25]
    r = report_of("[run][INFO] - step: 500/9000, loss: 1.4, elapsed: 5.20s 41.0m\n"
                  "[run][INFO] - step: 520/9000, loss: 1.3, elapsed: 5.00s 41.1m\n")
    assert r.progress.iteration_time_s is not None and abs(r.progress.iteration_time_s - 0.25) < 0.01


def test_a_growing_or_repeating_elapsed_total_is_still_a_running_total():
    assert interval_elapsed([(10, 8.0), (20, 16.0), (30, 24.0)]) is None  # grows with the counter
    assert interval_elapsed([(10, 100.0), (11, 100.0), (12, 101.0)]) is None  # whole seconds repeat, never fall
    assert interval_elapsed([(10, 100.0), (20, 3.0)]) is None  # a restart, not an interval


def test_a_per_step_time_that_is_a_running_mean_is_read_from_its_growth():
    # a mean since step 0 with a slow first interval (1.2 s) and 0.05 s per step after it
    series = [(10, 0.165), (20, 0.1075), (30, 0.08833), (40, 0.07875)]
    implied = running_mean_field(series)
    assert implied is not None and all(abs(x - 0.05) < 0.002 for x in implied)
    r = report_of("".join(f"Epoch: [0][{s:5d}/  300]    Loss 0.6    Time {t:.6f}\n" for s, t in series))
    assert abs(r.progress.iteration_time_s - 0.05) < 0.005


def test_a_plain_per_step_time_that_falls_during_warmup_is_not_taken_for_a_mean():
    assert running_mean_field([(10, 0.5), (20, 0.3), (30, 0.25), (40, 0.24)]) is None
    assert running_mean_field([(10, 0.30), (20, 0.31), (30, 0.30), (40, 0.29)]) is None


def test_an_avg_time_key_is_seconds_per_step():
    r = report_of("step=300, avg_time=0.412, loss=3.1\nstep=400, avg_time=0.410, loss=3.0\n"
                  "step=500, avg_time=0.409, loss=2.9\n")
    assert r.progress.iteration_time_s is not None and abs(r.progress.iteration_time_s - 0.41) < 0.01

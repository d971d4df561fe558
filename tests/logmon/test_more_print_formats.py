"""Progress and failures from print formats beyond the built-in framework families (our own fixture lines)."""

from __future__ import annotations

from tests.logmon.logmon_support import report_of


def test_a_keras_bar_gives_steps_and_the_ms_per_step():
    r = report_of("Epoch 1/3\n300/300 [==============================] - 60s 200ms/step - loss: 0.41 - acc: 0.88\n")
    assert (r.progress.current_step, r.progress.total_steps) == (300, 300)
    assert abs(r.progress.iteration_time_s - 0.2) < 1e-9


def test_a_keras_loss_of_nan_is_a_nan_failure():
    r = report_of("  1/50 [..............................] - ETA: 1:00 - loss: 0.5000\n"
                  "  2/50 [..............................] - ETA: 0:59 - loss: nan\n")
    assert r.failure.category.value == "nan" and r.failure.failed


def test_mmcv_epoch_lines_give_the_within_epoch_counter_and_time():
    lines = "".join(f"2024-01-01 00:{i * 15 // 60:02d}:{i * 15 % 60:02d},000 - mm - INFO - Epoch [2][{i * 50}/900]\t"
                    f"lr: 1.0e-02, eta: 1:00:00, "
                    f"time: 0.300, data_time: 0.010, memory: 100, loss: 1.0\n" for i in range(1, 5))
    r = report_of(lines)
    assert (r.progress.current_step, r.progress.total_steps) == (200, 900)
    assert abs(r.progress.iteration_time_s - 0.3) < 0.05


def test_a_progress_bar_with_the_crash_printed_on_the_same_line_keeps_both():
    line = ("Epoch 0:  10%|#   | 500/5000 [10:00<90:00,  2.00it/s, loss=1.2][E ProcessGroupNCCL.cpp:1] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600001 "
            "milliseconds before timing out.\n")
    r = report_of("starting\n" + line)
    assert r.failure.category.value == "nccl"
    assert (r.progress.current_step, r.progress.total_steps) == (500, 5000)


def test_a_bare_iteration_counter_is_read():
    r = report_of("12:00:00 INFO saved models\n12:00:00 INFO iterations: 4200\n")
    assert r.progress.current_step == 4200


def test_a_data_preparation_bar_is_not_the_training_counter_and_a_cancelled_step_is_preempted():
    r = report_of("Preparing test set...:  45%|####   | 30/67 [27:15<23:13, 37.65s/it]\n"
                  "Preparing test set...:  46%|####   | 31/67 [29:02<35:12, 58.67s/it]slurmstepd: error: *** STEP 12.0 "
                  "ON node1 CANCELLED AT 2024-04-23T12:18:08 ***\n")
    assert r.failure.category.value == "preempted"
    assert r.progress.current_step is None


def test_a_stuck_watchdog_is_a_hang():
    r = report_of("[rank2]:[E704 13:48:58.2 ProcessGroupNCCL.cpp:1746] [PG ID 0 Rank 2] ProcessGroupNCCL's watchdog got "
                  "stuck for 480 seconds without making progress in monitoring enqueued collectives.\n")
    assert r.failure.category.value == "hang"


def test_a_bar_whose_total_differs_from_the_announced_step_count_does_not_crash_the_monitor():
    r = report_of("  Total optimization steps = 9090\n"
                  + "".join(f"Epoch 0:   0%|   | {i}/14290 [00:0{i}<11:16:10,  2.84s/it]\n" for i in range(1, 4)))
    assert r.progress.current_step == 3

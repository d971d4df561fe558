"""Which counter is the main training counter, and the print formats that carry one (our own fixture lines)."""

from __future__ import annotations

from schedmate.logmon.ingest import parse_timestamp
from tests.logmon.logmon_support import report_of


def test_bars_described_as_evaluation_are_not_the_training_counter_even_without_a_bar_graphic():
    r = report_of("Training Epoch 6: 100% 88/88 [01:40<00:00,  1.14s/it]\n"
                  "Detecting objects: 100% 12/12 [00:04<00:00,  2.81it/s]\n"
                  "Computing AP: 100% 3/3 [00:00<00:00, 912.40it/s]\n"
                  "Training Epoch 7:  25% 22/88 [00:25<01:15,  1.15s/it]\n")
    assert (r.progress.current_step, r.progress.total_steps) == (22, 88)
    assert abs(r.progress.iteration_time_s - 1.145) < 0.01
    assert r.progress.epoch == 7


def test_an_ultralytics_epoch_bar_is_the_counter_and_its_validation_bar_is_not():
    r = report_of("      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n"
                  "     17/120      3.11G     0.8123     0.6011     0.9912         12        640: 100%|##########| "
                  "150/150 [01:30<00:00,  1.66it/s]\n"
                  "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|"
                  "##########| 40/40 [00:09<00:00,  4.31it/s]\n"
                  "                   all        640        901      0.712      0.655      0.701      0.488\n")
    assert (r.progress.current_step, r.progress.total_steps) == (150, 150)
    assert (r.progress.epoch, r.progress.total_epochs) == (17, 120)
    assert abs(r.progress.iteration_time_s - 1 / 1.66) < 1e-3
    assert not r.finished


def test_a_global_step_ahead_of_a_stale_bar_becomes_the_counter():
    lines = "Epoch 4: 100%|##########| 250/250 [00:20<00:00, 12.50it/s, v_num=1, train_loss=0.41]\n"
    lines += "".join(f"Epoch {e}, global step {250 * (e + 1)}: 'val_acc' reached 0.{e}0000 (best 0.{e}0000), saving "
                     f"model to '/ckpt/epoch={e}.ckpt' as top 1\n" for e in range(4, 8))
    r = report_of(lines)
    assert r.progress.current_step == 2000
    assert r.progress.total_steps is None
    assert abs(r.progress.iteration_time_s - 0.08) < 1e-9


def test_a_global_step_printed_at_the_end_of_the_bar_s_own_epoch_leaves_the_bar_as_the_counter():
    lines = ""
    for e in range(3):
        lines += f"Epoch {e}: 100%|##########| 250/250 [00:20<00:00, 12.50it/s, v_num=1]\n"
        lines += f"Epoch {e}, global step {250 * (e + 1)}: 'val_acc' was not in top 1\n"
    lines += "Epoch 3:  40%|####      | 100/250 [00:08<00:12, 12.50it/s, v_num=1]\n"
    r = report_of(lines)
    assert (r.progress.current_step, r.progress.total_steps) == (100, 250)
    assert r.progress.epoch == 3


def test_a_log_whose_only_counter_is_the_epoch_reports_the_epoch_as_the_counter():
    r = report_of("".join(f"Epoch {e}/30 | Loss: {1 / e:.4f} | Val Acc: 0.{e + 50}\n" for e in range(1, 12)))
    assert (r.progress.current_step, r.progress.total_steps) == (11, 30)


def test_epoch_lines_give_way_to_a_step_counter_once_one_is_printed():
    r = report_of("Epoch 1/5\n" + "".join(f"step {s}/400 | loss {2 - s / 400:.3f} | 0.25s/it\n" for s in (100, 200)))
    assert (r.progress.current_step, r.progress.total_steps) == (200, 400)
    assert r.progress.epoch == 1 and r.progress.total_epochs == 5
    assert not r.finished


def test_a_counter_that_restarts_under_epoch_lines_counts_within_the_epoch():
    text = ""
    for e in (1, 2, 3):
        text += f"Epoch {e}/10\n" + "".join(f"{s}/120 [====>.....] - ETA: 0:{60 - s // 2:02d} - loss: 0.5\n"
                                            for s in (40, 80))
        text += "120/120 [==============================] - 60s 500ms/step - loss: 0.5\n"
    r = report_of(text)
    assert (r.progress.current_step, r.progress.total_steps) == (120, 120)
    assert r.progress.steps_done == 360
    assert r.progress.steps_left == 7 * 120
    assert not r.finished


def test_the_epoch_in_a_bar_description_is_read():
    r = report_of("".join(f"[Epoch 2/200] [Batch {b}/938] [D loss: 0.41] [G loss: 1.20]\n" for b in (10, 20)))
    assert (r.progress.current_step, r.progress.total_steps) == (20, 938)
    assert (r.progress.epoch, r.progress.total_epochs) == (2, 200)


def test_more_print_formats_give_the_counter_and_the_time():
    cases = {
        "Epoch: [0][ 40/5005]\tTime  0.512 ( 0.980)\tData  0.001 ( 0.400)\tLoss 6.9e+00 (6.9e+00)\n":
            (40, 5005, 0.512),
        "Epoch: [3]  [ 100/1250]  eta: 0:10:00  lr: 0.000100  loss: 1.2345 (1.3000)  time: 0.5012  data: 0.0123\n":
            (100, 1250, 0.5012),
        "Train Epoch: 3 [12800/60000 (21%)]\tLoss: 0.287100\n": (12800, 60000, None),
        "[1000] learning_rate=0.001, loss=2.31, timing/steps_per_second=4.0\n": (1000, None, 0.25),
        "INFO:tensorflow:global step 7012: loss = 3.2100 (0.412 sec/step)\n": (7012, None, 0.412),
        "INFO:tensorflow:loss = 0.34, step = 1200 (12.345 sec)\n": (1200, None, None),
        "Step 2400/200000; acc: 41.2; ppl: 22.1; xent: 3.1; lr: 0.00070; 9000/8000 tok/s; 120 sec\n":
            (2400, 200000, None),
        "[eval] [train][epoch:  1, iter:   2,400, lr:(2.000e-04,)] [eta: 1:00:00, time (data): 0.863 (0.003)]\n":
            (2400, None, 0.863),
        "  40/300 ━━━━━━━━━━━━━━━━━━━━ 9s 31ms/step - accuracy: 0.8100 - loss: 0.5200\n": (40, 300, 0.031),
        "[06/01 09:00:00 d2.utils.events]:  iter: 59  total_loss: 1.2  loss_cls: 0.6  lr: 0.01\n": (59, None, None),
    }
    for line, (step, total, it) in cases.items():
        r = report_of(line)
        assert (r.progress.current_step, r.progress.total_steps) == (step, total), line
        if it is None:
            assert r.progress.iteration_time_s is None, line
        else:
            assert abs(r.progress.iteration_time_s - it) < 1e-6, line


def test_glog_two_digit_year_and_logger_tagged_timestamps_are_parsed():
    t1, rest = parse_timestamp("I0601 09:00:00.250000  4242 train.py:88] step 5")
    t2, _ = parse_timestamp("I0601 09:00:02.750000  4242 train.py:88] step 6")
    assert t2 - t1 == 2.5 and rest == "step 5"
    t3, rest3 = parse_timestamp("25-06-01 09:00:00.500 - INFO: <epoch: 1, iter: 10>")
    assert t3 == parse_timestamp("2025-06-01 09:00:00.500 x")[0] and rest3.startswith("INFO")
    t4, rest4 = parse_timestamp("[06/01 09:00:10 d2.utils.events]:  iter: 19")
    assert t4 is not None and rest4 == "iter: 19"
    assert parse_timestamp("I am 12:00:00 late")[0] is None
    assert parse_timestamp("[13/41 09:00:00] x")[0] is None


def test_numbers_too_large_for_a_float_are_not_counters_and_never_crash_the_monitor():
    big = "9" * 400
    lines = [f"step {big}/5000 | loss 2.3 | 0.5s/it", f"| Iter | Loss | Elapsed |\n| {big} | 1.0 | 1e999s |",
             f"Epoch {big}/{big} | loss 1.0", f"Epoch 3, global step {big}: 'val' was not in top 1",
             f"[Epoch {big}/3] [Batch 5/10]", f"iteration: {big}, loss: 0.5, time: 1e999"]
    for line in lines:
        r = report_of(line + "\n")
        assert r.progress.current_step in (None, 5), line
        assert r.progress.iteration_time_s is None, line


def test_a_bar_description_is_read_by_words_not_by_letters():
    from schedmate.logmon.progress import side_label

    assert side_label("Detecting objects: ") and side_label("Validation DataLoader 0: ") and side_label("Map: ")
    assert not side_label("Training classifier: ") and not side_label("latest interval 5, ")
    assert not side_label("Epoch 3/10: ") and not side_label("")


def test_a_step_counter_followed_by_a_colon_and_an_iteration_based_mmcv_line_are_read():
    r = report_of("".join(f"Step {s}: loss=2.{s // 100}, lr=3e-4, 0.8 s/it\n" for s in (100, 200)))
    assert (r.progress.current_step, r.progress.last_loss) == (200, 2.2)
    r = report_of("Iter [50/90000]\tlr: 1.996e-03, eta: 1 day, 3:56:35, time: 0.701, data_time: 0.053, loss: 1.2\n")
    assert (r.progress.current_step, r.progress.total_steps, r.progress.iteration_time_s) == (50, 90000, 0.701)

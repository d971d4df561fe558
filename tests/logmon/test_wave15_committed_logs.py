"""Readers added for the fifteenth real-log wave (committed training logs), each on our own fixture lines written
in the styles of real frameworks with our own names and numbers: Keras one-line epochs (`verbose=2`), an epoch's
training time named on its line, epoch-and-batch brackets with no total, a bracketed step with its evaluation
between, and a throughput turned into a step time by the batch a configuration dump names."""

from __future__ import annotations

from schedmate.logmon.shapes import epoch_duration
from schedmate.logmon.throughput import batch_size_of, step_seconds
from tests.logmon.logmon_support import report_of


def stamp(seconds: float, sep: str = ".") -> str:
    """`2030-02-03 HH:MM:SS.ffffff`, `seconds` after 04:00:00."""
    h, rest = divmod(seconds, 3600)
    return f"2030-02-03 {4 + int(h):02d}:{int(rest // 60):02d}:{rest % 60:09.6f}".replace(".", sep)


# -- Keras with verbose=2: one line per epoch, no bar ------------------------------------------------------


def test_a_keras_one_line_epoch_is_the_counter_and_its_seconds_are_the_epochs():
    text = "".join(f"Epoch {e}/30\n24/24 - {8 if e > 1 else 15}s - loss: 0.{90 - e} - acc: 0.{40 + e}\n" for e in range(1, 31))
    r = report_of(text)
    assert (r.progress.current_step, r.progress.total_steps) == (24, 24)
    assert r.progress.epoch == 30
    assert abs(r.progress.iteration_time_s - 8 / 24) < 1e-6


def test_a_keras_one_line_epoch_with_a_per_step_figure_reads_the_figure_not_the_rounded_seconds():
    text = "".join(f"Epoch {e}/12\n64/64 - 0s - loss: 1.{e:02d} - 301ms/epoch - 5ms/step\n" for e in range(1, 13))
    r = report_of(text)
    assert (r.progress.current_step, r.progress.total_steps) == (64, 64)
    assert abs(r.progress.iteration_time_s - 0.005) < 1e-9


# -- an epoch's training time named on its line ------------------------------------------------------------


def test_the_training_time_on_an_epoch_line_is_the_time_per_epoch_and_inference_time_is_not():
    assert epoch_duration(" loss 3.10 | train 4.2s | infer 9.0s") == 4.2
    assert epoch_duration(" loss 3.10 | infer 9.0s") is None
    assert epoch_duration(", elapsed time 0:12:00") is None
    assert epoch_duration(", took 1.5 min") == 90.0


def test_an_epoch_counter_with_a_named_training_time_gives_the_iteration_time():
    text = "--- convnet on toyset using cuda ---\n" + "".join(
        f"Epoch {e:02d} loss {5.0 / e:.4f} | train {4.2 if e % 3 else 4.4}s" + (" | Acc 50.0% | infer 7.7s" if e % 5 == 0 else "") + "\n"
        for e in range(1, 41))
    r = report_of(text)
    assert r.progress.current_step == 40
    assert abs(r.progress.iteration_time_s - 4.2) < 1e-9


# -- epoch-and-batch brackets, no total --------------------------------------------------------------------


def test_a_bracketed_epoch_and_batch_count_within_the_epoch_and_time_comes_from_the_stamps():
    lines = []
    for ep in range(4):
        base = 600 * ep
        for b in (0, 40):
            lines.append(f"{stamp(base + b * 1.5, ',')[:23]} - fit.py[line:90] - INFO: [Epoch {ep}][Batch {b}], "
                         f"Speed: 3.1 samples/sec, ClsLoss=0.{50 - ep}\n")
    r = report_of("".join(lines))
    assert r.progress.current_step == 40
    assert r.progress.epoch == 3
    assert abs(r.progress.iteration_time_s - 1.5) < 1e-6


def test_a_speedometer_throughput_and_the_configured_batch_give_the_step_time():
    text = ("INFO:root:start with arguments Namespace(batch_size=64, disp_batches=50, num_epochs=3, lr=0.1)\n"
            + "".join(f"INFO:root:Epoch[{e}] Batch [{b}]\tSpeed: 256.00 samples/sec\taccuracy=0.7{b // 50}\n"
                      for e in range(3) for b in (50, 100, 150))
            + "INFO:root:Epoch[2] Time cost=38.1\n")
    r = report_of(text)
    assert r.progress.current_step == 150
    assert abs(r.progress.iteration_time_s - 0.25) < 1e-9


def test_without_a_named_batch_a_throughput_gives_no_step_time():
    text = "".join(f"INFO:root:Epoch[{e}] Batch [{b}]\tSpeed: 256.00 samples/sec\taccuracy=0.7\n"
                   for e in range(2) for b in (50, 100))
    assert report_of(text).progress.iteration_time_s is None


def test_only_a_training_batch_names_the_batch_of_a_step():
    assert batch_size_of("Namespace(batch_size=32, workers=4)") == 32
    assert batch_size_of("  --batch-size 128 \\") == 128
    assert batch_size_of('{"train_batch_size": 48, "seed": 1}') == 48
    assert batch_size_of("eval_batch_size: 8") is None
    assert batch_size_of("per_device_train_batch_size=4") is None
    assert batch_size_of("micro_batch_size = 2") is None
    assert step_seconds([100.0, 200.0], 50) == [0.5, 0.25]
    assert step_seconds([100.0], None) == []


# -- a bracketed step, its evaluation between -------------------------------------------------------------


def test_a_bracketed_step_is_the_counter_and_its_evaluation_lines_are_a_pause():
    lines = []
    t = 0.0
    for n in range(0, 1100, 100):
        lines.append(f"{stamp(t)}: Step [{n}]  train Loss : 0.{90 - n // 100}, "
                     f"training accuracy :  0.5\n")
        t += 300.0 if n < 1000 else 0.0
        if n % 200 == 0:
            lines.append(f"{stamp(t)}: Step [{n}]  val Loss : 0.8, val accuracy :  0.4\n")
            t += 120.0
    text = "".join(lines)
    r = report_of(text)
    assert r.progress.current_step == 1000
    assert abs(r.progress.iteration_time_s - 3.0) < 1e-6

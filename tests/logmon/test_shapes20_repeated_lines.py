"""The twentieth real-log wave's mechanism: progress read from the shape of repeated lines (`repeated_shapes.py`),
whatever words a script prints. Every fixture here is an invented format (our own names, numbers and layout):
the counter is the template field that grows, the time per increment comes from a per-iteration field, a rate,
the lines' stamps, or a running total divided by the counter's growth, and it stays null when unsure."""

from __future__ import annotations

import math

from schedmate.logmon.repeated_shapes import ShapeReader, parse
from tests.logmon.logmon_support import report_of


def reading_of(lines: list[str], stamps: list[float | None] | None = None):
    reader = ShapeReader()
    for i, text in enumerate(lines):
        reader.offer(i + 1, text, stamps[i] if stamps else None)
    return reader.fallback()


# -- templates and fields ------------------------------------------------------------------------------------


def test_lines_that_differ_only_in_their_numbers_share_one_template():
    a = parse("  cycle 14  ::  drift=0.51   (2.40 sec/cycle)")
    b = parse("  cycle 15  ::  drift=0.47   (2.38 sec/cycle)")
    assert a is not None and b is not None
    assert a[0] == b[0]
    assert [f.key for f in a[1]] == ["cycle", "drift", ""]
    assert a[1][2].unit == "sec/cycle"


def test_a_glued_unit_and_a_clock_duration_are_read_as_fields():
    _, fields, values = parse("wallclock [1:02:03.5] pass 7 took 12.5seconds")  # type: ignore[misc]
    assert fields[0].clock and values[0] == 3723.5
    assert fields[2].unit == "seconds" and values[2] == 12.5


# -- the counter ---------------------------------------------------------------------------------------------


def test_a_field_named_by_a_counter_word_is_the_counter_whatever_its_stride():
    r = reading_of(["<grid-fit> update 130 | penalty 4.1", "<grid-fit> update 210 | penalty 3.9",
                    "<grid-fit> update 232 | penalty 3.7"])
    assert r is not None and (r.step, r.total) == (232, None)


def test_a_growing_numerator_over_a_fixed_denominator_is_the_counter_with_its_total():
    r = reading_of(["[lane A] 40/900 done, mse 0.31", "[lane A] 80/900 done, mse 0.29", "[lane A] 120/900 done, mse 0.28"])
    assert r is not None and (r.step, r.total) == (120, 900)


def test_an_unnamed_integer_needs_a_constant_stride_over_three_lines():
    two = reading_of(["~ 500 ~ 0.91", "~ 1000 ~ 0.88"])
    three = reading_of(["~ 500 ~ 0.91", "~ 1000 ~ 0.88", "~ 1500 ~ 0.86"])
    uneven = reading_of(["~ 500 ~ 0.91", "~ 1000 ~ 0.88", "~ 1700 ~ 0.86"])
    assert two is None and uneven is None
    assert three is not None and three.step == 1500


def test_an_epoch_a_size_or_a_percentage_is_never_the_counter():
    assert reading_of(["round-robin epoch 3, 12%", "round-robin epoch 4, 25%", "round-robin epoch 5, 37%"]) is None
    assert reading_of(["queue size 10 ok", "queue size 20 ok", "queue size 30 ok"]) is None


def test_the_counter_restarting_keeps_only_the_latest_run():
    r = reading_of(["leg 7 / 300 quality 0.2", "leg 8 / 300 quality 0.3", "leg 1 / 300 quality 0.2",
                    "leg 2 / 300 quality 0.4", "leg 3 / 300 quality 0.4"])
    assert r is not None and (r.step, r.total, r.lines) == (3, 300, 3)


def test_a_fraction_seen_on_two_lines_only_or_counting_another_phase_is_no_counter():
    assert reading_of(["[lane A] 40/900 done", "[lane A] 80/900 done"]) is None
    assert reading_of([f"scoring pass: [{n}/90] {t} s" for n, t in ((30, 1.1), (60, 1.0), (90, 1.2))]) is not None
    assert reading_of([f"eval step {n} of held-out, {t} s" for n, t in ((1, 1.1), (2, 1.0), (3, 1.2))]) is None


# -- the time per increment ----------------------------------------------------------------------------------


def test_a_per_iteration_unit_gives_the_time_directly():
    r = reading_of([f"~ {n} ~ drift {d} ~ {t} s/iter" for n, d, t in ((10, 0.5, 0.21), (20, 0.4, 0.25), (30, 0.3, 0.22))])
    assert r is not None and abs(r.iteration_time_s - 0.22) < 1e-9


def test_a_rate_in_iterations_per_second_is_inverted():
    r = reading_of(["sweep 100 :: 4.0 it/s", "sweep 200 :: 5.0 it/s", "sweep 300 :: 4.0 it/s"])
    assert r is not None and abs(r.iteration_time_s - 0.25) < 1e-9


def test_a_throughput_in_samples_is_no_iteration_time():
    r = reading_of(["sweep 100 :: 410 samples/s", "sweep 200 :: 395 samples/s", "sweep 300 :: 402 samples/s"])
    assert r is not None and r.iteration_time_s is None


def test_the_lines_stamps_time_each_increment_over_the_counters_growth():
    r = reading_of(["relax 40 energy 1.5", "relax 80 energy 1.2", "relax 120 energy 1.1"], [1000.0, 1030.0, 1062.0])
    assert r is not None and abs(r.iteration_time_s - 0.7750) < 1e-9  # median of 30/40 and 32/40


def test_a_running_total_time_column_is_divided_by_the_counters_growth():
    lines = [f"since start {c} | pass {n} | j={j}" for c, n, j in
             (("0:10:00", 1000, 3.1), ("0:11:40", 1200, 2.9), ("0:13:22", 1400, 2.8), ("0:15:00", 1600, 2.7))]
    r = reading_of(lines)
    assert r is not None and r.step == 1600 and abs(r.iteration_time_s - 0.5) < 1e-9  # 100, 102, 98 s per 200


def test_a_time_column_is_one_iterations_time_when_each_line_is_one_step():
    r = reading_of(["pass 41 -> j=0.7 [3.5s]", "pass 42 -> j=0.6 [3.9s]", "pass 43 -> j=0.6 [3.6s]"])
    assert r is not None and abs(r.iteration_time_s - 3.6) < 1e-9


def test_a_plain_time_over_several_iterations_per_line_stays_null():
    r = reading_of(["pass 40 -> j=0.7 [3.5s]", "pass 60 -> j=0.6 [3.9s]", "pass 80 -> j=0.6 [3.6s]"])
    assert r is not None and r.step == 80 and r.iteration_time_s is None  # the interval's time or the last pass's?


def test_a_countdown_or_a_data_time_is_no_iteration_time():
    countdown = reading_of(["pass 5 left 40.0s", "pass 6 left 31.0s", "pass 7 left 22.5s", "pass 8 left 14.0s"])
    loading = reading_of(["pass 5 data time 0.4", "pass 6 data time 0.3", "pass 7 data time 0.5"])
    assert countdown is not None and countdown.iteration_time_s is None
    assert loading is not None and loading.iteration_time_s is None


# -- in the monitor ------------------------------------------------------------------------------------------


def test_the_monitor_reads_a_format_no_rule_knows_from_its_repeated_lines():
    text = "".join(f"@@ hop {n} => quality {q:.3f} (took total {t} sec)\n"
                   for n, q, t in ((300, 0.91, 930.0), (600, 0.93, 1860.0), (900, 0.94, 2790.0), (1200, 0.95, 3724.0)))
    p = report_of(text).progress
    assert p.current_step == 1200 and p.total_steps is None
    assert abs(p.iteration_time_s - 3.1) < 1e-6


def test_a_rule_read_counter_keeps_its_own_reading_and_the_shape_only_fills_the_time():
    text = ("Train Epoch: 2 [640/6400 (10%)]\tLoss: 0.5123\t(0.31 s/iter)\n"
            "Train Epoch: 2 [1280/6400 (20%)]\tLoss: 0.4988\t(0.29 s/iter)\n"
            "Train Epoch: 2 [1920/6400 (30%)]\tLoss: 0.4870\t(0.30 s/iter)\n")
    p = report_of(text).progress
    assert (p.current_step, p.total_steps) == (1920, 6400)
    assert p.iteration_time_s is not None and abs(p.iteration_time_s - 0.30) < 0.02


def test_a_non_finite_loss_said_in_words_on_a_repeated_print_is_a_divergence():
    text = ("[sweep 7] pass 301 cost 2.1 secs. Loss is 0.84\n"
            "[sweep 7] pass 302 cost 2.2 secs. Loss is 0.81\n"
            "[sweep 7] pass 303 cost 2.0 secs. Loss is Infinity\n")
    r = report_of(text)
    assert r.failure.category.value == "nan" and r.failure.onset_line == 3
    assert r.progress.current_step == 303 and math.isclose(r.progress.iteration_time_s, 2.1)


def test_lines_that_repeat_without_a_growing_number_give_no_progress():
    text = "".join(f"checkpoint written, val {v}, best {b}\n" for v, b in ((0.4, 0.4), (0.5, 0.4), (0.3, 0.3)))
    p = report_of(text).progress
    assert p.current_step is None and p.iteration_time_s is None


def test_an_index_over_classes_listed_once_each_is_no_counter():
    text = "".join(f"class [{i}], overlap: 0.{70 + i}\n" for i in range(6))
    assert reading_of(text.splitlines()) is None

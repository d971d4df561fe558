"""The shapes reader's numbers, found once per digit shape and sliced from each line, are those a fresh scan finds."""

import math
import re

from schedmate.logmon.digit_blind import ZEROS, digit_blind
from schedmate.logmon.number_spans import NumberSpans
from schedmate.logmon.repeated_shapes import _SPLIT, MAX_FIELDS, _field_value, parse, template_of

# lines of one digit shape each pair, so the second is read from the first one's cached spans
PAIRS = [
    ("step 120 loss = 0.53, (0.98 sec/step)", "step 345 loss = 1.07, (0.12 sec/step)"),
    ("fp16 iter 10 loss 2.5", "fp32 iter 99 loss 9.1"),  # a digit outside the numbers: template from the line
    ("elapsed 1:02:03 loss nan", "elapsed 9:59:58 loss nan"),  # a clock and nan: not plain float literals
    ("  Epoch [3/10]\titer  40 / 500  ", "  Epoch [7/12]\titer  41 / 900  "),  # whitespace runs collapse
    ("conv2d_1 took 7 ms", "conv3d_9 took 5 ms"),
]


def _same(a, b):
    return a[0] == b[0] and len(a[1]) == len(b[1]) and all(
        x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a[1], b[1]))


def test_the_number_scan_is_digit_blind_so_a_shape_holds_the_spans_of_every_line_of_it():
    assert digit_blind(_SPLIT)


def test_a_line_read_from_its_shapes_cached_spans_equals_a_fresh_parse():
    for first, second in PAIRS:
        assert first.translate(ZEROS) == second.translate(ZEROS)
        for text in (first, second):
            full = parse(text)
            assert full is not None
            assert _same(template_of(text, text.translate(ZEROS)), (full[0], full[2]))


def test_a_digit_outside_the_numbers_keeps_each_lines_own_template():
    spans = NumberSpans(_SPLIT, MAX_FIELDS)
    a = spans.template_of("fp16 iter 10", "fp00 iter 00", _field_value)
    b = spans.template_of("fp32 iter 11", "fp00 iter 00", _field_value)
    assert a == ("fp16 iter #", (10.0,)) and b == ("fp32 iter #", (11.0,))


def test_a_shape_without_numbers_or_with_too_many_has_no_template():
    spans = NumberSpans(_SPLIT, 3)
    assert spans.template_of("no numbers", "no numbers", _field_value) is None
    assert spans.template_of("1 2 3 4", "0 0 0 0", _field_value) is None
    assert spans.template_of("1 2 3", "0 0 0", _field_value) == ("# # #", (1.0, 2.0, 3.0))


def test_the_cache_is_bounded():
    spans = NumberSpans(re.compile(r"(\d+)"), 8, max_shapes=4)
    for i in range(10):
        text = "y" + "x" * i + " 1"
        assert spans.template_of(text, text.translate(ZEROS), float) == ("y" + "x" * i + " #", (1.0,))
    assert len(spans._plans) <= 4

"""Digit-blind regexes (their answer known from the line with its digits zeroed) and the per-shape scan built on them."""

import re

import pytest

from schedmate.logmon.digit_blind import ZEROS, digit_blind
from schedmate.logmon.matching import RuleSet
from schedmate.logmon.rules import builtin_rules


@pytest.mark.parametrize("pattern", [r"step (\d+)/(\d+)", r"loss[=:] ?[\d.eE+-]+", r"\bepoch\W+\w+", r"it/s|s/it",
                                     r"(?i:error)(?=.*\d)", r"[^\d\s]+", r"(?>\d+)x"])
def test_a_pattern_that_treats_every_digit_alike_is_blind(pattern):
    assert digit_blind(re.compile(pattern))


@pytest.mark.parametrize("pattern", [r"exit code 137", r"[1-9]\d*", r"(\d)\1", r"[^0]", r"\b0x[0-9a-f]+",
                                     r"(?P<a>x)?(?(a)\d|y)"])
def test_a_pattern_that_tells_digits_apart_is_not_blind(pattern):
    assert not digit_blind(re.compile(pattern))


LINES = ["step 120/500 loss 0.53", "step 999/500 loss 9.99", "exit code 137", "exit code 200", "Killed 137",
         "error (59) at 0x7f3a", "error (12) at 0x0000", "Epoch 3/10 [120/500] 2.31it/s", "Epoch 0/00 [000/000]"]


def test_the_builtin_rules_called_blind_answer_the_same_on_a_line_and_on_its_shape():
    blind = [r for r in builtin_rules() if digit_blind(r.regex)]
    assert len(blind) > 50
    for r in blind:
        for text in LINES:
            assert (r.regex.search(text) is None) == (r.regex.search(text.translate(ZEROS)) is None), (r.name, text)


def _ordered_scan(rules, text):
    low = text.lower()
    return next(((r, r.regex.search(text)) for r in rules
                 if (not r.needles or any(n in low for n in r.needles)) and r.regex.search(text)), (None, None))


def test_lines_of_one_shape_get_each_their_own_ordered_scans_answer():
    rules = builtin_rules()
    rs = RuleSet(rules, mru_size=0)  # no recent-rules shortcut: the scan alone
    for text in LINES + LINES[::-1]:
        want, got = _ordered_scan(rules, text), rs.match(text)
        assert got[0] is want[0], text
        assert (got[1] and got[1].span()) == (want[1] and want[1].span())


def test_a_recent_progress_rule_gives_way_to_an_error_printed_on_its_line():
    rules = builtin_rules()
    rs = RuleSet(rules)
    bar = "  4%|▍         | 120/3000 [00:40<16:00,  3.00it/s, loss=2.31]"
    for text in [bar, bar.replace("120", "121"), bar + "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
                 bar.replace("120", "122"), "step 5 exited with code 137", bar.replace("120", "123")]:
        want, got = _ordered_scan(rules, text), rs.match(text)
        assert got[0] is want[0], text


def test_the_fast_digit_shape_equals_the_translated_line_for_any_text():
    from schedmate.logmon.digit_blind import digit_shape

    for text in ("step 123/4560 loss 0.97", "", "\u0663\u0664 it/s 12", "\u4e2d 9 \U0001F600 8", "a\ud800b9\udfff",
                 "\ud800\udfff7", "\x00\r\t 5", "\u00e9t\u00e9 2024-05-01"):
        assert digit_shape(text) == text.translate(ZEROS)

"""A rule the model learned for a progress line moves the counters only once its counter has grown.

The rules here are written by hand in the shape `learn.py` synthesises (the line's literals, number slots);
they are added to the monitor's rule set as learned rules (`source="llm"`), as a stored rule would be.
"""

from __future__ import annotations

from schedmate.logmon.learn import NUM_PATTERN
from schedmate.logmon.monitor import Monitor
from schedmate.logmon.rules import Rule

HEAD = "".join(f"booting shard {k} of the input pipeline\n" for k in range(1, 9))


def _feed(head: str, learned: Rule, tail: str):
    mon = Monitor()
    mon.feed(head)
    assert mon.rules is not None
    mon.rules.add(learned)
    mon.feed(tail)
    return mon.finish()


def test_a_settings_line_taken_for_progress_by_a_learned_rule_moves_no_counter():
    rule = Rule("learned-progress-save", rf"^ *save_interval=(?P<step>{NUM_PATTERN}) *$", "progress",
                source="llm")
    r = _feed(HEAD, rule, "save_interval=500\nwarmup_ratio=0.1\nwriting checkpoints to ./ckpt\n")
    assert r.progress.current_step is None


def test_a_learned_progress_rule_whose_counter_grows_gives_every_reading_it_held():
    rule = Rule("learned-progress-tick", rf"^ *tick (?P<step>{NUM_PATTERN}) +obj=(?P<loss>{NUM_PATTERN}) *$",
                "progress", source="llm")
    r = _feed(HEAD, rule, "".join(f"tick {k} obj={3 - k / 10:.2f}\n" for k in range(5, 30, 5)))
    assert r.progress.current_step == 25
    assert abs(r.progress.last_loss - 0.5) < 1e-9


def test_a_learned_rule_that_repeats_one_value_never_counts():
    rule = Rule("learned-progress-cfg", rf"^ *seed (?P<step>{NUM_PATTERN}) fixed *$", "progress", source="llm")
    r = _feed(HEAD, rule, "seed 42 fixed\n" * 4)
    assert r.progress.current_step is None

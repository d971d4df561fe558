"""What reaches the model, and how learned rules live beside the structured-print reader (a recording stand-in
for the assistant; the real server is exercised in test_llm.py)."""

from __future__ import annotations

from schedmate.logmon.monitor import Diagnosis, Monitor, Proposal
from schedmate.logmon.rules import Rule


class RecordingAssistant:
    """Answers every proposal with `benign` and every diagnosis with `other`, and records what it was shown."""

    def __init__(self) -> None:
        self.calls = 0
        self.proposed: list[str] = []
        self.diagnosed: list[str] = []

    def propose(self, lines: list[str]) -> list[Proposal]:
        self.calls += 1
        self.proposed += lines
        return [Proposal(line=line, kind="benign") for line in lines]

    def diagnose(self, window: list[str], onset: int) -> Diagnosis | None:
        self.calls += 1
        self.diagnosed.append(window[onset])
        return Diagnosis(category="other", root_cause="stand-in")


STEPS = "".join(f"step {s}/900 | loss {2 - s / 900:.3f} | 0.40s/it\n" for s in range(10, 100, 10))


def test_the_source_lines_a_traceback_quotes_are_not_sent_to_the_model():
    a = RecordingAssistant()
    mon = Monitor(assistant=a)
    mon.feed(STEPS + "Traceback (most recent call last):\n"
             "  File \"/opt/lib/queue_utils.py\", line 41, in get\n"
             "    if not self._poll(timeout): raise QueueFailure(self.error_count)\n"
             "  File \"/opt/lib/queue_utils.py\", line 77, in _poll\n"
             "    return self._wait_for(timeout_error_budget)\n"
             "WorkQueueStall: the shard reader failed 3 times\n")
    r = mon.finish()
    assert a.diagnosed == ["WorkQueueStall: the shard reader failed 3 times"]
    assert r.failure.failed and r.failure.onset_line == 10


def test_structured_lines_are_read_without_asking_the_model():
    a = RecordingAssistant()
    mon = Monitor(assistant=a)
    rows = "".join(f"| {i:<4} | {3 - i / 10:.3f} | {1.5 * i:.2f}s |\n" for i in range(1, 6))
    block = "".join(f"| {k:<18} | {v:<8} |\n" for k, v in (("train/", ""), ("   value_loss", "0.0213"),
                                                           ("   entropy_loss", "-1.08"), ("   n_updates", "5120")))
    mon.feed("| Iter | Loss  | Elapsed Time |\n" + rows + "iteration: 6, loss: 2.4, time: 1.5\n" + block)
    r = mon.finish()
    assert a.calls == 0
    assert r.progress.current_step == 6


def test_a_rule_learned_for_a_table_line_does_not_take_it_from_the_table_reader():
    mon = Monitor()
    block = "".join(f"| {k:<18} | {v:<8} |\n" for k, v in (("time/", ""), ("   fps", "900"), ("   iterations", "{i}"),
                                                           ("   time_elapsed", "{e}"), ("   n_updates", "{u}")))
    text = "".join("-" * 33 + "\n" + block.format(i=i, e=4 * i, u=10 * i) + "-" * 33 + "\n" for i in range(10, 16))
    head, tail = text[: len(text) // 3], text[len(text) // 3:]
    mon.feed(head)
    assert mon.rules is not None
    mon.rules.add(Rule("learned-benign-iterations", r"\| +iterations +\| +\d+ +\|", "benign", ("iterations",),
                       source="llm"))
    mon.feed(tail)
    r = mon.finish()
    assert r.progress.current_step == 15
    assert abs(r.progress.iteration_time_s - 4.0) < 1e-9


def test_a_metric_named_like_an_error_is_not_diagnosed_but_a_status_number_is():
    a = RecordingAssistant()
    mon = Monitor(assistant=a)
    mon.feed(STEPS + "  mean_td_error: -3038.25\n  val_error_rate: 0.125\n  td_error:\n  - 12.5\n"
             + STEPS.replace("step ", "step 1"))
    assert not mon.finish().failure.failed and a.diagnosed == []
    a = RecordingAssistant()
    mon = Monitor(assistant=a)
    mon.feed(STEPS + "Worker failure signal: 9\n")
    mon.finish()
    assert a.diagnosed == ["Worker failure signal: 9"]


def test_a_failure_the_rules_found_is_not_displaced_by_an_earlier_line_the_model_diagnosed():
    a = RecordingAssistant()
    mon = Monitor(assistant=a)
    mon.feed("loading data\nthe run shows an error message..\n" + STEPS[:60] +
             "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
             "memory (shm).\n")
    r = mon.finish()
    assert a.diagnosed == ["the run shows an error message.."]
    assert r.failure.category.value == "dataloader" and r.failure.source == "rule"


def test_a_rule_learned_from_a_line_matches_that_line_s_template_only():
    from schedmate.logmon.learn import build_rule

    rule = build_rule("        td_error:", "error:user_code", {})
    assert rule.regex.search("  td_error:") is not None
    assert rule.regex.search("        mean_td_error: -3038.25") is None
    step = build_rule("it#120 | l=2.31", "progress", {"n1": "step", "n2": "loss"})
    assert step.regex.search("it#130 | l=2.2") is not None and step.regex.search("[eval] it#130 | l=2.2") is None

"""The label audit compares blind labels with the corpus by the scorers' own tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.realjobs.label_audit import AUDIT_DIR, agree, compare, read_audit


def test_params_within_the_scorers_tolerance_agree_and_further_apart_do_not() -> None:
    assert agree("params", 1.0e8, 1.4e8)
    assert not agree("params", 1.0e8, 1.6e8)


def test_null_agrees_only_with_null() -> None:
    assert agree("train_steps", None, None)
    assert not agree("train_steps", None, 1000)
    assert not agree("epochs", 3, None)


def test_a_step_counter_of_zero_agrees_with_zero() -> None:
    assert agree("current_step", 0, 0)


def test_iteration_time_agrees_within_twenty_percent() -> None:
    assert agree("iteration_time_s", 1.0, 1.15)
    assert not agree("iteration_time_s", 1.0, 1.3)


def test_an_audit_row_without_labels_is_refused_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "x_test_code_blind.jsonl"
    bad.write_text('{"id": "a/b:c", "labels": {}}\n{"id": "a/b:d"}\n')
    with pytest.raises(ValueError, match=":2: an audit row needs"):
        read_audit(bad)


def test_an_audited_id_that_is_not_in_the_corpus_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "x_test_code_blind.jsonl"
    bad.write_text('{"id": "nobody/nothing:none", "labels": {"params": 1}}\n')
    with pytest.raises(ValueError, match="not in the corpus"):
        compare(bad)


@pytest.mark.parametrize("path", sorted(AUDIT_DIR.glob("*_blind.jsonl")), ids=lambda p: p.name)
def test_every_committed_audit_covers_corpus_items_and_mostly_agrees(path: Path) -> None:
    compared, disagreements = compare(path)
    assert compared > 0
    # a label set that disagrees with a careful blind reading on more than one field in ten needs a
    # re-audit, not a score
    assert len(disagreements) <= 0.1 * compared

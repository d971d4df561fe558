"""The static pass (with derivation, no LLM) on every dataset job: each field it fills equals the label."""

from __future__ import annotations

import pytest

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.evaluate import flat_label, is_correct, load_labels

from .codeprof_support import DATASET

LABELS = load_labels(DATASET)


def test_the_dataset_has_at_least_forty_labelled_jobs_each_with_a_command():
    assert len(LABELS) >= 40
    for d in LABELS:
        assert (DATASET / "jobs" / d["job"] / "command.txt").read_text().strip(), d["job"]


@pytest.mark.parametrize("label", LABELS, ids=[d["job"] for d in LABELS])
def test_every_field_the_static_pass_fills_equals_the_label(label):
    prof = analyze_code(DATASET / "jobs" / label["job"], use_llm=False)
    want = flat_label(label)
    wrong = {
        name: (f.value, want.get(name), f.source, f.evidence)
        for name, f in prof.facts.items()
        if name in want and f.value is not None and not is_correct(name, want[name], f.value)
    }
    assert not wrong, f"static pass disagrees with the label (value, label, source, evidence): {wrong}"
    for name, f in prof.facts.items():
        if f.source == "static":
            assert f.evidence, f"{name} has no evidence"


def test_static_facts_carry_file_line_or_cmd_evidence():
    prof = analyze_code(DATASET / "jobs" / "megatron_gpt_tp8_pp4", use_llm=False)
    assert prof.facts["parallelism.tensor"].evidence[0].startswith("examples/pretrain_gpt_22b.sh:")
    assert prof.facts["framework"].source == "static"
    assert prof.facts["grad_accum_steps"].source == "derived" and prof.value("grad_accum_steps") == 256

"""With the per-GPU batch and the GPU count known and no accumulation setting in the code read, the global batch
follows even when no framework was recognised."""

from __future__ import annotations

from schedmate.codeprof.derive import derive
from schedmate.codeprof.facts import Fact


def test_micro_batch_and_gpus_without_an_accumulation_knob_give_the_global_batch():
    facts = {"micro_batch_size": Fact(value=8, evidence=["conf.yaml:3"]), "num_gpus": Fact(value=2, evidence=["cmd"])}
    derive(facts, {}, accum_knob=False)
    assert facts["grad_accum_steps"].value == 1 and facts["global_batch_size"].value == 16


def test_an_accumulation_knob_somewhere_leaves_the_global_batch_open():
    facts = {"micro_batch_size": Fact(value=8, evidence=["conf.yaml:3"]), "num_gpus": Fact(value=2, evidence=["cmd"])}
    derive(facts, {}, accum_knob=True)
    assert "global_batch_size" not in facts

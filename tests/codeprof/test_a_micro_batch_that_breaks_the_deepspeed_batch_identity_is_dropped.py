"""DeepSpeed requires train_batch_size = micro x accumulation x data-parallel ranks: an argparse `--batch_size`
the script never hands to the engine, which cannot satisfy that with the config's values, is not the micro
batch; one that can is kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

TRAIN = """
import argparse

import deepspeed

parser = argparse.ArgumentParser()
parser.add_argument("-b", "--batch_size", default=BATCH, type=int)
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
engine, optimizer, loader, _ = deepspeed.initialize(args=args, model=model, model_parameters=params,
                                                    training_data=dataset)
for epoch in range(5):
    for batch in loader:
        engine.step()
"""


@pytest.mark.parametrize(("batch", "want"), [(64, None), (4, 4)])
def test_the_micro_batch_must_fit_the_config(tmp_path: Path, batch: int, want: int | None) -> None:
    cfg = {"train_batch_size": 64, "gradient_accumulation_steps": 4, "fp16": {"enabled": True}}
    make_job(tmp_path, {"train.py": TRAIN.replace("BATCH", str(batch)), "ds.json": json.dumps(cfg)})
    prof = analyze_code(tmp_path, command="deepspeed train.py --deepspeed --deepspeed_config ds.json", use_llm=False)
    assert prof.value("global_batch_size") == 64
    assert prof.value("micro_batch_size") == want

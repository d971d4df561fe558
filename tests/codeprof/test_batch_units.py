"""Batch settings in other words and units: accumulation named any way that says so, micro-batches per step,
Colossal-AI style `parallel = dict(tensor=dict(size=..))`, a per-rank micro-batch, and batches in tokens."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.batch_units import ACCUM_NAME, counted_in_tokens
from tests.codeprof.codeprof_support import make_job

YAML_JOB = """\
run:
  epochs: 2
  per_gpu_batch: 3
  grad_accumulation: {accum}
"""

ENTRY = """\
import argparse, yaml, torch
p = argparse.ArgumentParser()
p.add_argument("-C", "--cfg")
args = p.parse_args()
cfg = yaml.safe_load(open(args.cfg))
"""


def test_an_accumulation_setting_named_in_its_own_words_multiplies_the_global_batch(tmp_path: Path):
    wd = make_job(tmp_path, {"fit.py": ENTRY, "cfg/a.yaml": YAML_JOB.format(accum=5)})
    f = analyze_code(wd, "torchrun --nproc_per_node 2 fit.py -C cfg/a.yaml --per_gpu_batch 3", use_llm=False).facts
    assert f["grad_accum_steps"].value == 5
    for name in ("grad_accumulation", "gradient_accumulation_steps", "accum_batches", "num_accumulation_steps"):
        assert ACCUM_NAME.match(name), name
    for name in ("accuracy", "accum_loss_scale", "grad_clip", "accumulator"):
        assert not ACCUM_NAME.match(name), name


PY_CONFIG = """\
SEQ_LEN = 1024
data = dict(seq_len=SEQ_LEN, micro_num={micro_num}, micro_bsz=2, total_steps=900)
parallel = dict(zero1=dict(size=-1), tensor=dict(size={tp}, mode="1d"), pipeline=dict(size=1))
"""

PY_ENTRY = """\
import argparse, torch
p = argparse.ArgumentParser()
p.add_argument("--config")
args = p.parse_args()
"""


def test_micro_batches_per_step_and_a_nested_tensor_size_set_the_global_batch(tmp_path: Path):
    wd = make_job(tmp_path, {"launch.py": PY_ENTRY, "configs/small.py": PY_CONFIG.format(micro_num=3, tp=2)})
    f = analyze_code(wd, "torchrun --nproc_per_node=8 launch.py --config configs/small.py", use_llm=False).facts
    assert f["micro_batch_size"].value == 2 and f["grad_accum_steps"].value == 3
    assert f["parallelism.tensor"].value == 2
    assert f["global_batch_size"].value == 2 * 3 * (8 // 2) and f["train_steps"].value == 900


TOKENS_ENTRY = """\
import argparse
import torch

CONTEXT = 512


class LoaderSettings:
    def __init__(self, global_batch_size, seed=0):
        self.global_batch_size = global_batch_size


class StepSettings:
    def __init__(self, rank_microbatch_size, lr=1e-3):
        self.rank_microbatch_size = rank_microbatch_size


def build(opts):
    loader = LoaderSettings(
        global_batch_size=96 * 2048,  # counted in tokens
        seed=1,
    )
    step = StepSettings(
        rank_microbatch_size=4 * opts.sequence_length,
    )
    return loader, step


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--sequence-length", type=int, default=2048)
    opts = p.parse_args()
    build(opts)
"""


def test_a_batch_counted_in_tokens_is_read_in_sequences(tmp_path: Path):
    wd = make_job(tmp_path, {"pretrain.py": TOKENS_ENTRY})
    f = analyze_code(wd, "torchrun --nproc-per-node=6 pretrain.py", use_llm=False).facts
    assert f["seq_len"].value == 2048
    assert f["global_batch_size"].value == 96 and f["micro_batch_size"].value == 4
    assert f["grad_accum_steps"].value == 96 // (4 * 6)


def test_only_a_line_that_says_tokens_or_multiplies_by_the_length_counts_tokens():
    assert counted_in_tokens("    global_batch_size=64 * SEQ_LEN,")
    assert counted_in_tokens("    batch = 256 * 1024  # tokens per step")
    assert counted_in_tokens("    gbs=8 * cfg.max_seq_length,")
    assert not counted_in_tokens("    global_batch_size=256,  # sequences, not tokens")
    assert not counted_in_tokens("    global_batch_size=64 * num_nodes,")
    assert not counted_in_tokens("    batch_size=32,  # 32 x 2048 tokens")  # a count of sequences described


UNIT_ENTRY = """\
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--batch_unit", default="frames", choices=["frames", "sample"])
p.add_argument("--batch_size_per_gpu", type=int, default=24000)
p.add_argument("--epochs", type=int, default=9)
args = p.parse_args()
net = torch.nn.Linear(2, 2).cuda()
"""


def test_a_batch_counted_in_frames_is_no_sample_count_and_nothing_fills_it(tmp_path: Path):
    wd = make_job(tmp_path, {"speech_fit.py": UNIT_ENTRY})
    p = analyze_code(wd, "python speech_fit.py --batch_size_per_gpu 16000", use_llm=False)
    assert p.facts.get("micro_batch_size") is None and p.facts.get("global_batch_size") is None
    assert p.facts["epochs"].value == 9
    f = analyze_code(wd, "python speech_fit.py --batch_unit sample --batch_size_per_gpu 12", use_llm=False).facts
    assert f["micro_batch_size"].value == 12

"""The labelled log dataset and its evaluation."""

from __future__ import annotations

import collections
import importlib.util
import sys
from pathlib import Path

from schedmate.logmon.evaluate import evaluate_logs, load_labels, summarize

DATASET = Path(__file__).resolve().parents[2] / "eval" / "datasets" / "logs"


def test_the_dataset_has_at_least_60_logs_and_several_of_every_category():
    labels = load_labels(DATASET)
    assert len(labels) >= 60
    counts = collections.Counter(lab["category"] for lab in labels)
    for cat in ("oom", "nccl", "nan", "dataloader", "segfault", "node", "preempted", "user_code", "hang", "other",
                "none"):
        assert counts[cat] >= 2, (cat, counts)
    for lab in labels:
        assert (DATASET / lab["file"]).is_file()
        assert lab["failed"] == (lab["category"] != "none")


def test_the_committed_dataset_is_what_the_seeded_generator_writes(tmp_path):
    spec = importlib.util.spec_from_file_location("gen_logs", DATASET / "generate.py")
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen_logs"] = gen  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(gen)
    finally:
        del sys.modules["gen_logs"]
    gen.generate(tmp_path)
    for lab in load_labels(tmp_path):
        assert (tmp_path / lab["file"]).read_bytes() == (DATASET / lab["file"]).read_bytes(), lab["file"]


def test_evaluation_of_the_rule_path_gives_a_row_per_log_and_the_summary_metrics():
    df = evaluate_logs(DATASET, use_llm=False)
    assert len(df) == len(load_labels(DATASET))
    s = summarize(df)
    for key in ("category_macro_f1", "failed_accuracy", "step_exact", "total_exact", "iter_within_20pct",
                "detection_latency_lines_mean", "llm_calls_per_1k_lines_after_warmup"):
        assert key in s
    assert s["llm_calls"] == 0
    # the formats of the built-in frameworks are all read; only the novel formats need the LLM
    known = df[~df["scenario"].str.startswith("novel")]
    assert (known["category"] == known["pred_category"]).all()

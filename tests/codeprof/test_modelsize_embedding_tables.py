"""Recommenders sized from their embedding tables: cardinalities times width, with the stated dense towers."""

from __future__ import annotations

import textwrap
from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.convnets import mlp_params
from schedmate.codeprof.static.modelsize.embedding_tables import tables_params


def test_tables_alone_are_the_sum_of_cardinalities_times_the_width() -> None:
    assert tables_params([1000, 500, 20], 16) == 1520 * 16


def test_dlrm_towers_are_added_over_the_pairwise_interactions() -> None:
    n = tables_params([100, 200], 8, bottom=[32, 8], top=[16, 1], dense_features=13)
    assert n == 300 * 8 + mlp_params([13, 32, 8]) + mlp_params([3 + 8, 16, 1])


def test_a_reader_calls_cardinalities_and_an_embedding_calls_width_give_the_size(tmp_path: Path) -> None:
    (tmp_path / "wide_cross.py").write_text(textwrap.dedent("""
        import ctrlib

        solver = ctrlib.CreateSolver(batchsize=4096, vvgpu=[[0]], repeat_dataset=True)
        reader = ctrlib.DataReaderParams(source=["./data/train.txt"], slot_size_array=[5000, 1200, 33, 80000])
        model = ctrlib.Model(solver, reader)
        model.add(ctrlib.SparseEmbedding(workspace_size_per_gpu_in_mb=40, embedding_vec_size=32))
        model.compile()
        model.fit(max_iter=1000)
    """))
    got = analyze_code(tmp_path, "python3 wide_cross.py", use_llm=False).value("params")
    assert got == (5000 + 1200 + 33 + 80000) * 32


def test_flags_of_a_dlrm_style_run_give_tables_and_towers(tmp_path: Path) -> None:
    (tmp_path / "train_rank.py").write_text(textwrap.dedent("""
        import argparse
        import torch

        def main():
            p = argparse.ArgumentParser()
            p.add_argument("--num_embeddings_per_feature", type=str, default="4000,300,70")
            p.add_argument("--embedding_dim", type=int, default=16)
            p.add_argument("--dense_arch_layer_sizes", type=str, default="64,16")
            p.add_argument("--over_arch_layer_sizes", type=str, default="32,1")
            p.add_argument("--batch_size", type=int, default=512)
            args = p.parse_args()
            ranker = build_ranker(args)
            ranker.fit(args.batch_size)

        main()
    """))
    got = analyze_code(tmp_path, "python train_rank.py --embedding_dim 8 --dense_arch_layer_sizes 32,8",
                       use_llm=False).value("params")
    assert got == tables_params([4000, 300, 70], 8, bottom=[32, 8], top=[32, 1])

"""Forecasting transformers and linear forecasters sized from the argparse knobs their repositories share."""

from __future__ import annotations

import textwrap
from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.seq2seq_knobs import seq2seq_from_knobs, seq2seq_params


def test_the_paper_setting_of_a_two_plus_one_layer_512_wide_forecaster_is_about_10_5m() -> None:
    n = seq2seq_params(d_model=512, d_ff=2048, e_layers=2, d_layers=1, enc_in=7, dec_in=7, c_out=7)
    assert 1.03e7 < n < 1.07e7


def test_a_fourier_mixing_forecaster_is_not_counted_as_attention() -> None:
    assert seq2seq_from_knobs({"model": "FEDformer", "d_model": 512, "e_layers": 2}) is None


def test_a_decomposition_linear_forecaster_is_two_window_to_horizon_maps() -> None:
    got = seq2seq_from_knobs({"model": "DLinear", "d_model": 512, "e_layers": 2, "seq_len": 96, "pred_len": 24})
    assert got is not None and got[0] == 2 * (96 * 24 + 24)
    per_channel = seq2seq_from_knobs({"model": "NLinear", "d_model": 512, "e_layers": 2, "seq_len": 48,
                                      "pred_len": 12, "individual": True, "enc_in": 5})
    assert per_channel is not None and per_channel[0] == 5 * (48 * 12 + 12)


def test_argparse_defaults_and_script_flags_of_a_forecasting_run_give_its_size(tmp_path: Path) -> None:
    (tmp_path / "run.py").write_text(textwrap.dedent("""
        import argparse
        import torch
        from exp.forecast import ExpMain

        parser = argparse.ArgumentParser()
        parser.add_argument('--model', type=str, default='Informer')
        parser.add_argument('--enc_in', type=int, default=7)
        parser.add_argument('--dec_in', type=int, default=7)
        parser.add_argument('--c_out', type=int, default=7)
        parser.add_argument('--d_model', type=int, default=512)
        parser.add_argument('--n_heads', type=int, default=8)
        parser.add_argument('--e_layers', type=int, default=2)
        parser.add_argument('--d_layers', type=int, default=1)
        parser.add_argument('--d_ff', type=int, default=2048)
        parser.add_argument('--batch_size', type=int, default=32)
        parser.add_argument('--train_epochs', type=int, default=10)
        args = parser.parse_args()
        exp = ExpMain(args)
        exp.train()
    """))
    got = analyze_code(tmp_path, "python run.py --d_model 256 --d_ff 1024 --e_layers 3 --enc_in 21 "
                                 "--dec_in 21 --c_out 21", use_llm=False).value("params")
    assert got == seq2seq_params(256, 1024, 3, 1, 21, 21, 21)

"""A BART-style encoder-decoder config.json that the job builds its own model class from gives the size."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.hf_config import encoder_decoder_params, params_from_config_json

# our own shape: 6 + 6 layers of width 768, MLP 3072, a 40k vocabulary (BART-base-like)
SMALL_SEQ2SEQ = {"model_type": "pixelbart", "is_encoder_decoder": True, "d_model": 768, "encoder_layers": 6,
                 "decoder_layers": 6, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072,
                 "encoder_attention_heads": 12, "decoder_attention_heads": 12, "vocab_size": 40000}

ENTRY = """
    from dataclasses import dataclass, field
    from transformers import HfArgumentParser
    from pixelgen.model import PixelBart, PixelBartConfig

    @dataclass
    class ModelArguments:
        config_name: str = field(default=None)

    def main():
        (model_args,) = HfArgumentParser((ModelArguments,)).parse_args_into_dataclasses()
        config = PixelBartConfig.from_pretrained(model_args.config_name)
        model = PixelBart(config, seed=0)
        return model

    if __name__ == "__main__":
        main()
"""


def test_a_bart_base_shaped_config_counts_its_stacks_and_one_token_table() -> None:
    got = encoder_decoder_params(SMALL_SEQ2SEQ)
    # encoder 6 x 7.09M = 42.5M, decoder 6 x 9.45M = 56.7M, tokens 40000 x 768 = 30.7M
    assert got is not None and 1.29e8 < got[0] < 1.31e8
    assert params_from_config_json(SMALL_SEQ2SEQ) == got


def test_an_encoder_decoder_config_missing_a_stack_width_is_not_counted() -> None:
    partial = {k: v for k, v in SMALL_SEQ2SEQ.items() if k != "decoder_ffn_dim"}
    assert params_from_config_json(partial) is None


def test_the_config_of_the_model_class_the_job_builds_sizes_the_job(tmp_path: Path) -> None:
    (tmp_path / "shapes" / "small").mkdir(parents=True)
    (tmp_path / "shapes" / "small" / "config.json").write_text(json.dumps(SMALL_SEQ2SEQ))
    (tmp_path / "train.py").write_text(textwrap.dedent(ENTRY))
    got = analyze_code(tmp_path, "python train.py --config_name ./shapes/small", use_llm=False).value("params")
    want = encoder_decoder_params(SMALL_SEQ2SEQ)
    assert want is not None and got == want[0]


def test_a_config_handed_to_a_differently_named_model_class_is_not_the_whole_model(tmp_path: Path) -> None:
    (tmp_path / "shapes" / "small").mkdir(parents=True)
    (tmp_path / "shapes" / "small" / "config.json").write_text(json.dumps(SMALL_SEQ2SEQ))
    (tmp_path / "train.py").write_text(textwrap.dedent(ENTRY).replace("model = PixelBart(config, seed=0)",
                                                                      "model = CaptionAndPixels(config, seed=0)"))
    got = analyze_code(tmp_path, "python train.py --config_name ./shapes/small", use_llm=False).value("params")
    assert got is None

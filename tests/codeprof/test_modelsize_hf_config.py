"""A model built from a config.json shipped with the job is counted with the transformer formula."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.hf_config import params_from_config_json

# the published LLaMA-2-7B shape, written out as a config of our own
LLAMA2_7B_SHAPE = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
                   "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32,
                   "num_key_value_heads": 32, "vocab_size": 32000, "hidden_act": "silu", "rms_norm_eps": 1e-5,
                   "tie_word_embeddings": False}


def test_a_llama2_7b_shaped_config_counts_6_7b() -> None:
    got = params_from_config_json(LLAMA2_7B_SHAPE)
    assert got is not None and abs(got[0] - 6.74e9) < 0.02e9


def test_a_composite_or_encoder_decoder_config_is_not_counted_as_one_stack() -> None:
    assert params_from_config_json({**LLAMA2_7B_SHAPE, "vision_config": {"hidden_size": 1024}}) is None
    assert params_from_config_json({"d_model": 512, "num_layers": 6, "vocab_size": 32128,
                                    "is_encoder_decoder": True}) is None


def test_a_config_directory_loaded_by_the_entry_script_gives_the_size(tmp_path: Path) -> None:
    shape = {**LLAMA2_7B_SHAPE, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22,
             "num_key_value_heads": 4}
    (tmp_path / "model_cfg" / "small").mkdir(parents=True)
    (tmp_path / "model_cfg" / "small" / "config.json").write_text(json.dumps(shape))
    (tmp_path / "pretrain.py").write_text(textwrap.dedent("""
        from transformers import AutoConfig, AutoModelForCausalLM, Trainer

        def main():
            cfg = AutoConfig.from_pretrained("model_cfg/small")
            model = AutoModelForCausalLM.from_config(cfg)
            Trainer(model=model).train()

        main()
    """))
    got = analyze_code(tmp_path, "python pretrain.py", use_llm=False).value("params")
    want = params_from_config_json(shape)
    assert want is not None and got == want[0] and 1.0e9 < got < 1.2e9  # a TinyLlama-like 1.1B shape


def test_a_config_handed_to_the_jobs_own_composite_model_is_not_the_whole_model(tmp_path: Path) -> None:
    (tmp_path / "text_part").mkdir()
    (tmp_path / "text_part" / "config.json").write_text(json.dumps({**LLAMA2_7B_SHAPE, "num_hidden_layers": 4}))
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        from transformers import LlamaConfig
        from mylib.fusion import ImageTextModel

        def main():
            text_cfg = LlamaConfig.from_pretrained("text_part")
            model = ImageTextModel(text_cfg, vision_width=1024)
            opt = torch.optim.AdamW(model.parameters())
            for batch in range(10):
                opt.step()

        main()
    """))
    assert analyze_code(tmp_path, "python train.py", use_llm=False).value("params") is None

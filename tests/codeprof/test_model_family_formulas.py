"""Model sizes from the published architecture formulas of model families (a function of the family's knobs),
checked against well-known published sizes, and read from the places jobs state the knobs: a config section,
command-line flags, the keyword arguments of the call that builds the model, an LM config with grouped KV
heads or experts."""

from __future__ import annotations

import pytest

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.families import decoder_lm_params, unet_params, vit_params
from schedmate.codeprof.static.modelsize.knobs import lm_from_knobs, unet_from_knobs
from tests.codeprof.codeprof_support import make_job


def test_the_ddpm_unet_formula_gives_the_published_cifar10_and_256px_sizes():
    assert unet_params(128, (1, 2, 2, 2), 2, (16,), 32) == 35_746_307  # DDPM CIFAR-10: 35.7M
    assert unet_params(128, (1, 1, 2, 2, 4, 4), 2, (16,), 256) == pytest.approx(114e6, rel=0.01)  # LSUN: 114M


def test_the_adm_unet_with_scale_shift_norm_and_resblock_resampling_gives_the_imagenet64_size():
    n = unet_params(192, (1, 2, 3, 4), 3, (32, 16, 8), 64, out_ch=6, scale_shift=True, updown=True,
                    num_classes=1000)
    assert n == pytest.approx(296e6, rel=0.01)  # ADM ImageNet-64 (improved DDPM / consistency models): 296M


def test_the_decoder_formula_gives_gpt2_llama2_llama3_and_mixtral_sizes():
    assert decoder_lm_params(12, 768, 12, 3072, 50257, gated=False, tied=True, positions=1024, bias=True) \
        == 124_439_808  # GPT-2 small
    assert decoder_lm_params(32, 4096, 32, 11008, 32000) == 6_738_415_616  # LLaMA-2-7B
    assert decoder_lm_params(32, 4096, 32, 14336, 128256, kv_heads=8) == 8_030_261_248  # LLaMA-3-8B (GQA)
    assert decoder_lm_params(32, 4096, 32, 14336, 32000, kv_heads=8, experts=8) == 46_702_792_704  # Mixtral


def test_the_vit_formula_gives_the_base_and_large_sizes():
    assert vit_params(16, 768, 12) == 86_567_656  # ViT-B/16
    assert vit_params(16, 1024, 24) == pytest.approx(304e6, rel=0.01)  # ViT-L/16


def test_adm_flags_with_an_empty_channel_mult_take_the_multipliers_of_the_image_size():
    got = unet_from_knobs({"num_channels": 96, "num_res_blocks": 2, "attention_resolutions": "16,8",
                           "image_size": 64, "channel_mult": "", "use_scale_shift_norm": "True"})
    assert got is not None
    assert got[0] == unet_params(96, (1, 2, 3, 4), 2, (16, 8), 64, scale_shift=True)


def test_knobs_that_do_not_describe_a_unet_or_an_lm_give_nothing():
    assert unet_from_knobs({"num_res_blocks": 2}) is None
    assert unet_from_knobs({"nf": 64, "num_res_blocks": 2, "image_size": 512}) is None
    assert lm_from_knobs({"hidden_size": 256, "num_layers": 4}) is None  # no vocabulary


def test_a_maxtext_style_config_with_base_prefixed_knobs_is_a_gated_decoder():
    got = lm_from_knobs({"base_emb_dim": 512, "base_num_query_heads": 4, "base_num_kv_heads": 2,
                         "base_mlp_dim": 1400, "base_num_decoder_layers": 6, "head_dim": 128,
                         "vocab_size": 20_000, "mlp_activations": ["silu", "linear"],
                         "logits_via_embedding": False})
    assert got is not None
    assert got[0] == decoder_lm_params(6, 512, 4, 1400, 20_000, kv_heads=2, head_dim=128, gated=True, tied=False)


SCORE_JOB = {
    "cfg/tiny_church.yaml": """
        data:
          image_size: 64
        model:
          nf: 64
          ch_mult: [1, 2, 2, 4]
          num_res_blocks: 1
          attn_resolutions: [16]
        training:
          batch_size: 32
          n_iters: 5000
    """,
    "trainer.py": """
        import sys
        import yaml
        cfg = yaml.safe_load(open(sys.argv[1]))
        for step in range(cfg["training"]["n_iters"]):
            pass
    """,
}


def test_a_unet_described_by_a_config_section_is_counted_with_the_data_resolution(tmp_path):
    make_job(tmp_path, SCORE_JOB)
    f = analyze_code(tmp_path, "python trainer.py cfg/tiny_church.yaml", use_llm=False).facts
    assert f["params"].value == unet_params(64, (1, 2, 2, 4), 1, (16,), 64)
    assert any(e.startswith("cfg/tiny_church.yaml") for e in f["params"].evidence)


TF_UNET_JOB = {
    "nets/denoiser.py": """
        def unet(x, t, *, ch, ch_mult, num_res_blocks, attn_resolutions, out_ch, dropout=0.0):
            return x
    """,
    "run_faces.py": """
        import fire
        from nets import denoiser

        class Model:
            def _denoise(self, x, t):
                return denoiser.unet(x, t, ch=96, ch_mult=(1, 1, 2, 2, 4), num_res_blocks=2,
                                     attn_resolutions=(16,), out_ch=3, dropout=0.1)

        def train(exp_name, total_bs=48, lr=1e-4):
            pass

        if __name__ == "__main__":
            fire.Fire()
    """,
}


def test_a_unet_built_by_a_call_with_its_knobs_as_keywords_is_counted(tmp_path):
    make_job(tmp_path, TF_UNET_JOB)
    f = analyze_code(tmp_path, "python run_faces.py train --exp_name faces", use_llm=False).facts
    # no image size anywhere: attention goes to the second level, a small share of the total
    assert f["params"].value == unet_params(96, (1, 1, 2, 2, 4), 2, (16,))
    assert any(e.startswith("run_faces.py:") for e in f["params"].evidence)


GQA_JOB = {
    "configs/moe_small.json": """
        {"model_type": "mixtral", "hidden_size": 768, "intermediate_size": 2048, "num_hidden_layers": 10,
         "num_attention_heads": 12, "num_key_value_heads": 4, "num_local_experts": 4, "vocab_size": 32000,
         "rms_norm_eps": 1e-5, "tie_word_embeddings": false}
    """,
    "pretrain.py": """
        import argparse, json
        from transformers import MixtralConfig, MixtralForCausalLM
        ap = argparse.ArgumentParser()
        ap.add_argument("--model_config", default="configs/moe_small.json")
        ap.add_argument("--batch_size", type=int, default=8)
        ap.add_argument("--max_steps", type=int, default=2000)
        args = ap.parse_args()
        model = MixtralForCausalLM(MixtralConfig(**json.load(open(args.model_config))))
    """,
}


def test_an_lm_config_with_grouped_kv_heads_and_experts_uses_the_decoder_formula(tmp_path):
    make_job(tmp_path, GQA_JOB)
    f = analyze_code(tmp_path, "python pretrain.py --model_config configs/moe_small.json", use_llm=False).facts
    want = decoder_lm_params(10, 768, 12, 2048, 32000, kv_heads=4, experts=4, gated=True, tied=False)
    assert f["params"].value == pytest.approx(want, rel=0.01)


ADM_DEFAULTS_JOB = {
    "diffu/script_util.py": """
        def model_defaults():
            return dict(image_size=64, num_channels=96, num_res_blocks=2, attention_resolutions="16,8",
                        use_scale_shift_norm=True, learn_sigma=False, class_cond=False)

        def add_dict_to_argparser(parser, d):
            for k, v in d.items():
                parser.add_argument(f"--{k}", default=v, type=type(v))
    """,
    "train_img.py": """
        import argparse
        from diffu.script_util import model_defaults, add_dict_to_argparser
        parser = argparse.ArgumentParser()
        parser.add_argument("--batch_size", type=int, default=16)
        add_dict_to_argparser(parser, model_defaults())
        args = parser.parse_args()
    """,
}


def test_flags_given_on_the_command_line_beat_a_unet_defaults_table(tmp_path):
    make_job(tmp_path, ADM_DEFAULTS_JOB)
    f = analyze_code(tmp_path, "python train_img.py --num_channels 64 --num_res_blocks 3", use_llm=False).facts
    assert f["params"].value == unet_params(64, (1, 2, 3, 4), 3, (16, 8), 64, scale_shift=True)


DEFAULT_CONFIG_JOB = {
    "pretrain_mim.py": """
        from dataclasses import dataclass, field
        from typing import Optional
        from transformers import HfArgumentParser, TrainingArguments, ViTMAEConfig, ViTMAEForPreTraining

        @dataclass
        class ModelArguments:
            model_name_or_path: Optional[str] = field(default=None)
            config_name: Optional[str] = field(default=None)

        parser = HfArgumentParser((ModelArguments, TrainingArguments))
        model_args, training_args = parser.parse_args_into_dataclasses()
        if model_args.config_name:
            config = ViTMAEConfig.from_pretrained(model_args.config_name)
        elif model_args.model_name_or_path:
            config = ViTMAEConfig.from_pretrained(model_args.model_name_or_path)
        else:
            config = ViTMAEConfig()
        model = ViTMAEForPreTraining(config)
    """,
}


def test_a_library_config_class_built_without_arguments_is_its_reference_model(tmp_path):
    make_job(tmp_path, DEFAULT_CONFIG_JOB)
    f = analyze_code(tmp_path, "python pretrain_mim.py --output_dir out --per_device_train_batch_size 32",
                     use_llm=False).facts
    assert f["params"].value == pytest.approx(111.9e6, rel=0.01)  # the MAE ViT-B reference model


def test_a_config_or_model_name_on_the_command_line_takes_the_place_of_the_default_config(tmp_path):
    make_job(tmp_path, DEFAULT_CONFIG_JOB)
    f = analyze_code(tmp_path, "python pretrain_mim.py --output_dir out --config_name my/cfg", use_llm=False).facts
    assert f.get("params") is None or f["params"].value != pytest.approx(111.9e6, rel=0.01)


NAMED_BACKBONE_JOB = {
    "train.py": """
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("--model", default="resnet50")
        ap.add_argument("-b", "--batch-size", type=int, default=64)
        ap.add_argument("--epochs", type=int, default=100)
        args = ap.parse_args()
    """,
}


@pytest.mark.parametrize("name,size", [("fastvit_sa12", 10.9e6), ("volo_d2", 58.7e6), ("pvt_v2_b2", 25.4e6),
                                       ("efficientformerv2_s1", 6.1e6), ("hornet_base_gf", 87e6)])
def test_efficient_vision_backbones_named_on_the_command_line_have_their_published_sizes(tmp_path, name, size):
    make_job(tmp_path, NAMED_BACKBONE_JOB)
    f = analyze_code(tmp_path, f"python train.py --model {name}", use_llm=False).facts
    assert f["params"].value == pytest.approx(size, rel=0.02)


FINETUNE = """
    import argparse, yaml
    ap = argparse.ArgumentParser()
    ap.add_argument("--cfg", default="cfg/vit_wide.yaml")
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()
    cfg = yaml.safe_load(open(args.cfg))
"""


def test_a_vit_described_by_patch_width_and_depth_in_a_config_is_counted(tmp_path):
    make_job(tmp_path, {"finetune.py": FINETUNE, "cfg/vit_wide.yaml": """
        model:
          patch_size: 14
          embed_dim: 512
          depth: 10
          mlp_ratio: 3
          img_size: 168
          num_classes: 100
    """})
    f = analyze_code(tmp_path, "python finetune.py --cfg cfg/vit_wide.yaml", use_llm=False).facts
    assert f["params"].value == vit_params(14, 512, 10, 3.0, image=168, classes=100)


def test_a_diffusion_transformer_is_not_read_as_a_plain_vit(tmp_path):
    make_job(tmp_path, {"finetune.py": FINETUNE, "cfg/vit_wide.yaml": """
        model:
          patch_size: 2
          hidden_size: 1152
          depth: 28
          learn_sigma: true
    """})
    f = analyze_code(tmp_path, "python finetune.py --cfg cfg/vit_wide.yaml", use_llm=False).facts
    assert f.get("params") is None or f["params"].value != vit_params(2, 1152, 28)

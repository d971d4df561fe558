"""The table of well-known model names: published sizes, first specific row wins, sizes in names."""

import re

import pytest

from schedmate.codeprof import known
from schedmate.codeprof.known_models import KNOWN_MODELS


@pytest.mark.parametrize(
    ("name", "canonical", "params"),
    [
        ("meta-llama/Llama-2-7b-hf", "llama-7b", 6.7e9),
        ("THUDM/chatglm2-6b", "chatglm-6b", 6.2e9),
        ("bigscience/bloom-7b1", "bloom-7b1", 7.07e9),
        ("mask_rcnn_R_50_FPN_3x", "mask-rcnn-r50-fpn", 44.4e6),
        ("fasterrcnn_resnet50_fpn", "faster-rcnn-r50-fpn", 41.8e6),
        ("yolov7-tiny", "yolov7-tiny", 6.2e6),
        ("yolox_s", "yolox-s", 9.0e6),
        ("vit_b_32", "vit-base-32", 88.2e6),
        ("vit_base_patch16_224.augreg_in21k", "vit-base", 86.6e6),
        ("resnet50d", "resnet50", 25.6e6),
        ("DiT_XL_2", "dit-xl-2", 675e6),
        ("google/mt5-base", "mt5-base", 580e6),
        ("convnextv2_base", "convnextv2-base", 89e6),
        ("convnext_base", "convnext-base", 89e6),
        ("xcit_small_12_p16", "xcit-small-12", 26e6),
    ],
)
def test_a_well_known_model_name_gives_its_published_size(name, canonical, params):
    hit = known.lookup_model(name)
    assert hit is not None and hit[0] == canonical and hit[2] == pytest.approx(params)


def test_a_name_that_states_its_size_needs_no_row():
    assert known.lookup_model("EleutherAI/pythia-1.4b-deduped")[2] == pytest.approx(1.4e9)
    assert known.lookup_model("mistralai/Mixtral-8x7B-v0.1")[0] == "mixtral-8x7b"


def test_an_unknown_name_without_a_size_gives_nothing():
    assert known.lookup_model("my_model") is None
    assert known.lookup_model("resnet50_custom_head_v9_x") is None


def test_every_row_of_the_table_compiles_and_has_a_plausible_size():
    for pattern, canonical, family, params in KNOWN_MODELS:
        re.compile(pattern)
        assert 1e5 <= params <= 3e12, canonical
        assert family, canonical


def test_a_name_whose_variant_follows_a_slash_keeps_it():
    assert known.normalise_name("DiT-XL/2") == "dit-xl-2" and known.lookup_model("DiT-B/4")[0] == "dit-b"
    assert known.normalise_name("meta-llama/Llama-2-7b-hf") == "llama-2-7b-hf"


def test_a_yolo_style_detector_is_sized_by_its_depth_and_width_multipliers(tmp_path):
    from schedmate.codeprof.analyzer import analyze_code

    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "yolov5_s_coco.py").write_text(
        "deepen_factor = 0.33\nwiden_factor = 0.5\nmodel = dict(backbone=dict(type='YOLOv5CSPDarknet',"
        " deepen_factor=deepen_factor, widen_factor=widen_factor))\ntrain_dataloader = dict(batch_size=16)\n")
    (tmp_path / "train.py").write_text("import argparse\np = argparse.ArgumentParser()\np.add_argument('config')\n")
    f = analyze_code(tmp_path, "python train.py configs/yolov5_s_coco.py", use_llm=False).facts
    assert f["model_name"].value == "yolov5s" and f["params"].value == 7.2e6
    (tmp_path / "configs" / "yolov5_s_coco.py").write_text("deepen_factor = 0.5\nwiden_factor = 0.5\n")
    f = analyze_code(tmp_path, "python train.py configs/yolov5_s_coco.py", use_llm=False).facts
    assert f.get("params") is None  # a pair no published scale has: no guess


def test_a_local_model_directory_named_after_a_known_model_names_it():
    assert known.lookup_in_path("/path/to/llama-7B/hf")[0] == "llama-7b"
    assert known.lookup_in_path("/data/ckpt/7b/final") is None  # a bare size is no evidence


def test_an_evaluation_or_reference_model_is_not_the_model_trained(tmp_path):
    from schedmate.codeprof.analyzer import analyze_code

    (tmp_path / "cfg.yaml").write_text("model:\n  hidden_size: 768\n  n_blocks: 12\n  tie_word_embeddings: false\n"
                                       "data:\n  tokenizer_name_or_path: gpt2\n"
                                       "eval:\n  gen_ppl_eval_model_name_or_path: gpt2-large\n")
    (tmp_path / "train.py").write_text(
        "import argparse\nimport yaml\nimport transformers\np = argparse.ArgumentParser()\np.add_argument('--config')\n"
        "a = p.parse_args()\ncfg = load(a.config)\n"
        "eval_model = transformers.AutoModelForCausalLM.from_pretrained(cfg.eval.gen_ppl_eval_model_name_or_path)\n")
    f = analyze_code(tmp_path, "python train.py --config cfg.yaml", use_llm=False).facts
    assert f.get("model_name") is None
    # 12 x 12 d^2 for the blocks, plus untied input and output embeddings over GPT-2's vocabulary
    assert f["params"].value == 12 * 12 * 768 ** 2 + 2 * 50257 * 768

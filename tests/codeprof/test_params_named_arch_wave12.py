"""Models named by an architecture key: published variants of families that training repositories name by a
size word or depth, a config's model section completing a family name with its depth or backbone variant, a
`--backbone` option completing the job's own detector class, and demo calls under another module's
`__main__` guard that never run."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from schedmate.codeprof import known
from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.params import CONFIG, ParamSpace
from schedmate.codeprof.static.model_keys import (
    name_from_backbone_option,
    name_from_model_section,
    runs_only_as_program,
)


@pytest.mark.parametrize(
    ("name", "published"),
    [
        ("convit_tiny", 6e6),  # ConViT paper Table 1
        ("convit_base", 86e6),
        ("t2t_vit_14", 21.5e6),  # T2T-ViT paper Table 2
        ("t2t_vit_24", 64.1e6),
        ("fan_small_12_p4_hybrid", 26.3e6),  # FAN README
        ("fan_base_18_p16_224", 54.0e6),
        ("vssm1_small_0229", 50e6),  # VMamba README
        ("vmamba_base", 89e6),
        ("pose_resnet_152", 68.6e6),  # HRNet paper Table 1 (SimpleBaseline)
        ("pose_hrnet_w32", 28.5e6),
        ("segformer_mit_b3", 47.3e6),  # SegFormer paper Table 1
        ("DDRNet-23slim", 5.7e6),  # DDRNet paper
        ("yolor_p6", 37.2e6),  # YOLOv7 paper comparison table
        ("yolor-w6", 79.8e6),
        ("conditional_detr_r101", 63e6),  # Conditional DETR README
        ("efficientdet-d0", 3.9e6),  # EfficientDet paper Table 2
        ("efficientdet_d7", 51.9e6),  # D7 is D6's network at a larger input
        ("SiT-XL/2", 675e6),  # SiT uses DiT's backbone sizes
        ("sit_b_4", 130e6),
        ("someorg/hubert-large-ll60k", 316e6),  # HuBERT paper
        ("mobilenetv2_140", 6.1e6),  # MobileNetV2 paper, width 1.4
    ],
)
def test_a_named_variant_of_a_published_family_gets_its_published_size(name: str, published: float) -> None:
    hit = known.lookup_model(name)
    assert hit is not None and hit[2] == published


@pytest.mark.parametrize("name", ["t2t_vit_15", "yolor_p7", "pose_resnet_34", "fan_tiny_12_p16_384", "ddrnet_23x", "efficientdet", "sit",
                                  "mobilenetv2_075"])
def test_a_variant_no_paper_publishes_stays_unknown(name: str) -> None:
    assert known.lookup_model(name) is None


def _space(values: dict[str, object]) -> ParamSpace:
    sp = ParamSpace()
    for k, v in values.items():
        sp.set(k, v, f"exp.yaml:{k}", CONFIG)
    return sp


def test_a_model_family_and_the_depth_under_the_same_section_make_one_name() -> None:
    sp = _space({"model.name": "pose_resnet", "model.extra.num_layers": 101, "train.batch_size": 16})
    assert name_from_model_section(sp) == ("pose_resnet_101", ["exp.yaml:model.name", "exp.yaml:model.extra.num_layers"])


def test_a_family_and_a_backbone_variant_make_one_name_and_a_variant_may_carry_the_family() -> None:
    assert name_from_model_section(_space({"model.name": "SegFormer", "model.backbone": "MiT-B3"}))[0] \
        == "segformer_mit-b3"  # type: ignore[index]
    assert name_from_model_section(_space({"model.name": "DDRNet", "model.backbone": "DDRNet-39"}))[0] \
        == "ddrnet-39"  # type: ignore[index]


def test_a_depth_the_table_does_not_know_gives_no_name() -> None:
    assert name_from_model_section(_space({"model.name": "pose_resnet", "model.extra.num_layers": 34})) is None
    # a widened network is not the published depth's size
    widened = {"model.trunk.name": "pose_resnet", "model.trunk.params.depth": 50, "model.trunk.params.width_multiplier": 2}
    assert name_from_model_section(_space(widened)) is None
    # a depth outside the model section is not the model's
    assert name_from_model_section(_space({"model.name": "pose_resnet", "loss.num_layers": 50})) is None


def test_a_backbone_option_completes_only_a_detector_the_job_defines() -> None:
    sp = ParamSpace()
    sp.set("backbone", "resnet101", "main.py:12", CONFIG)
    assert name_from_backbone_option(sp, {"DETR", "Backbone", "Joiner"}) == ("detr-r101", ["main.py:12"])
    assert name_from_backbone_option(sp, {"Classifier", "Backbone"}) is None


def test_only_a_demo_call_in_another_module_is_skipped() -> None:
    call = {"func": "tiny_net", "when": ["__name__ == '__main__'"]}
    assert runs_only_as_program(call, "nets/zoo.py", "train.py")
    assert not runs_only_as_program(call, "train.py", "train.py")
    assert not runs_only_as_program({"func": "tiny_net", "when": ["args.big"]}, "nets/zoo.py", "train.py")


def test_a_yaml_model_section_naming_family_and_depth_gives_the_published_size(tmp_path: Path) -> None:
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "keypoints_r152.yaml").write_text(textwrap.dedent("""
        GPUS: '0'
        MODEL:
          NAME: pose_resnet
          EXTRA:
            NUM_DECONV_LAYERS: 3
            NUM_LAYERS: 152
        TRAIN:
          BATCH_SIZE: 24
          END_EPOCH: 90
    """))
    (tmp_path / "train_kp.py").write_text(textwrap.dedent("""
        import argparse
        import yaml

        def main():
            p = argparse.ArgumentParser()
            p.add_argument('--cfg', required=True, type=str)
            args = p.parse_args()
            cfg = yaml.safe_load(open(args.cfg))
            net = build(cfg['MODEL']['NAME'], cfg['MODEL']['EXTRA']['NUM_LAYERS'])
            for epoch in range(cfg['TRAIN']['END_EPOCH']):
                pass

        if __name__ == '__main__':
            main()
    """))
    prof = analyze_code(tmp_path, "python train_kp.py --cfg exp/keypoints_r152.yaml", use_llm=False)
    assert prof.facts["params"].value == 68.6e6


def test_a_detector_class_with_a_backbone_option_default_gives_the_published_size(tmp_path: Path) -> None:
    (tmp_path / "nets").mkdir()
    (tmp_path / "nets" / "__init__.py").write_text("")
    (tmp_path / "nets" / "detector.py").write_text(textwrap.dedent("""
        import torch.nn as nn
        import torchvision
        from .attention_stack import build_decoder_stack

        class DETR(nn.Module):
            def __init__(self, backbone, stack, queries):
                super().__init__()
                self.backbone = backbone
                self.stack = stack
                self.queries = nn.Embedding(queries, 256)

        def build(args):
            trunk = getattr(torchvision.models, args.backbone)()
            return DETR(trunk, build_decoder_stack(args), args.num_queries)
    """))
    (tmp_path / "main_det.py").write_text(textwrap.dedent("""
        import argparse
        from nets.detector import build

        def main():
            p = argparse.ArgumentParser()
            p.add_argument('--backbone', default='resnet50', type=str)
            p.add_argument('--num_queries', default=100, type=int)
            p.add_argument('--batch_size', default=4, type=int)
            p.add_argument('--epochs', default=12, type=int)
            args = p.parse_args()
            model = build(args)

        if __name__ == '__main__':
            main()
    """))
    prof = analyze_code(tmp_path, "python main_det.py --backbone resnet101", use_llm=False)
    assert prof.facts["params"].value == 60.2e6


def test_a_demo_call_under_a_library_modules_main_guard_does_not_name_the_model(tmp_path: Path) -> None:
    (tmp_path / "zoo.py").write_text(textwrap.dedent("""
        def t2t_vit_24(**kw):
            return None

        if __name__ == '__main__':
            print(t2t_vit_24())
    """))
    (tmp_path / "fit.py").write_text(textwrap.dedent("""
        from private_models import build_net

        model = build_net()
        for epoch in range(5):
            pass
    """))
    prof = analyze_code(tmp_path, "python fit.py", use_llm=False)
    assert prof.facts.get("params") is None or prof.facts["params"].value is None  # the demo's architecture is not what fit.py trains

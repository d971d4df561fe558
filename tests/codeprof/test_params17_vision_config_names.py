"""Vision models named by a config's values: published rows for families repositories name in a config
(Focal, HRNet classification and HigherHRNet widths, PIDNet, Fast-SCNN/ENet/DABNet, IBN-Net), an HRNet model
section completed by its stage-2 width, a GeneralizedRCNN detector named by its CONV_BODY and heads, the
config file's stem, a registry-built backbone named by its builder and depth, a backbone that is only a
part of the model another key names, and a call under an undecided switch on an architecture name."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from schedmate.codeprof import known
from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.params import COMMAND_LINE, CONFIG, ParamSpace
from schedmate.codeprof.static.model_config_names import (
    backbone_is_a_part,
    name_from_backbone_builder,
    name_from_compound_coef,
    name_from_config_stem,
    name_from_conv_body,
    name_from_hrnet_width,
    one_branch_of_a_name_choice,
)


@pytest.mark.parametrize(
    ("name", "published"),
    [
        ("focal_tiny_patch4_window7_224", 28.9e6),  # Focal Transformer README
        ("focal_base_patch4_window7_224", 89.8e6),
        ("cls_hrnet_w18", 21.3e6),  # HRNet-Image-Classification README
        ("cls_hrnet_w18_small_v2", 15.6e6),
        ("cls_hrnet_w64_sgd_lr5e-2", 128.1e6),
        ("pose_higher_hrnet_w48", 63.8e6),  # HigherHRNet README
        ("pidnet_small", 7.6e6),  # PIDNet paper
        ("PIDNet-L", 36.9e6),
        ("FastSCNN", 1.11e6),  # Fast-SCNN paper
        ("Fast-SCNN", 1.11e6),
        ("ENet", 0.37e6),  # ENet paper
        ("resnet101_ibn_a", 44.5e6),  # IBN-Net README
        ("efficientvit_l2", 64e6),  # EfficientViT README (B/L series)
        ("efficientvit-b0", 3.4e6),
        ("nest_small_s16_32", 23.4e6),  # NesT paper: CIFAR nets
        ("nest_base_s196_224", 68e6),  # and ImageNet nets
        ("nest_tiny", 17e6),
    ],
)
def test_a_vision_model_named_in_a_config_gets_its_published_size(name: str, published: float) -> None:
    hit = known.lookup_model(name)
    assert hit is not None and hit[2] == published


@pytest.mark.parametrize("name", ["focal_huge", "cls_hrnet_w20", "pidnet_xl", "enet_v2", "pose_higher_hrnet_w40",
                                  "efficientvit_m5", "nest_tiny_s16_64"])
def test_a_variant_no_table_publishes_stays_unknown(name: str) -> None:
    assert known.lookup_model(name) is None


def _space(values: dict[str, object], layer: int = CONFIG) -> ParamSpace:
    sp = ParamSpace()
    for k, v in values.items():
        sp.set(k, v, f"exp.yaml:{k}", layer)
    return sp


def test_an_hrnet_section_is_completed_by_its_second_stage_width() -> None:
    sp = _space({"model.name": "cls_hrnet", "model.extra.stage2.num_channels": [30, 60],
                 "model.extra.stage3.num_channels": [30, 60, 120]})
    assert name_from_hrnet_width(sp) == ("cls_hrnet_w30", ["exp.yaml:model.name",
                                                           "exp.yaml:model.extra.stage2.num_channels"])


def test_an_hrnet_width_the_table_lacks_or_a_missing_stage_gives_no_name() -> None:
    assert name_from_hrnet_width(_space({"model.name": "cls_hrnet", "model.extra.stage2.num_channels": [36, 72]})) is None
    assert name_from_hrnet_width(_space({"model.name": "cls_hrnet", "model.extra.stage3.num_channels": [48, 96]})) is None
    assert name_from_hrnet_width(_space({"model.name": "tiny_net", "model.extra.stage2.num_channels": [48, 96]})) is None


def test_a_generalized_rcnn_is_named_by_its_conv_body_and_which_heads_are_on() -> None:
    base = {"model.meta_architecture": "GeneralizedRCNN", "model.backbone.conv_body": "R-101-FPN"}
    assert name_from_conv_body(_space(base))[0] == "faster_rcnn_r-101"  # type: ignore[index]
    assert name_from_conv_body(_space({**base, "model.mask_on": True}))[0] == "mask_rcnn_r-101"  # type: ignore[index]
    got = name_from_conv_body(_space({**base, "model.retinanet_on": True}))
    assert got is not None and known.lookup_model(got[0])[2] == 56.9e6  # type: ignore[index]


def test_a_grouped_or_c4_body_or_another_architecture_gives_no_name() -> None:
    base = {"model.meta_architecture": "GeneralizedRCNN", "model.backbone.conv_body": "R-101-FPN"}
    assert name_from_conv_body(_space({**base, "model.resnets.num_groups": 32})) is None  # a ResNeXt
    assert name_from_conv_body(_space({**base, "model.backbone.conv_body": "R-50-C4"})) is None
    assert name_from_conv_body(_space({**base, "model.meta_architecture": "OwnDetector"})) is None
    assert name_from_conv_body(_space({**base, "model.keypoint_on": True})) is None


def test_a_config_stem_names_the_model_only_when_it_starts_with_a_known_name() -> None:
    sp = _space({"conf_file": "configs/yolov5m_custom_data.py"}, COMMAND_LINE)
    assert name_from_config_stem(sp) == ("yolov5m_custom_data", ["exp.yaml:conf_file"])
    assert name_from_config_stem(_space({"cfg": "exp/upernet_swin_tiny_512.yaml"})) is None  # a head on Swin
    assert name_from_config_stem(_space({"cfg": "exp/llama_7b_sft.yaml"})) is None  # a size alone is no row
    assert name_from_config_stem(_space({"cfg": "yolov5m"})) is None  # not a config file


def test_a_backbone_beside_another_model_name_is_only_a_part() -> None:
    assert backbone_is_a_part(_space({"model_name": "PSPNet", "backbone": "resnet50"}), "backbone")
    assert not backbone_is_a_part(_space({"backbone": "resnet50"}), "backbone")
    assert not backbone_is_a_part(_space({"model_name": "resnet50", "backbone": "resnet50"}), "backbone")
    assert not backbone_is_a_part(_space({"model_name": "PSPNet", "backbone": "resnet50"}), "model_name")


def test_a_yacs_hrnet_classification_job_gets_the_published_size(tmp_path: Path) -> None:
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "imnet_w30.yaml").write_text(textwrap.dedent("""
        GPUS: (0,1)
        MODEL:
          NAME: cls_hrnet
          EXTRA:
            STAGE2:
              NUM_BRANCHES: 2
              NUM_CHANNELS:
              - 30
              - 60
        TRAIN:
          BATCH_SIZE_PER_GPU: 64
          END_EPOCH: 90
    """))
    (tmp_path / "run_cls.py").write_text(textwrap.dedent("""
        import argparse
        from cfgs import config, update_config

        def main():
            p = argparse.ArgumentParser()
            p.add_argument('--cfg', required=True, type=str)
            args = p.parse_args()
            update_config(config, args)
            net = eval('nets.' + config.MODEL.NAME + '.build')(config)
            for epoch in range(config.TRAIN.END_EPOCH):
                pass

        if __name__ == '__main__':
            main()
    """))
    prof = analyze_code(tmp_path, "python run_cls.py --cfg experiments/imnet_w30.yaml", use_llm=False)
    assert prof.facts["params"].value == 37.7e6


def test_a_generalized_rcnn_yaml_job_gets_the_whole_detectors_size(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "det_run.yaml").write_text(textwrap.dedent("""
        MODEL:
          META_ARCHITECTURE: "GeneralizedRCNN"
          BACKBONE:
            CONV_BODY: "R-50-FPN"
          MASK_ON: True
        SOLVER:
          IMS_PER_BATCH: 8
          MAX_ITER: 1000
    """))
    (tmp_path / "train_det.py").write_text(textwrap.dedent("""
        import argparse
        from detcore.config import cfg

        def main():
            p = argparse.ArgumentParser()
            p.add_argument('--config-file', default='', type=str)
            args = p.parse_args()
            cfg.merge_from_file(args.config_file)
            model = build_detection_model(cfg)

        if __name__ == '__main__':
            main()
    """))
    prof = analyze_code(tmp_path, "python train_det.py --config-file configs/det_run.yaml", use_llm=False)
    assert prof.facts["params"].value == 44.4e6


def test_a_large_backbone_beside_another_model_name_still_names_the_model() -> None:
    # heads of 10-30M beside a 197M Swin-L stay within the tolerance; beside a 25M ResNet-50 they do not
    assert not backbone_is_a_part(_space({"modelname": "detector", "backbone": "swin_L_384_22k"}), "backbone")
    assert backbone_is_a_part(_space({"modelname": "detector", "backbone": "resnet50"}), "backbone")


def test_a_call_under_an_undecided_switch_on_an_architecture_name_is_one_option() -> None:
    assert one_branch_of_a_name_choice({"func": "mobilenet_v2", "when": ["base_model == 'mobilenetv2'"]})
    assert one_branch_of_a_name_choice({"func": "resnet50", "when": ["'resnet50' == arch"]})
    assert not one_branch_of_a_name_choice({"func": "resnet50", "when": ["__name__ == '__main__'"]})
    assert not one_branch_of_a_name_choice({"func": "resnet50", "when": ["args.pretrained"]})
    assert not one_branch_of_a_name_choice({"func": "resnet50"})


def test_a_registry_built_backbone_is_named_by_its_builder_and_depth() -> None:
    sp = _space({"model.meta_architecture": "Embedder", "model.backbone.name": "build_resnet_backbone",
                 "model.backbone.depth": "101x", "model.backbone.with_ibn": True})
    assert name_from_backbone_builder(sp)[0] == "resnet101_ibn_a"  # type: ignore[index]
    plain = _space({"model.backbone.name": "build_resnet_backbone", "model.backbone.depth": "50x"})
    assert known.lookup_model(name_from_backbone_builder(plain)[0])[2] == 25.6e6  # type: ignore[index]


def test_a_builder_inside_a_detector_or_an_fpn_builder_gives_no_name() -> None:
    det = {"model.meta_architecture": "GeneralizedRCNN", "model.backbone.name": "build_resnet_backbone",
           "model.backbone.depth": 50}
    assert name_from_backbone_builder(_space(det)) is None
    fpn = {"model.backbone.name": "build_resnet_fpn_backbone", "model.backbone.depth": 50}
    assert name_from_backbone_builder(_space(fpn)) is None


def test_a_positional_or_file_option_config_stem_names_the_model_but_a_data_file_does_not() -> None:
    assert name_from_config_stem(_space({}), ["confs/efficientvit_b2.yaml"], ["run.sh:3"]) \
        == ("efficientvit_b2", ["run.sh:3"])
    assert name_from_config_stem(_space({"file": "exps/replknet31_base_in1k.py"}))[0] \
        == "replknet31_base_in1k"  # type: ignore[index]
    assert name_from_config_stem(_space({"file": "feats/resnet50_cache.json"})) is None


def test_a_compound_coefficient_picks_the_efficientdet_the_job_builds() -> None:
    sp = _space({"phi": 3}, COMMAND_LINE)
    calls = [("train.py", {"func": "nets.efficientdet", "line": 40})]
    assert name_from_compound_coef(sp, calls) == ("efficientdet-d3", ["exp.yaml:phi", "train.py:40"])
    assert name_from_compound_coef(sp, [("train.py", {"func": "build_detector", "line": 40})]) is None
    assert name_from_compound_coef(_space({"phi": 9}), calls) is None

"""Convolutional families' sizes from their documented knobs: the formulas give the published counts, and the
knobs are read where jobs state them (a config section naming the family, the call that builds the class)."""

from __future__ import annotations

import pytest

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize import convnets as cn
from schedmate.codeprof.static.modelsize.family_knobs import cnn_from_knobs, family_of_word
from tests.codeprof.codeprof_support import make_job


def test_the_resnet_formula_gives_the_published_imagenet_sizes():
    assert cn.resnet_params(18) == 11_689_512
    assert cn.resnet_params(50) == 25_557_032  # ResNet-50: 25.6M
    assert cn.resnet_params(101) == 44_549_160
    assert cn.resnet_params(50, groups=32, width_per_group=4) == 25_028_904  # ResNeXt-50 32x4d
    assert cn.resnet_params(50, width_per_group=128) == 68_883_240  # Wide ResNet-50-2


def test_the_cifar_families_give_their_papers_sizes():
    assert cn.wide_resnet_params(28, 10) == pytest.approx(36.5e6, rel=0.002)  # WRN-28-10
    assert cn.wide_resnet_params(28, 2) == pytest.approx(1.47e6, rel=0.01)
    assert cn.cifar_resnet_params(110, projection=False) == 1_727_962  # ResNet-110, zero-padding shortcuts
    assert cn.cifar_resnext_params(29, 8, 64) == pytest.approx(34.4e6, rel=0.002)  # ResNeXt-29 8x64d
    assert cn.cifar_resnext_params(29, 16, 64) == pytest.approx(68.1e6, rel=0.002)
    assert cn.cifar_densenet_params(100, 12) == pytest.approx(0.77e6, rel=0.01)  # DenseNet-BC-100 k=12
    assert cn.cifar_densenet_params(40, 12, bottleneck=False) == pytest.approx(1.0e6, rel=0.03)


def test_densenet_vgg_convnext_and_swin_give_the_published_sizes():
    assert cn.densenet_params((6, 12, 24, 16), 32) == 7_978_856  # DenseNet-121: 8.0M
    assert cn.vgg_params(16) == 138_357_544
    assert cn.vgg_params(19, bn=True) == pytest.approx(143.7e6, rel=0.001)
    assert cn.convnext_params((3, 3, 9, 3), (96, 192, 384, 768)) == pytest.approx(28.6e6, rel=0.001)
    assert cn.swin_params(96, (2, 2, 6, 2), (3, 6, 12, 24)) == pytest.approx(28.3e6, rel=0.001)


def test_efficientnet_compound_scaling_and_mobilenet_width_give_the_published_sizes():
    published = {0: 5.3e6, 1: 7.8e6, 2: 9.1e6, 3: 12.2e6, 4: 19.3e6, 5: 30.4e6, 6: 43.0e6, 7: 66.3e6}
    for b, size in published.items():
        assert cn.efficientnet_params(*cn.EFFICIENTNET_SCALES[b]) == pytest.approx(size, rel=0.01), b
    assert cn.mobilenet_v2_params(1.0) == pytest.approx(3.5e6, rel=0.01)
    assert cn.mobilenet_v2_params(1.4) == pytest.approx(6.1e6, rel=0.01)


def test_the_nature_cnn_and_mlps_give_the_dqn_and_policy_sizes():
    assert cn.nature_cnn_params(actions=6) == pytest.approx(1.69e6, rel=0.01)  # DQN on Pong
    assert cn.mlp_params([11, 32, 32, 3]) == 11 * 32 + 32 + 32 * 32 + 32 + 32 * 3 + 3


def test_bare_family_words_name_a_family_and_sized_names_do_not():
    assert family_of_word("WideResNet") == "wrn"
    assert family_of_word("wrn") == "wrn"
    assert family_of_word("resnet_preact") == "resnet"
    assert family_of_word("DenseNet-BC") == "densenet"
    assert family_of_word("resnet50") is None
    assert family_of_word("transformer") is None


def test_knobs_that_do_not_pin_the_architecture_give_nothing():
    assert cnn_from_knobs("wrn", {"depth": 28}) is None
    assert cnn_from_knobs("wrn", {"depth": 27, "widen_factor": 4}) is None  # not 6n+4
    assert cnn_from_knobs("densenet", {"depth": 76}, cifar=True) is None  # no growth rate
    assert cnn_from_knobs("resnext", {"depth": 29}, cifar=True) is None  # no cardinality


YACS_JOB = {
    "conf/wide.yaml": """
        dataset:
          name: CIFAR100
        model:
          type: cifar
          name: wrn
          wrn:
            depth: 16
            initial_channels: 16
            widening_factor: 4
        train:
          batch_size: 96
        scheduler:
          epochs: 30
    """,
    "fit.py": """
        import argparse
        import yaml
        ap = argparse.ArgumentParser()
        ap.add_argument("--config", required=True)
        args = ap.parse_args()
        cfg = yaml.safe_load(open(args.config))
        model = build_network(cfg)
    """,
}


def test_a_config_section_naming_a_family_with_its_knobs_in_a_subsection_is_counted(tmp_path):
    make_job(tmp_path, YACS_JOB)
    f = analyze_code(tmp_path, "python fit.py --config conf/wide.yaml", use_llm=False).facts
    assert f["params"].value == cn.wide_resnet_params(16, 4, classes=100)
    assert any(e.startswith("conf/wide.yaml") for e in f["params"].evidence)


OPENMMLAB_STYLE_JOB = {
    "cfgs/dense_small.py": """
        model = dict(type='Classifier', backbone=dict(type='DenseNet', depth=40, growth_rate=12, bottleneck=False))
        data = dict(dataset='cifar10', samples_per_gpu=64)
        total_epochs = 12
    """,
    "tools/run.py": """
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("config")
        args = ap.parse_args()
    """,
}


def test_a_backbone_dict_of_a_classifier_is_counted_from_its_depth_and_growth_rate(tmp_path):
    make_job(tmp_path, OPENMMLAB_STYLE_JOB)
    f = analyze_code(tmp_path, "python tools/run.py cfgs/dense_small.py", use_llm=False).facts
    assert f["params"].value == cn.cifar_densenet_params(40, 12, bottleneck=False)


DETECTOR_JOB = {
    "cfgs/det.py": """
        model = dict(type='Detector', backbone=dict(type='ResNet', depth=50),
                     roi_head=dict(type='BoxHead', num_classes=80))
    """,
    "tools/run.py": """
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("config")
        args = ap.parse_args()
    """,
}


def test_a_backbone_beside_detector_heads_is_not_counted_as_the_whole_model(tmp_path):
    make_job(tmp_path, DETECTOR_JOB)
    f = analyze_code(tmp_path, "python tools/run.py cfgs/det.py", use_llm=False).facts
    assert f.get("params") is None or f["params"].value != cn.resnet_params(50, classes=80)


CALL_JOB = {
    "nets/convnext_lib.py": """
        from external_blocks import Stage
        class ConvNeXt:
            def __init__(self, depths, dims, num_classes=1000, drop_path_rate=0.0):
                self.stages = [Stage(d, c) for d, c in zip(depths, dims)]
    """,
    "train_small.py": """
        from nets.convnext_lib import ConvNeXt
        NUM_CLASSES = 200
        net = ConvNeXt(depths=[2, 2, 6, 2], dims=[64, 128, 256, 512], num_classes=NUM_CLASSES)
    """,
}


def test_a_call_that_builds_a_family_class_with_its_knobs_is_counted(tmp_path):
    make_job(tmp_path, CALL_JOB)
    f = analyze_code(tmp_path, "python train_small.py", use_llm=False).facts
    assert f["params"].value == cn.convnext_params((2, 2, 6, 2), (64, 128, 256, 512), classes=200)

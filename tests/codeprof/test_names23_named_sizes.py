"""Model sizes from architecture names and size settings a job states (`codeprof/named_sizes.py` and the
`known_models_named_sizes` rows), on fixtures written for these tests in the styles of real training repos."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof import known
from schedmate.codeprof.named_sizes import fill_params, named_size, wrn_params
from schedmate.codeprof.params import COMMAND_LINE, CONFIG, ParamSpace

from .codeprof_support import make_job, params_of


def _space(**values: object) -> ParamSpace:
    P = ParamSpace()
    for key, value in values.items():
        P.set(key.replace("__", "."), value, "cfg.yaml:1", CONFIG)
    return P


def test_a_wide_resnet_is_counted_from_its_depth_and_widening_factor() -> None:
    # the WRN paper's Table 1 and the semi-supervised papers' 1.5M / 36.5M
    assert wrn_params(28, 2) == pytest.approx(1.47e6, rel=0.02)
    assert wrn_params(28, 10) == pytest.approx(36.5e6, rel=0.01)
    assert wrn_params(27, 2) is None  # no WRN has that depth


def test_a_resnet_size_key_names_the_resnet_of_that_depth() -> None:
    got = named_size(_space(trunk_params__resnet_size=101))
    assert got is not None and got[1] == known.lookup_model("resnet101")[2]


def test_a_resnet_depth_inside_a_detector_is_a_part_and_names_nothing() -> None:
    assert named_size(_space(resnet_depth=50, rpn__num_anchors=9)) is None


def test_a_wide_resnet_chosen_by_arch_with_depth_and_width_keys_is_counted() -> None:
    got = named_size(_space(arch="wideresnet", depth=28, widen_factor=2))
    assert got is not None and got[0] == "wrn-28-2" and got[1] == pytest.approx(1.47e6, rel=0.02)


def test_a_model_factory_that_states_its_size_names_the_model() -> None:
    got = named_size(_space(model_factory="llama2_3B"))
    assert got is not None and got[1] == 3e9


def test_a_model_section_target_in_snake_case_is_looked_up_with_hyphens() -> None:
    got = named_size(_space(model___target_="mylab.nets.stable_diffusion_2"))
    assert got is not None and got[1] == known.lookup_model("stable-diffusion-2")[2]


def test_a_teacher_model_setting_never_names_the_trained_model() -> None:
    assert named_size(_space(teacher__model="gpt2-large")) is None


def test_two_competing_names_leave_the_size_null() -> None:
    assert named_size(_space(model="resnet18_cifar", arch="vit_large_patch16_224")) is None


def test_a_size_word_in_an_unset_directory_variable_names_the_checkpoint() -> None:
    P = ParamSpace()
    P.set("encoder_config_path", "\x00BIG_LARGE_DIR\x00/xlnet_config.json", "cmd", COMMAND_LINE)
    got = named_size(P)
    assert got is not None and got[0] == "xlnet-large"
    P2 = ParamSpace()
    P2.set("bert_config_file", "\x00BERT_BASE_DIR\x00/bert_config.json", "cmd", COMMAND_LINE)
    got2 = named_size(P2)
    assert got2 is not None and got2[0] == "bert-base"


def test_a_vocabulary_in_a_size_directory_is_no_model() -> None:
    P = ParamSpace()
    P.set("vocab_file", "\x00BERT_LARGE_DIR\x00/vocab.txt", "cmd", COMMAND_LINE)
    assert named_size(P) is None


def test_a_size_directory_under_a_family_directory_names_the_model() -> None:
    got = named_size(ParamSpace(), ["--gin_file=gs://my-t5-bucket/t5-ckpts/base/operative_config.gin"])
    assert got is not None and got[0] == "t5-base"


def test_t5_gin_names_give_the_version_and_size() -> None:
    got = named_size(ParamSpace(), ["--gin_file=models/t5.1.1.small.gin"])
    assert got is not None and got[0] == "t5-v1_1-small"
    got0 = named_size(ParamSpace(), ["--gin_file=models/t5.1.0.xl.gin"])
    assert got0 is not None and got0[0] == "t5-3b"


def test_new_table_rows_name_cifar_resnets_and_flow_and_video_models() -> None:
    assert known.lookup_model("ResNet34_CIFAR100")[2] == 21.3e6
    assert known.lookup_model("raft_small")[2] == 1.0e6
    assert known.lookup_model("raft_4x4_50k_sintel")[2] == 5.3e6
    assert known.lookup_model("pwcnet_8x1_sfine_sintel")[2] == 8.75e6
    assert known.lookup_model("timesformer_spaceonly_8xb8")[2] == 121.4e6
    assert known.lookup_model("PixArtMS_XL_2")[2] == 611e6
    assert known.lookup_model("spanbert-large-cased")[2] == 340e6


def test_a_job_whose_python_config_sets_resnet_size_is_sized_end_to_end(tmp_path: Path) -> None:
    root = make_job(tmp_path, {
        "run.py": """
            import argparse, runpy
            p = argparse.ArgumentParser()
            p.add_argument("--config_file")
            args = p.parse_args()
            cfg = runpy.run_path(args.config_file)
        """,
        "configs/imagenet_trunk.py": """
            base_params = {
                "batch_size_per_gpu": 64,
                "num_epochs": 90,
                "encoder_params": {"resnet_size": 152, "data_format": "channels_first"},
            }
        """,
    })
    got = params_of(root, "python run.py --config_file=configs/imagenet_trunk.py")
    assert got == known.lookup_model("resnet152")[2]


def test_a_count_already_made_is_never_replaced_by_a_name() -> None:
    from schedmate.codeprof.facts import Fact
    from schedmate.codeprof.static.result import StaticResult

    res = StaticResult(params=_space(arch="resnet50"))
    facts = {"params": Fact(value=1010.0, source="static", evidence=["train.py:7"])}
    assert fill_params(facts, res) is False and facts["params"].value == 1010.0
    empty: dict[str, Fact] = {}
    assert fill_params(empty, res) is True and empty["params"].value == known.lookup_model("resnet50")[2]

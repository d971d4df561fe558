"""A timm-style training script picks its network by registry name (`--model lumen_s14`); the README's results
table states the size of each named architecture in a Params column, in the name itself, a display spelling
(`Lumen-S14`) or the checkpoint link (`.../lumen_s14.pth`). The run's size is that row's, when the sources
give no other."""

from __future__ import annotations

from schedmate.codeprof.named_model_table import model_name, stated_rows

from .codeprof_support import make_job, params_of

TRAIN = """
    import argparse
    import torch
    from zoo import create

    p = argparse.ArgumentParser()
    p.add_argument("data")
    p.add_argument("--model", default="lumen_t10", type=str)
    p.add_argument("-b", "--batch-size", type=int, default=96)
    p.add_argument("--epochs", type=int, default=250)
    args = p.parse_args()
    model = create(args.model).cuda()
    for epoch in range(args.epochs):
        pass
"""

ZOO = """
    from registry import lookup


    def create(name):
        return lookup(name)()
"""

README = """
    # Lumen networks

    | Model | Resolution | Params | Top-1 | Weights |
    |:---|:---:|:---:|:---:|:---|
    | lumen_t10 | 224 | 7.5M | 74.0 | [w](https://example.org/ckpt/lumen_t10.pth) |
    | lumen_s14 | 224 | 21M | 79.9 | [w](https://example.org/ckpt/lumen_s14.pth) |
    | lumen_s14_320 | 320 | 23M | 81.2 | [w](https://example.org/ckpt/lumen_s14_320.pth) |

    | Name | #Params(M) | FLOPs |
    |---|---|---|
    | Lumen-B20 | 48.5 | 9.1G |

    | Model | Acc | Files |
    |---|---|---|
    | Lumen-M | 80.0 | [model](https://example.org/m/lumen_m16.pth) / [log](https://example.org/m/lumen_m16/log.csv) |

    | Model | #params | Files |
    |---|---|---|
    | Lumen-M | 33M | [model](https://example.org/m/lumen_m16.pth) |
    | Lumen-M@320 | 34M | [model](https://example.org/m/lumen_m16_320.pth) |
"""


def _job(tmp_path, readme=README):
    return make_job(tmp_path, {"train.py": TRAIN, "zoo.py": ZOO, "registry.py": "def lookup(n):\n    return n\n",
                               "README.md": readme})


def test_the_readme_row_that_spells_the_named_model_gives_its_size(tmp_path):
    root = _job(tmp_path)
    assert params_of(root, "python -m torch.distributed.launch --nproc_per_node=8 train.py /data --model lumen_s14") \
        == 21_000_000


def test_a_display_spelling_of_the_name_matches_and_a_unitless_count_is_millions(tmp_path):
    root = _job(tmp_path)
    assert params_of(root, "python train.py /data --model lumen_b20") == 48_500_000


def test_a_checkpoint_link_names_the_model_but_not_its_longer_variant(tmp_path):
    root = _job(tmp_path)
    assert params_of(root, "python train.py /data --model lumen_m16") == 33_000_000
    assert stated_rows((root / "README.md").read_text(), "lumen_m16_320")[0][1] == 34_000_000


def test_the_argparse_default_model_is_the_one_trained_when_the_command_names_none(tmp_path):
    root = _job(tmp_path)
    assert params_of(root, "python train.py /data") == 7_500_000


def test_rows_that_disagree_or_a_name_no_row_holds_state_nothing(tmp_path):
    clash = README + "\n| Model | Params |\n|---|---|\n| lumen_s14 | 25M |\n"
    root = _job(tmp_path, clash)
    assert params_of(root, "python train.py /data --model lumen_s14") is None
    assert params_of(root, "python train.py /data --model lumen_x99") is None


def test_a_bare_family_word_is_not_taken_for_a_registry_name():
    assert model_name(["train.py", "--model", "resnet"], None) is None
    assert model_name(["train.py", "--arch=gfx-tiny"], None) == "gfx-tiny"

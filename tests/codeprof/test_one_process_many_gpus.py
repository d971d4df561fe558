"""A job whose one process drives every visible GPU (torch DataParallel) is sized by what it makes visible."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

TRAIN = """\
import argparse
import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--batch_size", type=int, default=64)
p.add_argument("--epochs", type=int, default=90)
args = p.parse_args()
model = nn.DataParallel(Net()).cuda()
loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size, shuffle=True)
"""


def test_visible_devices_give_the_gpu_count_and_the_loader_batch_is_split_over_them(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    f = analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py --epochs 10", use_llm=False).facts
    assert f["num_gpus"].value == 4
    assert f["global_batch_size"].value == 64  # DataParallel scatters the loader's batch
    assert f["micro_batch_size"].value == 16
    assert f["epochs"].value == 10


def test_without_visible_devices_the_gpu_count_and_per_gpu_batch_stay_open(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    p = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert p.facts.get("num_gpus") is None and p.facts.get("micro_batch_size") is None
    assert p.facts["global_batch_size"].value == 64
    assert any("DataParallel" in w for w in p.warnings)


def test_an_entry_that_relaunches_python_once_per_visible_gpu_leaves_the_count_to_submission(tmp_path):
    (tmp_path / "distributed.py").write_text(
        "import subprocess, sys\nimport torch\n\nif __name__ == '__main__':\n"
        "    num_gpus = torch.cuda.device_count()\n    for i in range(num_gpus):\n"
        "        subprocess.Popen([str(sys.executable), 'train.py', '--rank', str(i)])\n")
    p = analyze_code(tmp_path, "python distributed.py -c config.json", use_llm=False)
    assert p.facts.get("num_gpus") is None and any("per visible GPU" in w for w in p.warnings)
    p = analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1,2 python distributed.py", use_llm=False)
    assert p.facts["num_gpus"].value == 3


def test_a_dataparallel_over_the_configs_gpu_list_runs_on_that_many_and_yacs_overrides_at_the_end_apply(tmp_path):
    (tmp_path / "cfg.yaml").write_text("GPUS: (0,1,2,3)\nTRAIN:\n  BATCH_SIZE_PER_GPU: 32\n  END_EPOCH: 210\n")
    (tmp_path / "train.py").write_text(
        "import argparse\nimport torch\nfrom yacs.config import CfgNode as CN\n_C = CN()\n_C.GPUS = (0,)\n"
        "p = argparse.ArgumentParser()\np.add_argument('--cfg')\np.add_argument('opts', nargs=argparse.REMAINDER)\n"
        "cfg = _C\nmodel = torch.nn.DataParallel(model, device_ids=cfg.GPUS).cuda()\n"
        "loader = torch.utils.data.DataLoader(ds, batch_size=cfg.TRAIN.BATCH_SIZE_PER_GPU*len(cfg.GPUS))\n")
    f = analyze_code(tmp_path, "python train.py --cfg cfg.yaml", use_llm=False).facts
    assert f["num_gpus"].value == 4 and f["global_batch_size"].value == 128 and f["micro_batch_size"].value == 32
    assert f["epochs"].value == 210
    f = analyze_code(tmp_path, "python train.py --cfg cfg.yaml GPUS '(0,1)' TRAIN.BATCH_SIZE_PER_GPU 64",
                     use_llm=False).facts
    assert f["num_gpus"].value == 2 and f["global_batch_size"].value == 128 and f["micro_batch_size"].value == 64


def test_lightning_trainer_settings_from_the_command_line_and_its_default_length(tmp_path):
    (tmp_path / "main.py").write_text(
        "import argparse\nimport pytorch_lightning as pl\nfrom pytorch_lightning import Trainer\n"
        "p = argparse.ArgumentParser()\np = Trainer.add_argparse_args(p)\np.add_argument('--gpus', type=str)\n"
        "opt = p.parse_args()\ntrainer = Trainer.from_argparse_args(opt)\ntrainer.fit(model, data)\n")
    f = analyze_code(tmp_path, "python main.py --gpus 0,1", use_llm=False).facts
    assert f["num_gpus"].value == 2
    assert f["epochs"].value == 1000  # neither max_epochs nor max_steps: Lightning's default

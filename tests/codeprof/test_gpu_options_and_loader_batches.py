"""A one-process job's own GPU choices (a count option, an id list, DataParallel over every visible GPU), the
global batch of a loader that feeds every GPU with gradient accumulation, and evaluation loaders."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

TOWERS = """\
import argparse

def run(num_gpus, kimg):
    sched = dict(num_gpus=num_gpus)
    return sched

if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--num-gpus", type=int, default=1)
    p.add_argument("--kimg", type=int, default=12000)
    a = p.parse_args()
    run(a.num_gpus, a.kimg)
"""


def test_a_gpu_count_option_on_the_command_line_sets_the_gpus_of_a_one_process_job(tmp_path):
    (tmp_path / "run_towers.py").write_text(TOWERS)
    f = analyze_code(tmp_path, "python run_towers.py --num-gpus=4", use_llm=False).facts
    assert f["num_gpus"].value == 4


SEG = """\
import argparse
import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--gpus", default="0")
p.add_argument("--batch_size_per_gpu", type=int, default=3)
args = p.parse_args()
ids = [int(x) for x in args.gpus.split(",")] if "," in args.gpus else [0]
model = MyScatterParallel(Net(), device_ids=ids).cuda()
loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size_per_gpu * len(ids))
"""


def test_a_list_of_gpu_ids_on_the_command_line_counts_its_ids_and_one_id_alone_decides_nothing_here(tmp_path):
    (tmp_path / "train_seg.py").write_text(SEG)
    f = analyze_code(tmp_path, "python train_seg.py --gpus 0,1,2,3,4,5", use_llm=False).facts
    assert f["num_gpus"].value == 6
    f = analyze_code(tmp_path, "python train_seg.py --gpus 0-2", use_llm=False).facts
    assert f["num_gpus"].value == 3
    f = analyze_code(tmp_path, "python train_seg.py --gpus 2", use_llm=False).facts
    assert f.get("num_gpus") is None or f["num_gpus"].value == 1  # `2` may be an id: never read as two GPUs


VIDEO = """\
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, default=48)
p.add_argument("--epochs", type=int, default=30)
p.add_argument("--gpus", nargs="+", type=int, default=None)
args = p.parse_args()
model = torch.nn.DataParallel(Net(), device_ids=args.gpus).cuda()
train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
"""


def test_dataparallel_over_an_option_left_at_none_uses_every_visible_gpu(tmp_path):
    (tmp_path / "main.py").write_text(VIDEO)
    p = analyze_code(tmp_path, "python main.py --epochs 12", use_llm=False)
    assert p.facts.get("num_gpus") is None and p.facts.get("micro_batch_size") is None
    assert p.facts["global_batch_size"].value == 48
    assert any("DataParallel" in w for w in p.warnings)
    f = analyze_code(tmp_path, "python main.py --gpus 0 1", use_llm=False).facts
    assert f["num_gpus"].value == 2 and f["micro_batch_size"].value == 24


GAN = """\
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--multi_gpu", action="store_true")
p.add_argument("--batch", type=int, default=24)
p.add_argument("--max_iter", type=int, default=50000)
opts = p.parse_args()
trainer = Trainer()
if opts.multi_gpu:
    n = torch.cuda.device_count()
    trainer.model = torch.nn.DataParallel(trainer.model, device_ids=range(n))
trainer.cuda()
loader = torch.utils.data.DataLoader(ds, batch_size=opts.batch)
"""


def test_dataparallel_over_the_device_count_under_a_flag_is_open_only_when_the_flag_is_set(tmp_path):
    (tmp_path / "train_gan.py").write_text(GAN)
    p = analyze_code(tmp_path, "python train_gan.py --multi_gpu", use_llm=False)
    assert p.facts.get("num_gpus") is None and p.facts.get("micro_batch_size") is None
    assert p.facts["global_batch_size"].value == 24
    f = analyze_code(tmp_path, "python train_gan.py", use_llm=False).facts
    assert f["num_gpus"].value == 1 and f["micro_batch_size"].value == 24


SOLVER = """\
import torch
import yaml

CONFIG = yaml.safe_load(open("solver.yaml"))
model = torch.nn.DataParallel(Net()).cuda()
loader = torch.utils.data.DataLoader(ds, batch_size=CONFIG["SOLVER"]["BATCH_SIZE"])
for it in range(CONFIG["SOLVER"]["ITER_MAX"]):
    for _ in range(CONFIG["SOLVER"]["ITER_SIZE"]):
        loss = model(next(loader)).backward()
    optimizer.step()
"""


def test_a_loader_that_feeds_every_gpu_times_its_caffe_style_iter_size_is_the_global_batch(tmp_path):
    (tmp_path / "solver.yaml").write_text("SOLVER:\n  BATCH_SIZE: 6\n  ITER_SIZE: 3\n  ITER_MAX: 9000\n")
    (tmp_path / "main.py").write_text(SOLVER)
    f = analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1 python main.py", use_llm=False).facts
    assert f["grad_accum_steps"].value == 3
    assert f["global_batch_size"].value == 18 and f["num_gpus"].value == 2 and f["micro_batch_size"].value == 3


VOICE = """\
import torch
from torch.utils.data import DataLoader

def run(rank, hps):
    train_loader = DataLoader(train_dataset, num_workers=4, batch_size=hps.train.batch_size)
    eval_loader = DataLoader(eval_dataset, num_workers=1, batch_size=1)

if __name__ == "__main__":
    hps = load_hparams()
    torch.multiprocessing.spawn(run, nprocs=torch.cuda.device_count(), args=(hps,))
"""


def test_an_evaluation_loaders_batch_is_never_taken_for_the_training_batch(tmp_path):
    (tmp_path / "train.py").write_text(VOICE)
    f = analyze_code(tmp_path, "python train.py -c cfg.json", use_llm=False).facts
    assert f.get("micro_batch_size") is None and f.get("num_gpus") is None


FINETUNE = """\
from dataclasses import dataclass, field
import torch
import transformers

@dataclass
class DataArgs:
    data_path: str = field(default="data.json")

def main():
    parser = transformers.HfArgumentParser((DataArgs, transformers.TrainingArguments))
    data_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained("my-org/tiny-lm"{placement})
    trainer = transformers.Trainer(model=model, args=training_args)
    trainer.train()

if __name__ == "__main__":
    main()
"""


def test_the_hf_trainer_in_one_plain_process_uses_every_visible_gpu_unless_the_model_is_placed(tmp_path):
    cmd = "python sft.py --output_dir out --per_device_train_batch_size 4 --gradient_accumulation_steps 2"
    (tmp_path / "sft.py").write_text(FINETUNE.format(placement=""))
    p = analyze_code(tmp_path, cmd, use_llm=False)
    assert p.facts.get("num_gpus") is None and p.facts.get("global_batch_size") is None
    assert p.facts["micro_batch_size"].value == 4
    assert any("every visible GPU" in w for w in p.warnings)
    f = analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1 " + cmd, use_llm=False).facts
    assert f["num_gpus"].value == 2 and f["global_batch_size"].value == 16
    (tmp_path / "sft.py").write_text(FINETUNE.format(placement=", device_map='auto'"))
    assert analyze_code(tmp_path, cmd, use_llm=False).facts.get("num_gpus") is None


LIT = """\
import torch
import pytorch_lightning as pl

def main(cfg):
    n_dev = torch.cuda.device_count()
    trainer = pl.Trainer(devices=n_dev, accelerator="gpu", strategy="ddp", max_epochs=7)
    trainer.fit(Model(), DataModule(batch_size=12))

if __name__ == "__main__":
    main(None)
"""


def test_a_lightning_trainer_given_the_device_count_takes_every_visible_gpu(tmp_path):
    (tmp_path / "fit.py").write_text(LIT)
    p = analyze_code(tmp_path, "python fit.py", use_llm=False)
    assert p.facts.get("num_gpus") is None and p.facts.get("global_batch_size") is None
    f = analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1,2 python fit.py", use_llm=False).facts
    assert f["num_gpus"].value == 3


DETECT = """\
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, default=16, help="total batch size for all GPUs")
p.add_argument("--device", default="", help="cuda device, i.e. 0 or 0,1,2,3 or cpu")
p.add_argument("--epochs", type=int, default=100)
opt = p.parse_args()
model = Model().cuda()
if torch.cuda.device_count() > 1:
    model = torch.nn.DataParallel(model)
loader = torch.utils.data.DataLoader(ds, batch_size=opt.batch_size)
"""


def test_a_single_device_id_names_one_gpu_and_a_device_list_as_many(tmp_path):
    (tmp_path / "train.py").write_text(DETECT)
    f = analyze_code(tmp_path, "python train.py --batch-size 8 --device 0", use_llm=False).facts
    assert f["num_gpus"].value == 1 and f["micro_batch_size"].value == 8
    f = analyze_code(tmp_path, "python train.py --batch-size 8 --device 0,1,2,3", use_llm=False).facts
    assert f["num_gpus"].value == 4 and f["global_batch_size"].value == 8 and f["micro_batch_size"].value == 2


PINNED = """\
import argparse
import os
import torch
import pytorch_lightning as pl

def main(args):
    if args.pin:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_ids
    trainer = pl.Trainer(gpus=-1, max_epochs=args.epochs)
    trainer.fit(Classifier(), DataModule(batch_size=args.batch_size))

if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--gpu_ids", type=str, default="1,2")
    p.add_argument("--pin", type=int, default=1)
    p.add_argument("--batch_size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=20)
    main(p.parse_args())
"""


def test_visible_devices_the_code_sets_from_its_own_option_decide_every_visible_gpu(tmp_path):
    (tmp_path / "train.py").write_text(PINNED)
    assert analyze_code(tmp_path, "python train.py", use_llm=False).facts["num_gpus"].value == 2
    assert analyze_code(tmp_path, "python train.py --gpu_ids 0,1,2,3", use_llm=False).facts["num_gpus"].value == 4
    assert analyze_code(tmp_path, "python train.py --pin 0", use_llm=False).facts.get("num_gpus") is None

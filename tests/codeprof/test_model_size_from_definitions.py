"""Parameters counted from the job's own `nn.Module` classes: dims from constructor arguments, argparse
defaults and the command line; builders chosen by a setting; several trained models summed; no count
(rather than a guess) when a dimension is only known at run time."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.layers import build_nn
from tests.codeprof.codeprof_support import make_job

TAGGER = {
    "tagger/run.py": """
        import argparse
        import torch
        import torch.nn as nn

        ap = argparse.ArgumentParser()
        ap.add_argument("--width", type=int, default=300)
        ap.add_argument("--vocab", type=int, default=5000)
        ap.add_argument("--epochs", type=int, default=3)
        args = ap.parse_args()

        class Tagger(nn.Module):
            def __init__(self, vocab, width, n_tags=17):
                super().__init__()
                self.emb = nn.Embedding(vocab, 64)
                self.rnn = nn.LSTM(64, width, 2, batch_first=True, bidirectional=True)
                self.norm = nn.LayerNorm(2 * width)
                self.out = nn.Linear(2 * width, n_tags)

            def forward(self, x):
                return self.out(self.norm(self.rnn(self.emb(x))[0]))

        model = Tagger(args.vocab, args.width).to("cuda")
        opt = torch.optim.Adam(model.parameters())
        for epoch in range(args.epochs):
            pass
    """,
}


def test_a_model_class_built_from_argparse_dims_is_counted_exactly(tmp_path):
    make_job(tmp_path, TAGGER)
    f = analyze_code(tmp_path, "python tagger/run.py --width 200", use_llm=False).facts
    lstm = 2 * (4 * 200 * (64 + 200) + 8 * 200) + 2 * (4 * 200 * (400 + 200) + 8 * 200)
    assert f["params"].value == 5000 * 64 + lstm + 2 * 400 + (400 * 17 + 17)
    assert any(e.startswith("tagger/run.py:") for e in f["params"].evidence)


STACKS = {
    "nets.py": """
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, d):
                super(Block, self).__init__()
                self.up = nn.Linear(d, 4 * d)
                self.down = nn.Linear(4 * d, d)
                self.norm = nn.LayerNorm(d)

        class Stack(nn.Module):
            def __init__(self, depth, d=128, classes=10):
                super().__init__()
                self.inp = nn.Linear(32, d)
                self.blocks = self._make(depth, d)
                self.head = nn.Linear(d, classes)

            def _make(self, depth, d):
                blocks = []
                for _ in range(depth):
                    blocks.append(Block(d))
                return nn.ModuleList(blocks)

        def stack6():
            return Stack(6)

        def stack12():
            return Stack(12)
    """,
    "train.py": """
        import argparse
        import torch
        import nets

        p = argparse.ArgumentParser()
        p.add_argument("--arch", default="stack6")
        p.add_argument("--batch-size", type=int, default=64)
        args = p.parse_args()

        def main():
            model = torch.nn.DataParallel(nets.__dict__[args.arch]())
            model.cuda()
            val = evaluate(model)

        def evaluate(model):
            with torch.no_grad():
                return 0.0

        main()
    """,
}


def test_a_builder_picked_from_a_module_by_a_setting_counts_the_chosen_depth(tmp_path):
    make_job(tmp_path, STACKS)
    block = (128 * 512 + 512) + (512 * 128 + 128) + 2 * 128
    f = analyze_code(tmp_path, "python train.py --arch stack12", use_llm=False).facts
    assert f["params"].value == (32 * 128 + 128) + 12 * block + (128 * 10 + 10)
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["params"].value == (32 * 128 + 128) + 6 * block + (128 * 10 + 10)


GAN = {
    "gan.py": """
        import copy
        import torch.nn as nn

        LATENT = 16

        class Gen(nn.Module):
            def __init__(self):
                super().__init__()
                def layer(i, o):
                    return [nn.Linear(i, o), nn.ReLU()]
                self.net = nn.Sequential(*layer(LATENT, 64), nn.Linear(64, 256))

        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(256, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))

        gen = Gen()
        critic = Critic()
        ema_gen = Gen()
        bce = nn.BCELoss()
    """,
}


def test_a_generator_and_its_critic_are_summed_and_an_averaged_copy_is_not(tmp_path):
    make_job(tmp_path, GAN)
    f = analyze_code(tmp_path, "python gan.py", use_llm=False).facts
    assert f["params"].value == (16 * 64 + 64) + (64 * 256 + 256) + (256 * 64 + 64) + (64 + 1)


UNRESOLVED = {
    "fit.py": """
        import torch.nn as nn
        from mydata import load

        data = load()

        class Probe(nn.Module):
            def __init__(self, n_in):
                super().__init__()
                self.fc = nn.Linear(n_in, 10)

        probe = Probe(data.num_features)
    """,
    "wrap.py": """
        import timm
        import torch.nn as nn

        class Wrapped(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = timm.create_model("some_net")
                self.head = nn.Linear(512, 3)

        net = Wrapped()
    """,
}


def test_a_dimension_known_only_at_run_time_gives_no_count_rather_than_a_guess(tmp_path):
    make_job(tmp_path, UNRESOLVED)
    assert analyze_code(tmp_path, "python fit.py", use_llm=False).value("params") is None
    # a part built by a library call is not in the job's sources: the head alone is not the model
    assert analyze_code(tmp_path, "python wrap.py", use_llm=False).value("params") != 512 * 3 + 3


SMALL_VGG = {
    "zoo.py": """
        import torch.nn as nn

        class ConvBlock(nn.Sequential):
            def __init__(self, cin, cout, groups=1):
                super().__init__(nn.Conv2d(cin, cout, 3, 1, 1, groups=groups, bias=False), nn.BatchNorm2d(cout),
                                 nn.ReLU(inplace=True))

        class TinyVGG(nn.Module):
            def __init__(self, classes=5):
                super().__init__()
                self.features = nn.Sequential(ConvBlock(3, 24), ConvBlock(24, 24, groups=24))
                self.fc = nn.Linear(24, classes)
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        nn.init.kaiming_normal_(m.weight)
                self._init_bias()

            def _init_bias(self):
                for m in self.modules():
                    if isinstance(m, nn.Linear):
                        nn.init.zeros_(m.bias)

        def vgg11():
            return TinyVGG()

        def vgg16():
            return TinyVGG(classes=7)
    """,
    "main.py": """
        import argparse
        import torch.nn as nn
        from zoo import vgg11, vgg16

        NETS = {"vgg11": vgg11(), "vgg16": vgg16()}

        ap = argparse.ArgumentParser()
        ap.add_argument("--net", default="vgg11")
        args = ap.parse_args()

        class Task(nn.Module):
            def __init__(self, hp):
                super().__init__()
                self.hp = hp
                self.model = NETS[self.hp.net]

        task = Task(args)
    """,
}


def test_a_local_model_named_like_a_well_known_one_is_counted_not_looked_up(tmp_path):
    make_job(tmp_path, SMALL_VGG)
    f = analyze_code(tmp_path, "python main.py --net vgg16", use_llm=False).facts
    # a Sequential subclass's layers and weight-init loops do not stop the count; not ImageNet VGG-16's 138M
    assert f["params"].value == (3 * 24 * 9 + 2 * 24) + (24 * 9 + 2 * 24) + (24 * 7 + 7)


def test_layer_formulas_follow_pytorchs_parameter_layout():
    assert build_nn("ConvTranspose2d", [16, 8, 4], {"stride": 2, "padding": 1}).total() == 16 * 8 * 16 + 8
    assert build_nn("Conv1d", [12, 12, 5], {"groups": 4, "bias": False}).total() == 12 * 3 * 5
    assert build_nn("GRU", [10, 20], {}).total() == 3 * 20 * (10 + 20) + 2 * 3 * 20
    attn, ffn, norms = 4 * 64 * 64 + 4 * 64, (64 * 256 + 256) + (256 * 64 + 64), 2 * 2 * 64
    assert build_nn("TransformerEncoderLayer", [64, 4, 256], {}).total() == attn + ffn + norms
    assert build_nn("BatchNorm2d", [32], {"affine": False}).total() == 0


DARKNET_STYLE = {
    "det/train.py": """
        import argparse
        import torch

        ap = argparse.ArgumentParser()
        ap.add_argument("--model", default="cfg/yolov3-spp.cfg")
        ap.add_argument("--epochs", type=int, default=50)
        args = ap.parse_args()
    """,
    "det/cfg/yolov3-spp.cfg": "[net]\nbatch=8\n",
    "det/cfg/my-experiment.cfg": "[net]\nbatch=8\n",
}


def test_a_model_definition_file_named_after_a_known_model_names_it(tmp_path):
    make_job(tmp_path, DARKNET_STYLE)
    f = analyze_code(tmp_path, "python det/train.py", use_llm=False).facts
    assert f["model_name"].value == "yolov3-spp"
    assert 40e6 < f["params"].value < 90e6
    # a definition file with no known model in its name says nothing about the size
    f = analyze_code(tmp_path, "python det/train.py --model cfg/my-experiment.cfg", use_llm=False).facts
    assert f.get("params") is None


HYDRA_MODEL = {
    "run.py": """
        import hydra

        @hydra.main(config_path="conf", config_name="main")
        def main(cfg):
            model = hydra.utils.instantiate(cfg.model)

        if __name__ == "__main__":
            main()
    """,
    "conf/main.yaml": """
        defaults:
          - model: mlp
        epochs: 4
    """,
    "conf/model/mlp.yaml": """
        _target_: lib.task.Classifier
        lr: 0.01
        optim:
          _target_: torch.optim.SGD
          _partial_: true
        net:
          _target_: lib.nets.Mlp
          sizes: [20, 48, 6]
    """,
    "lib/__init__.py": "",
    "lib/nets.py": """
        from torch import nn

        class Mlp(nn.Module):
            def __init__(self, sizes):
                super().__init__()
                layers = []
                for a, b in zip(sizes[:-1], sizes[1:]):
                    layers += [nn.Linear(a, b), nn.ReLU()]
                self.body = nn.Sequential(*layers)
    """,
    "lib/task.py": """
        import torch
        from torchmetrics import Accuracy

        class Classifier(torch.nn.Module):
            def __init__(self, net, optim, lr=0.1):
                super().__init__()
                self.net = net
                self.acc = Accuracy(task="multiclass", num_classes=6)
                self.loss = torch.nn.CrossEntropyLoss()
    """,
}


def test_a_model_a_config_builds_from_the_jobs_own_classes_is_counted(tmp_path):
    make_job(tmp_path, HYDRA_MODEL)
    f = analyze_code(tmp_path, "python run.py", use_llm=False).facts
    assert f["params"].value == (20 * 48 + 48) + (48 * 6 + 6)
    assert any(e.startswith("conf/model/mlp.yaml") for e in f["params"].evidence)


WRAPPED_BACKBONE = {
    "ssl.py": """
        import argparse
        import torch.nn as nn
        import torchvision
        from transformers import AutoTokenizer

        ap = argparse.ArgumentParser()
        ap.add_argument("--width", type=int, default=1024)
        args = ap.parse_args()

        class TwoViews(nn.Module):
            def __init__(self, args):
                super().__init__()
                self.backbone = torchvision.models.resnet18(zero_init_residual=True)
                self.backbone.fc = nn.Identity()
                self.tok = AutoTokenizer.from_pretrained("bert-base-uncased")
                sizes = [512] + [args.width] * 2
                layers = []
                for i in range(len(sizes) - 2):
                    layers.append(nn.Linear(sizes[i], sizes[i + 1], bias=False))
                    layers.append(nn.BatchNorm1d(sizes[i + 1]))
                layers.append(nn.Linear(sizes[-2], sizes[-1], bias=False))
                self.projector = nn.Sequential(*layers)

        model = TwoViews(args).cuda()
    """,
}


def test_a_library_backbone_inside_the_jobs_module_adds_its_published_size(tmp_path):
    make_job(tmp_path, WRAPPED_BACKBONE)
    f = analyze_code(tmp_path, "python ssl.py", use_llm=False).facts
    projector = 512 * 1024 + 2 * 1024 + 1024 * 1024
    assert f["params"].value == 11_700_000 + projector  # torchvision's ResNet-18 (11.7M) + the job's projector


TIED_LM = {
    "lm.py": """
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.ln = nn.LayerNorm(d)
                self.mix = nn.Linear(d, d)

        class TinyLM(nn.Module):
            def __init__(self, vocab=1000, d=32, n=3):
                super().__init__()
                self.body = nn.ModuleDict(dict(tok=nn.Embedding(vocab, d), pos=nn.Embedding(64, d),
                                               blocks=nn.ModuleList([Block(d) for _ in range(n)])))
                self.lm_head = nn.Linear(d, vocab, bias=False)
                self.body.tok.weight = self.lm_head.weight

        model = TinyLM()
        worker_copy = TinyLM()
    """,
}


def test_a_tied_output_layer_is_counted_once_and_a_second_copy_of_the_class_not_at_all(tmp_path):
    make_job(tmp_path, TIED_LM)
    f = analyze_code(tmp_path, "python lm.py", use_llm=False).facts
    assert f["params"].value == 64 * 32 + 3 * (2 * 32 + 32 * 32 + 32) + 32 * 1000


MLP_SPEC = {
    "probe.py": """
        import argparse
        import torch.nn as nn

        ap = argparse.ArgumentParser()
        ap.add_argument("--mlp", default="256-128-10")
        args = ap.parse_args()

        class Head(nn.Module):
            def __init__(self, spec):
                super().__init__()
                dims = [40] + list(map(int, spec.split("-")))
                self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])])

        head = Head(args.mlp)
    """,
}


def test_layer_widths_written_as_a_dash_separated_setting_are_read(tmp_path):
    make_job(tmp_path, MLP_SPEC)
    f = analyze_code(tmp_path, "python probe.py --mlp 64-8", use_llm=False).facts
    assert f["params"].value == (40 * 64 + 64) + (64 * 8 + 8)


LAUNCHERS = {
    "scripts/run_sft_Qwen_14b.sh": "deepspeed sft/main.py --model_name_or_path /MODEL_PATH/ --num_train_epochs 2\n",
    "scripts/train_7b.sh": "deepspeed sft/main.py --model_name_or_path /MODEL_PATH/ --num_train_epochs 2\n",
    "sft/main.py": """
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("--model_name_or_path")
        ap.add_argument("--num_train_epochs", type=int, default=1)
        args = ap.parse_args()
    """,
}


def test_a_launcher_script_named_after_a_family_and_size_names_the_model(tmp_path):
    make_job(tmp_path, LAUNCHERS)
    f = analyze_code(tmp_path, "bash scripts/run_sft_Qwen_14b.sh", use_llm=False).facts
    assert f["params"].value == 14e9
    # a size with no architecture in the file name is not evidence of the model
    assert analyze_code(tmp_path, "bash scripts/train_7b.sh", use_llm=False).value("params") is None

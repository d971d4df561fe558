"""The catalogue itself: every template with its workload class, job kinds, log style, model and GPU counts,
then the look-ups (`TEMPLATES`, `templates_for`) and the default parameters of a job (`default_params`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from schedmate.semantic.catalogue.base import (
    KINDS,
    Params,
    Template,
    _any,
    _between,
    _node_multiple,
    _one,
    _sub,
    layout,
)
from schedmate.semantic.catalogue.deepspeed import _deepspeed
from schedmate.semantic.catalogue.fairseq import _fairseq
from schedmate.semantic.catalogue.hf import _hf
from schedmate.semantic.catalogue.lightning import _lightning
from schedmate.semantic.catalogue.megatron import _megatron, _megatron_fits
from schedmate.semantic.catalogue.mmengine import _mmengine
from schedmate.semantic.catalogue.nanogpt import _nanogpt
from schedmate.semantic.catalogue.plain import (
    _CV_IMPORTS,
    _LM_IMPORTS,
    _PLAIN_DATA,
    _data,
    _eval,
    _plain,
    _srun,
)
from schedmate.semantic.catalogue.timm import _timm
from schedmate.semantic.catalogue.torchtitan import _titan
from schedmate.workloads import CATALOGUE


def _t(name: str, workload: str | None, kinds: str, style: str, framework: str, model: str, family: str,
       params_b: float, iter_s: float, render: Callable[[Params], dict[str, str]], fits: Callable[[int], bool],
       **kw: object) -> Template:
    return Template(name=name, workload=workload, kinds=frozenset(kinds.split()), style=style, framework=framework,
                    model=model, family=family, params_b=params_b, iter_s=iter_s, render=render, fits=fits,
                    **kw)  # type: ignore[arg-type]


_ALL: list[Template] = [
    # ---- LLM pre-training
    _t("megatron_gpt_1b3", "gpt", "pretrain", "megatron", "megatron", "gpt-1.3b", "gpt", 1.3, 1.8,
       _megatron(24, 2048, 16), _megatron_fits(2, 1), tp=2, micro_batch=4, seq_len=2048, lr=2e-4),
    _t("megatron_gpt_13b_tp4_pp2", "gpt", "pretrain", "megatron", "megatron", "gpt-13b", "gpt", 13.0, 6.5,
       _megatron(40, 5120, 40), lambda g: g >= 16 and g % 8 == 0, tp=4, pp=2, micro_batch=1, seq_len=2048, lr=1e-4),
    _t("megatron_llama_7b_tp4", "gpt", "pretrain sft", "megatron", "megatron", "llama-7b", "gpt", 6.7, 4.2,
       _megatron(32, 4096, 32), lambda g: g >= 8 and g % 8 == 0, tp=4, micro_batch=1, seq_len=4096, lr=3e-4),
    _t("torchtitan_llama3_8b", "gpt", "pretrain", "torchtitan", "pytorch", "llama3-8b", "llama", 8.0, 3.5,
       _titan("8B"), _node_multiple(8, 8), micro_batch=1, seq_len=8192),
    _t("torchtitan_llama3_70b", "gpt", "pretrain", "torchtitan", "pytorch", "llama3-70b", "llama", 70.0, 9.0,
       _titan("70B"), lambda g: g >= 32 and g % 16 == 0, tp=8, pp=2, micro_batch=1, seq_len=8192),
    _t("nanogpt_gpt2_124m", "gpt", "pretrain train", "nanogpt", "pytorch", "gpt2", "gpt", 0.124, 0.45,
       _nanogpt("train_gpt2", 12, 12, 768, "openwebtext"), _node_multiple(1), micro_batch=12, seq_len=1024,
       lr=6e-4),
    _t("deepspeed_zero3_gpt_6b7", "gpt", "pretrain", "deepspeed", "deepspeed", "gpt-6.7b", "gpt", 6.7, 5.0,
       _deepspeed("EleutherAI/pythia-6.9b", "AutoModelForCausalLM", 3, "Continued pre-training of a 6.9B decoder"),
       _node_multiple(8, 8), micro_batch=2, seq_len=2048, lr=1.6e-4),
    _t("fsdp_llama_pretrain", "gpt", "pretrain", "custom", "pytorch", "llama-1b", "llama", 1.1, 1.2,
       _plain("Llama-style decoder pre-training with plain PyTorch FSDP (full shard, bf16).",
              "LlamaDecoder(dim=2048, n_layers=22, n_heads=32, vocab=32000)",
              "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\nfrom llama_small import LlamaDecoder\n"
              "from data import next_batch, loss_fn",
              extra_files={"llama_small.py": "import torch.nn as nn\n\n\nclass LlamaDecoder(nn.Module):\n"
                           "    def __init__(self, dim, n_layers, n_heads, vocab):\n        super().__init__()\n"
                           "        self.emb = nn.Embedding(vocab, dim)\n        self.layers = nn.ModuleList(\n"
                           "            nn.TransformerEncoderLayer(dim, n_heads, batch_first=True) for _ in range(n_layers))\n"
                           "        self.head = nn.Linear(dim, vocab)\n\n    def forward(self, x):\n"
                           "        h = self.emb(x)\n        for layer in self.layers:\n            h = layer(h)\n"
                           "        return self.head(h)\n",
                           **_data("2048", 32000)}),
       _node_multiple(1, 2), micro_batch=4, seq_len=2048),
    # ---- fine-tuning (SFT), multimodal
    _t("hf_llama_sft_accelerate_fsdp", "gpt", "sft", "hf", "hf-trainer", "llama-7b", "llama", 6.7, 3.0,
       _hf("meta-llama/Llama-2-7b-hf", "CausalLM", "tatsu-lab/alpaca", "Supervised fine-tuning of Llama-2-7B",
           accelerate=True), _node_multiple(2, 2), micro_batch=4, seq_len=2048, lr=2e-5),
    _t("hf_mistral_sft", "gpt", "sft", "hf", "hf-trainer", "mistral-7b", "mistral", 7.2, 2.6,
       _hf("mistralai/Mistral-7B-v0.1", "CausalLM", "HuggingFaceH4/ultrachat_200k", "Chat SFT of Mistral-7B"),
       _node_multiple(1), micro_batch=2, seq_len=4096, lr=1e-5),
    _t("hf_llava_mllm", "gpt", "mllm sft", "hf", "hf-trainer", "llava-1.5-7b", "llama", 7.0, 3.2,
       _hf("llava-hf/llava-1.5-7b-hf", "Vision2Seq", "liuhaotian/LLaVA-Instruct-150K",
           "Visual instruction tuning of a LLaVA-style model", accelerate=True),
       _node_multiple(1), micro_batch=4, seq_len=2048, lr=2e-5),
    _t("deepspeed_zero1_gpt2_sft", "gpt", "sft", "deepspeed", "deepspeed", "gpt2-medium", "gpt", 0.355, 0.6,
       _deepspeed("gpt2-medium", "AutoModelForCausalLM", 1, "Instruction fine-tuning of GPT-2 medium"),
       _node_multiple(1, 2), micro_batch=8, seq_len=1024, lr=5e-5),
    _t("nanogpt_finetune_gpt2_xl", "gpt", "sft", "nanogpt", "pytorch", "gpt2-xl", "gpt", 1.5, 1.1,
       _nanogpt("finetune_shakespeare", 48, 25, 1600, "shakespeare", init="gpt2-xl"), _node_multiple(1),
       micro_batch=1, seq_len=1024, lr=3e-5),
    _t("hf_qwen_math_sft", "gpt", "sft", "hf", "hf-trainer", "qwen2-1.5b", "gpt", 1.5, 0.9,
       _hf("Qwen/Qwen2-1.5B", "CausalLM", "openai/gsm8k", "Math SFT of a 1.5B decoder"),
       _node_multiple(1), micro_batch=8, seq_len=1024, lr=1e-5),
    # ---- BERT / Transformer / LSTM LM
    _t("deepspeed_zero2_bert_large", "bert", "pretrain train", "deepspeed", "deepspeed", "bert-large", "bert", 0.34,
       0.9, _deepspeed("bert-large-uncased", "AutoModelForMaskedLM", 2, "BERT-large MLM pre-training"),
       _node_multiple(1, 2), micro_batch=16, seq_len=512, lr=1e-4),
    _t("megatron_bert_large", "bert", "pretrain train", "megatron", "megatron", "bert-large", "bert", 0.34, 0.7,
       _megatron(24, 1024, 16, bert=True), _megatron_fits(1, 1), micro_batch=32, seq_len=512, lr=1e-4),
    _t("hf_bert_glue", "bert", "sft train", "hf", "hf-trainer", "bert-base", "bert", 0.11, 0.25,
       _hf("bert-base-uncased", "SequenceClassification", "glue", "MNLI fine-tuning of BERT-base", bf16=False),
       _between(1, 8), micro_batch=32, seq_len=128, lr=2e-5),
    _t("fairseq_transformer_wmt", "transformer", "train", "fairseq", "pytorch", "transformer-big", "t5", 0.21, 0.5,
       _fairseq("translation", "transformer_vaswani_wmt_en_de_big", "data-bin/wmt16_en_de"), _any,
       micro_batch=8, lr=1e-3, log_every=100),
    _t("hf_t5_translation", "transformer", "sft train", "hf", "hf-trainer", "t5-base", "t5", 0.22, 0.4,
       _hf("t5-base", "Seq2SeqLM", "wmt16", "English-Romanian translation fine-tuning of T5-base", bf16=True),
       _between(1, 16), micro_batch=16, seq_len=512, lr=3e-4),
    _t("fairseq_lstm_lm", "lm", "train", "fairseq", "pytorch", "lstm-lm", "rnn", 0.07, 0.2,
       _fairseq("language_modeling", "lstm_lm", "data-bin/wikitext-103"), _any, micro_batch=4, lr=1e-3,
       log_every=100),
    _t("word_lm_lstm", "lm", "train", "custom", "pytorch", "lstm-lm", "rnn", 0.03, 0.08,
       _plain("Word-level LSTM language model on WikiText-2 (truncated BPTT).",
              "nn.LSTM(650, 650, num_layers=2, batch_first=True)", _LM_IMPORTS, opt="SGD",
              extra_args='ap.add_argument("--bptt", type=int, default=35)\n', extra_files=_data("35, 650", 33278)),
       _any, micro_batch=20, lr=20.0, log_every=200),
    # ---- vision
    _t("timm_resnet50", "resnet50", "train", "timm", "pytorch", "resnet50", "resnet", 0.026, 0.3, _timm("resnet50"),
       _any, per_epoch=True, micro_batch=128, lr=0.5, log_every=50, steps_per_epoch=1251),
    _t("timm_mobilenetv3_small_batch", "imagenet-small-batch", "train", "timm", "pytorch", "mobilenetv3_large_100",
       "cnn", 0.0055, 0.12, _timm("mobilenetv3_large_100"), _any, per_epoch=True, micro_batch=32, lr=0.05,
       log_every=50, steps_per_epoch=5004),
    _t("mmpretrain_resnet50", "resnet50", "train", "mmengine", "pytorch", "resnet50", "resnet", 0.026, 0.32,
       _mmengine("ImageClassifier", "ResNet", 50, 'head=dict(type="LinearClsHead", num_classes=1000, in_channels=2048)',
                 "ImageNet", "imagenet", "resnet50_8xb32_in1k"), _any, per_epoch=True, micro_batch=32, lr=0.1,
       log_every=100, steps_per_epoch=5004),
    _t("mmdet_yolov3", "yolov3", "train", "mmengine", "pytorch", "yolov3-d53", "yolo", 0.062, 0.6,
       _mmengine("YOLOV3", "Darknet", 53, 'bbox_head=dict(type="YOLOV3Head", num_classes=80)',
                 "CocoDataset", "coco", "yolov3_d53_8xb8_608e_coco"), _any, per_epoch=True, micro_batch=8,
       lr=0.001, log_every=50, steps_per_epoch=1833),
    _t("lightning_resnet18_cifar", "resnet18", "train", "lightning", "lightning", "resnet18", "resnet", 0.011, 0.05,
       _lightning("resnet18", "CIFAR10", 10, 32, "ResNet-18 on CIFAR-10"), _between(1, 16), per_epoch=True,
       micro_batch=128, lr=0.1, log_every=50, steps_per_epoch=49),
    _t("ddp_resnet18_imagenet", "resnet18", "train", "custom", "pytorch", "resnet18", "resnet", 0.011, 0.15,
       _plain("ResNet-18 ImageNet training with DistributedDataParallel.", "torchvision.models.resnet18()",
              _CV_IMPORTS, opt="SGD", extra_files=_data("3, 224, 224", 1000)), _any, micro_batch=256, lr=0.1,
       log_every=50),
    _t("lightning_vit_small_batch", "imagenet-small-batch", "train", "lightning", "lightning", "vit_b_16", "vit",
       0.086, 0.35, _lightning("vit_b_16", "ImageNet", 1000, 224, "ViT-B/16 on ImageNet, small batch", opt="AdamW"),
       _any, per_epoch=True, micro_batch=32, lr=3e-4, log_every=50, steps_per_epoch=5004),
    _t("ddp_yolov3_coco", "yolov3", "train", "custom", "pytorch", "yolov3", "yolo", 0.062, 0.55,
       _plain("YOLOv3 detector training on COCO (Darknet-53 backbone).", "YOLOv3(num_classes=80)",
              "from yolo import YOLOv3\nfrom data import next_batch, loss_fn",
              extra_files={"yolo.py": "import torch.nn as nn\nimport torchvision\n\n\nclass YOLOv3(nn.Module):\n"
                           "    def __init__(self, num_classes=80):\n        super().__init__()\n"
                           "        self.backbone = torchvision.models.resnet50()\n"
                           "        self.head = nn.Linear(1000, num_classes)\n\n    def forward(self, x):\n"
                           "        return self.head(self.backbone(x))\n", **_data("3, 608, 608", 80)}),
       _any, micro_batch=16, lr=1e-3, log_every=20),
    _t("cyclegan_horse2zebra", "cyclegan", "train", "custom", "pytorch", "cyclegan", "gan", 0.028, 0.25,
       _plain("CycleGAN (ResNet-9 generators, PatchGAN discriminators) on horse2zebra.",
              "CycleGAN(ngf=64, ndf=64)", "from cyclegan import CycleGAN\nfrom data import next_batch, loss_fn",
              opt="Adam", extra_files={"cyclegan.py": "import torch.nn as nn\n\n\nclass CycleGAN(nn.Module):\n"
                                       "    def __init__(self, ngf=64, ndf=64):\n        super().__init__()\n"
                                       "        self.g = nn.Sequential(nn.Conv2d(3, ngf, 7, padding=3), nn.ReLU(),"
                                       " nn.Conv2d(ngf, 3, 7, padding=3))\n\n    def forward(self, x):\n"
                                       "        return self.g(x).flatten(1)[:, :2]\n", **_data("3, 256, 256", 2)}),
       _between(1, 8), micro_batch=1, lr=2e-4, log_every=100),
    # ---- speech, recommendation, RL
    _t("ddp_deepspeech2", "deepspeech2", "train", "custom", "pytorch", "deepspeech2", "rnn", 0.087, 0.7,
       _plain("DeepSpeech2 (2 conv + 5 bidirectional GRU layers) on LibriSpeech with CTC loss.",
              "DeepSpeech2(rnn_layers=5, hidden=1024)", "from ds2 import DeepSpeech2\nfrom data import next_batch, loss_fn",
              extra_files={"ds2.py": "import torch.nn as nn\n\n\nclass DeepSpeech2(nn.Module):\n"
                           "    def __init__(self, rnn_layers=5, hidden=1024):\n        super().__init__()\n"
                           "        self.rnn = nn.GRU(161, hidden, num_layers=rnn_layers, bidirectional=True,"
                           " batch_first=True)\n        self.fc = nn.Linear(2 * hidden, 29)\n\n"
                           "    def forward(self, x):\n        return self.fc(self.rnn(x)[0]).mean(1)\n",
                           **_data("400, 161", 29)}), _any, micro_batch=32, lr=3e-4, log_every=20),
    _t("dlrm_criteo", "recommendation", "train", "custom", "pytorch", "dlrm", "dlrm", 0.54, 0.06,
       _plain("DLRM click-through-rate model on Criteo Terabyte (sharded embeddings, data-parallel MLPs).",
              "DLRM(embedding_dim=128, bottom_mlp=[512, 256, 128], top_mlp=[1024, 1024, 512, 256, 1])",
              "from dlrm import DLRM\nfrom data import next_batch, loss_fn",
              extra_files={"dlrm.py": "import torch.nn as nn\n\n\nclass DLRM(nn.Module):\n"
                           "    def __init__(self, embedding_dim, bottom_mlp, top_mlp):\n        super().__init__()\n"
                           "        self.emb = nn.EmbeddingBag(40_000_000, embedding_dim, mode='sum')\n"
                           "        self.mlp = nn.Linear(13, top_mlp[-1] + 1)\n\n    def forward(self, x):\n"
                           "        return self.mlp(x)\n", **_data("13", 2)}), _any, micro_batch=2048, lr=1.0,
       log_every=100),
    _t("ncf_movielens", "recommendation", "train", "custom", "pytorch", "ncf", "dlrm", 0.03, 0.04,
       _plain("Neural collaborative filtering (NeuMF) on MovieLens-20M.", "NeuMF(users=138493, items=26744, factors=64)",
              "from ncf import NeuMF\nfrom data import next_batch, loss_fn",
              extra_files={"ncf.py": "import torch.nn as nn\n\n\nclass NeuMF(nn.Module):\n"
                           "    def __init__(self, users, items, factors):\n        super().__init__()\n"
                           "        self.u = nn.Embedding(users, factors)\n        self.fc = nn.Linear(factors, 2)\n\n"
                           "    def forward(self, x):\n        return self.fc(x)\n", **_data("64", 2)}),
       _between(1, 8), micro_batch=65536, lr=1e-3, log_every=100),
    _t("rl_a3c_atari", "a3c", "train", "custom", "pytorch", "a3c", "mlp", 0.002, 0.05,
       _plain("A3C-style actor-critic on Atari Pong: CPU actor processes feed a GPU learner.",
              "ActorCritic(n_actions=6)", "from actor_critic import ActorCritic\nfrom data import next_batch, loss_fn",
              opt="RMSprop", extra_files={"actor_critic.py": "import torch.nn as nn\n\n\nclass ActorCritic(nn.Module):\n"
                                          "    def __init__(self, n_actions):\n        super().__init__()\n"
                                          "        self.body = nn.Sequential(nn.Flatten(), nn.Linear(4 * 84 * 84, 256),"
                                          " nn.ReLU())\n        self.pi = nn.Linear(256, n_actions)\n\n"
                                          "    def forward(self, x):\n        return self.pi(self.body(x))\n",
                                          **_data("4, 84, 84", 6)}),
       _between(1, 8), micro_batch=20, lr=7e-4, log_every=100),
    _t("rl_ppo_mujoco", "a3c", "train", "custom", "pytorch", "ppo", "mlp", 0.001, 0.03,
       _plain("PPO on a MuJoCo locomotion task (vectorised environments, GPU policy updates).",
              "Policy(obs_dim=17, act_dim=6)", "from policy import Policy\nfrom data import next_batch, loss_fn",
              opt="Adam", extra_files={"policy.py": "import torch.nn as nn\n\n\nclass Policy(nn.Module):\n"
                                       "    def __init__(self, obs_dim, act_dim):\n        super().__init__()\n"
                                       "        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(),"
                                       " nn.Linear(64, act_dim))\n\n    def forward(self, x):\n"
                                       "        return self.net(x)\n", **_data("17", 6)}),
       _one, micro_batch=2048, lr=3e-4, log_every=50),
    # ---- eval and debug jobs (short)
    _t("llm_eval_harness", "gpt", "eval", "custom", "pytorch", "llama-7b", "llama", 6.7, 0.8,
       _eval("Evaluate a Llama checkpoint on a benchmark suite (log-likelihood of the choices, no training).",
             "AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf', torch_dtype=torch.bfloat16)",
             "from transformers import AutoModelForCausalLM\n\nfrom data import next_batch, loss_fn", "evaluate.py",
             _data("4096", 32000)),
       _node_multiple(1), micro_batch=8, lr=0.0, log_every=10),
    _t("imagenet_eval_resnet50", "resnet50", "eval", "custom", "pytorch", "resnet50", "resnet", 0.026, 0.1,
       _eval("Validation pass of a ResNet-50 checkpoint on ImageNet val (top-1/top-5).",
             "torchvision.models.resnet50()", _CV_IMPORTS, "validate.py", _data("3, 224, 224", 1000)),
       _between(1, 8), micro_batch=256, lr=0.0, log_every=20),
    _t("torchtitan_debugmodel", "gpt", "debug", "torchtitan", "pytorch", "llama3-debug", "llama", 0.01, 0.15,
       _titan("debugmodel"), _node_multiple(1), micro_batch=8, seq_len=2048, log_every=1),
    _t("nanogpt_shakespeare_char_debug", "gpt", "debug", "nanogpt", "pytorch", "gpt-char", "gpt", 0.01, 0.05,
       _nanogpt("train_shakespeare_char", 6, 6, 384, "shakespeare_char"), _between(1, 8), micro_batch=64,
       seq_len=256, lr=1e-3, log_every=10),
    _t("megatron_gpt_debug_tiny", "gpt", "debug", "megatron", "megatron", "gpt-125m", "gpt", 0.125, 0.3,
       _megatron(12, 768, 12, desc="Smoke test of the training stack with a 125M GPT"), _megatron_fits(1, 1),
       micro_batch=4, seq_len=1024, lr=6e-4, log_every=1),
    # ---- CPU-only and the catch-all
    _t("cpu_tabular_mlp", None, "train debug eval", "custom", "pytorch", "mlp", "mlp", 0.0001, 0.02,
       _plain("Churn prediction MLP on tabular features (CPU only).", "nn.Sequential(nn.Linear(64, 256), nn.ReLU(), "
              "nn.Linear(256, 2))", "import torch.nn as nn\n\nfrom data import next_batch, loss_fn", opt="Adam",
              extra_files={"data.py": _sub(_PLAIN_DATA, shape="64", classes=2, batches=100).replace(', device="cuda"', "")},
              cpu=True),
       lambda g: g == 0, micro_batch=512, lr=1e-3, log_every=50),
    _t("srun_generic_ddp", None, "train", "custom", "pytorch", "resnet50", "resnet", 0.026, 0.3, _srun,
       lambda g: g >= 1, micro_batch=64, lr=0.1, log_every=20),
]

TEMPLATES: dict[str, Template] = {t.name: t for t in _ALL}
CATCH_ALL = "srun_generic_ddp"
CPU_TEMPLATE = "cpu_tabular_mlp"

for _tpl in _ALL:
    if _tpl.workload is not None and _tpl.workload not in CATALOGUE:
        raise ValueError(f"template {_tpl.name}: unknown workload class {_tpl.workload!r}")
    if not _tpl.kinds <= set(KINDS):
        raise ValueError(f"template {_tpl.name}: unknown kinds {sorted(_tpl.kinds - set(KINDS))}")


def templates_for(num_gpus: int, kinds: set[str] | None = None, workload: str | None = None) -> list[Template]:
    """Templates that can run on `num_gpus` GPUs, serve one of `kinds` and are of `workload` (None: any)."""
    out = []
    for t in _ALL:
        if t.name == CATCH_ALL or not t.fits(num_gpus):
            continue
        if kinds is not None and not (t.kinds & kinds):
            continue
        if workload is not None and t.workload != workload:
            continue
        out.append(t)
    return out


MAX_EPOCHS = 300
"""Per-epoch templates never configure more epochs than this; longer runs get longer epochs."""


def default_params(t: Template, num_gpus: int, steps: int, seed: int = 0) -> Params:
    """Parameters for `t` on `num_gpus` GPUs with `steps` configured steps (for per-epoch templates the steps
    are split into epochs of the template's epoch length, scaled by GPUs)."""
    lay = layout(num_gpus) if num_gpus >= 1 else (1, 0)
    nodes, per = lay if lay is not None else (1, num_gpus)
    log_every = max(1, min(t.log_every, steps // 10 or 1))
    p = Params(num_gpus=num_gpus, nodes=nodes, gpus_per_node=per, steps=max(1, steps), micro_batch=t.micro_batch,
               lr=t.lr, seq_len=t.seq_len, tp=t.tp, pp=t.pp, log_every=log_every, seed=seed)
    if t.per_epoch:
        spe = max(1, t.steps_per_epoch * 8 // max(1, num_gpus))
        if steps < spe:
            spe = max(1, steps)
        if steps > MAX_EPOCHS * spe:  # a very long run reads a bigger dataset, not 10^5 tiny epochs
            spe = -(-steps // MAX_EPOCHS)
        epochs = max(1, round(steps / spe))
        p = replace(p, epochs=epochs, steps_per_epoch=spe, steps=epochs * spe, log_every=max(1, min(log_every, spe)))
    return p


__all__ = ["CATCH_ALL", "CPU_TEMPLATE", "MAX_EPOCHS", "TEMPLATES", "default_params", "templates_for"]

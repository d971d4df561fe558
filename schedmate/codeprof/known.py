"""Known model names -> family and parameter count; family keywords; family -> workload class."""

from __future__ import annotations

import re

# (regex on the normalised name, canonical name, family, parameters)
KNOWN_MODELS: tuple[tuple[str, str, str, float], ...] = (
    (r"^resnet-?18$", "resnet18", "resnet", 11.7e6),
    (r"^resnet-?34$", "resnet34", "resnet", 21.8e6),
    (r"^resnet-?50$", "resnet50", "resnet", 25.6e6),
    (r"^resnet-?101$", "resnet101", "resnet", 44.5e6),
    (r"^resnet-?152$", "resnet152", "resnet", 60.2e6),
    (r"^wide_resnet50_2$", "wide_resnet50_2", "resnet", 68.9e6),
    (r"^vgg-?16$", "vgg16", "cnn", 138e6),
    (r"^mobilenet_?v2$", "mobilenet_v2", "cnn", 3.5e6),
    (r"^efficientnet_?b0$", "efficientnet_b0", "cnn", 5.3e6),
    (r"^vit[_-]b[_-]16$|^vit[_-]base[_-]patch16[_-]224$|^vit-base", "vit-base", "vit", 86.6e6),
    (r"^vit[_-]l[_-]16$|^vit[_-]large[_-]patch16[_-]224$|^vit-large", "vit-large", "vit", 304e6),
    (r"^vit[_-]h[_-]14$|^vit-huge", "vit-huge", "vit", 632e6),
    (r"^bert-base(-(un)?cased)?$", "bert-base", "bert", 110e6),
    (r"^bert-large(-(un)?cased)?(-whole-word-masking)?$", "bert-large", "bert", 340e6),
    (r"^roberta-base$", "roberta-base", "bert", 125e6),
    (r"^roberta-large$", "roberta-large", "bert", 355e6),
    (r"^distilbert-base(-(un)?cased)?$", "distilbert-base", "bert", 66e6),
    (r"^t5-small$", "t5-small", "t5", 60e6),
    (r"^t5-base$", "t5-base", "t5", 220e6),
    (r"^t5-large$", "t5-large", "t5", 770e6),
    (r"^t5-3b$", "t5-3b", "t5", 2.8e9),
    (r"^t5-11b$", "t5-11b", "t5", 11e9),
    (r"^gpt2$", "gpt2", "gpt", 124e6),
    (r"^gpt2-medium$", "gpt2-medium", "gpt", 355e6),
    (r"^gpt2-large$", "gpt2-large", "gpt", 774e6),
    (r"^gpt2-xl$", "gpt2-xl", "gpt", 1.5e9),
    (r"^opt-1\.3b$", "opt-1.3b", "gpt", 1.3e9),
    (r"^opt-6\.7b$", "opt-6.7b", "gpt", 6.7e9),
    (r"^llama-?2?-7b(-hf|-chat-hf)?$|^llama-7b$", "llama-7b", "llama", 6.7e9),
    (r"^llama-?2-13b(-hf|-chat-hf)?$|^llama-13b$", "llama-13b", "llama", 13.0e9),
    (r"^llama-?2-70b(-hf|-chat-hf)?$|^llama-70b$", "llama-70b", "llama", 69e9),
    (r"^(meta-)?llama-?3(\.1)?-8b(-instruct)?$|^llama3-8b$", "llama3-8b", "llama", 8.0e9),
    (r"^(meta-)?llama-?3(\.1)?-70b(-instruct)?$|^llama3-70b$", "llama3-70b", "llama", 70.6e9),
    (r"^llama-?3\.2-1b(-instruct)?$|^llama3-1b$", "llama3.2-1b", "llama", 1.24e9),
    (r"^mistral-7b(-v0\.\d)?(-instruct(-v0\.\d)?)?$", "mistral-7b", "mistral", 7.2e9),
    (r"^mixtral-8x7b(-v0\.\d)?(-instruct(-v0\.\d)?)?$", "mixtral-8x7b", "mistral", 46.7e9),
    (r"^qwen2\.5-0\.5b(-instruct)?$", "qwen2.5-0.5b", "llama", 0.49e9),
    (r"^qwen2\.5-7b(-instruct)?$", "qwen2.5-7b", "llama", 7.6e9),
)

# identifier keyword -> family (order matters: first hit wins)
FAMILY_KEYWORDS: tuple[tuple[str, str], ...] = (
    ("mixtral", "mistral"),
    ("mistral", "mistral"),
    ("llama", "llama"),
    ("qwen", "llama"),
    ("roberta", "bert"),
    ("deberta", "bert"),
    ("bert", "bert"),
    ("t5", "t5"),
    ("gpt", "gpt"),
    ("vit", "vit"),
    ("resnet", "resnet"),
    ("unet", "unet"),
    ("dlrm", "dlrm"),
    ("ncf", "dlrm"),
    ("deepfm", "dlrm"),
    ("neumf", "dlrm"),
    ("collab", "dlrm"),
    ("yolo", "yolo"),
    ("gan", "gan"),
    ("lstm", "rnn"),
    ("gru", "rnn"),
    ("deepspeech", "rnn"),
    ("vgg", "cnn"),
    ("mobilenet", "cnn"),
    ("efficientnet", "cnn"),
    ("convnet", "cnn"),
)

# family -> workload class of schedmate.workloads.CATALOGUE
FAMILY_WORKLOAD = {
    "gpt": "gpt",
    "llama": "gpt",
    "mistral": "gpt",
    "bert": "bert",
    "t5": "transformer",
    "vit": "transformer",
    "resnet": "resnet50",
    "cnn": "resnet18",
    "unet": "cyclegan",
    "gan": "cyclegan",
    "dlrm": "recommendation",
    "rnn": "deepspeech2",
    "mlp": "a3c",
    "yolo": "yolov3",
}


def normalise_name(name: str) -> str:
    n = str(name).strip().strip("/").lower()
    n = n.rsplit("/", 1)[-1]
    return n


def lookup_model(name: str | None) -> tuple[str, str, float] | None:
    """(canonical name, family, params) for a known model name."""
    if not name:
        return None
    n = normalise_name(name)
    for pat, canon, fam, params in KNOWN_MODELS:
        if re.search(pat, n):
            return canon, fam, params
    return None


def family_of(name: str | None) -> str | None:
    if not name:
        return None
    hit = lookup_model(name)
    if hit:
        return hit[1]
    n = normalise_name(name)
    for kw, fam in FAMILY_KEYWORDS:
        if kw == "t5":
            if re.search(r"(^|[^a-z])t5", n):
                return fam
            continue
        if kw in {"gan", "gru", "vit", "ncf"}:
            if re.search(rf"(^|[^a-z]){kw}|{kw}($|[^a-z])", n) or n.endswith(kw):
                return fam
            continue
        if kw in n:
            return fam
    return None

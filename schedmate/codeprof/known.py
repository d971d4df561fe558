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
    # published sizes of well-known models whose names state no size
    (r"^vit[_-](s|small)([-_/]|$)", "vit-small", "vit", 22e6),
    (r"^vit[_-](ti|tiny)([-_/]|$)", "vit-tiny", "vit", 5.7e6),
    (r"^vit[_-](b|base)([-_/]|$)", "vit-base", "vit", 86.6e6),
    (r"^vit[_-](l|large)([-_/]|$)", "vit-large", "vit", 304e6),
    (r"^vit[_-](h|huge)([-_/]|$)", "vit-huge", "vit", 632e6),
    (r"^deit[_-](ti|tiny)", "deit-tiny", "vit", 5.7e6),
    (r"^deit[_-](s|small)", "deit-small", "vit", 22e6),
    (r"^deit[_-](b|base)", "deit-base", "vit", 86.6e6),
    (r"^swin[_-]?(t|tiny)([_-]|$)", "swin-tiny", "vit", 28e6),
    (r"^swin[_-]?(s|small)([_-]|$)", "swin-small", "vit", 50e6),
    (r"^swin[_-]?(b|base)([_-]|$)", "swin-base", "vit", 88e6),
    (r"^swin[_-]?(l|large)([_-]|$)", "swin-large", "vit", 197e6),
    (r"^convnext[_-]?(t|tiny)([_-]|$)", "convnext-tiny", "cnn", 28.6e6),
    (r"^convnext[_-]?(s|small)([_-]|$)", "convnext-small", "cnn", 50e6),
    (r"^convnext[_-]?(b|base)([_-]|$)", "convnext-base", "cnn", 89e6),
    (r"^convnext[_-]?(l|large)([_-]|$)", "convnext-large", "cnn", 198e6),
    (r"^dinov2[_-]vits14", "dinov2-vits14", "vit", 21e6),
    (r"^dinov2[_-]vitb14", "dinov2-vitb14", "vit", 86e6),
    (r"^dinov2[_-]vitl14", "dinov2-vitl14", "vit", 300e6),
    (r"^dinov2[_-]vitg14", "dinov2-vitg14", "vit", 1.1e9),
    (r"^resnext50", "resnext50", "resnet", 25e6),
    (r"^resnext101", "resnext101", "resnet", 88.8e6),
    (r"^densenet121$", "densenet121", "cnn", 8e6),
    (r"^efficientnet[_-]?b1$", "efficientnet_b1", "cnn", 7.8e6),
    (r"^efficientnet[_-]?b3$", "efficientnet_b3", "cnn", 12e6),
    (r"^efficientnet[_-]?b4$", "efficientnet_b4", "cnn", 19e6),
    (r"^efficientnet[_-]?b7$", "efficientnet_b7", "cnn", 66e6),
    (r"^yolov5n", "yolov5n", "yolo", 1.9e6),
    (r"^yolov5s", "yolov5s", "yolo", 7.2e6),
    (r"^yolov5m", "yolov5m", "yolo", 21.2e6),
    (r"^yolov5l", "yolov5l", "yolo", 46.5e6),
    (r"^yolov5x", "yolov5x", "yolo", 86.7e6),
    (r"^yolov8n", "yolov8n", "yolo", 3.2e6),
    (r"^yolov8s", "yolov8s", "yolo", 11.2e6),
    (r"^yolov8m", "yolov8m", "yolo", 25.9e6),
    (r"^yolov8l", "yolov8l", "yolo", 43.7e6),
    (r"^yolov8x", "yolov8x", "yolo", 68.2e6),
    (r"^whisper-tiny", "whisper-tiny", "t5", 39e6),
    (r"^whisper-base", "whisper-base", "t5", 74e6),
    (r"^whisper-small", "whisper-small", "t5", 244e6),
    (r"^whisper-medium", "whisper-medium", "t5", 769e6),
    (r"^whisper-large", "whisper-large", "t5", 1.55e9),
    (r"^wav2vec2-base", "wav2vec2-base", "bert", 95e6),
    (r"^wav2vec2-large", "wav2vec2-large", "bert", 317e6),
    (r"^hubert-base", "hubert-base", "bert", 95e6),
    (r"^hubert-large", "hubert-large", "bert", 316e6),
    (r"^clip-vit-base-patch(32|16)$|^vit-b-(32|16)$", "clip-vit-b", "vit", 150e6),
    (r"^clip-vit-large-patch14|^vit-l-14$", "clip-vit-l-14", "vit", 428e6),
    (r"^bart-base$", "bart-base", "t5", 140e6),
    (r"^bart-large", "bart-large", "t5", 406e6),
    (r"^(flan-)?t5-v1_1-small$|^flan-t5-small$", "t5-v1_1-small", "t5", 77e6),
    (r"^(flan-)?t5-v1_1-base$|^flan-t5-base$", "t5-v1_1-base", "t5", 248e6),
    (r"^(flan-)?t5-v1_1-large$|^flan-t5-large$", "t5-v1_1-large", "t5", 783e6),
    (r"^(flan-)?t5-v1_1-xl$|^flan-t5-xl$", "t5-v1_1-xl", "t5", 2.85e9),
    (r"^(flan-)?t5-v1_1-xxl$|^flan-t5-xxl$", "t5-v1_1-xxl", "t5", 11.3e9),
    (r"^xlm-roberta-base$", "xlm-roberta-base", "bert", 270e6),
    (r"^xlm-roberta-large$", "xlm-roberta-large", "bert", 560e6),
    (r"^deberta-v3-base$", "deberta-v3-base", "bert", 184e6),
    (r"^deberta-v3-large$", "deberta-v3-large", "bert", 435e6),
    (r"^albert-base", "albert-base", "bert", 12e6),
    (r"^electra-base", "electra-base", "bert", 110e6),
    (r"^electra-large", "electra-large", "bert", 335e6),
    (r"^phi-1_5$", "phi-1.5", "gpt", 1.4e9),
    (r"^phi-2$", "phi-2", "gpt", 2.7e9),
    (r"^stable-diffusion-v1-[1-5]$|^sd-v1-[1-5]", "stable-diffusion-v1 unet", "unet", 860e6),
    (r"^stable-diffusion-2(-1)?(-base)?$", "stable-diffusion-v2 unet", "unet", 865e6),
    (r"^stable-diffusion-xl-base", "stable-diffusion-xl unet", "unet", 2.6e9),
)

# identifier keyword -> family (order matters: first hit wins)
FAMILY_KEYWORDS: tuple[tuple[str, str], ...] = (
    ("mixtral", "mistral"),
    ("mistral", "mistral"),
    ("llama", "llama"),
    ("qwen", "llama"),
    ("vicuna", "llama"),
    ("alpaca", "llama"),
    ("baichuan", "llama"),
    ("internlm", "llama"),
    ("yi-", "llama"),
    ("deepseek", "llama"),
    ("gemma", "llama"),
    ("tinyllama", "llama"),
    ("olmo", "llama"),
    ("pythia", "gpt"),
    ("neox", "gpt"),
    ("gpt-j", "gpt"),
    ("opt-", "gpt"),
    ("bloom", "gpt"),
    ("falcon", "gpt"),
    ("phi-", "gpt"),
    ("mpt-", "gpt"),
    ("starcoder", "gpt"),
    ("codegen", "gpt"),
    ("chatglm", "gpt"),
    ("whisper", "t5"),
    ("bart", "t5"),
    ("wav2vec", "bert"),
    ("hubert", "bert"),
    ("electra", "bert"),
    ("albert", "bert"),
    ("swin", "vit"),
    ("deit", "vit"),
    ("dino", "vit"),
    ("clip", "vit"),
    ("convnext", "cnn"),
    ("resnext", "resnet"),
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


# a size stated in the name: `Llama-2-7b-hf`, `pythia-1.4b-deduped`, `opt-350m`, `Mixtral-8x7B`
_SIZE_TOKEN = re.compile(r"(?:^|[-_./ ])(?:(\d+)x)?(\d+(?:\.\d+)?)([bm])(?=$|[-_./ ])")
# share of an MoE's n x expert-size that is real parameters (attention and embeddings are shared):
# Mixtral 8x7B has 46.7B, not 56B
_MOE_SHARED = 0.83


def size_from_name(name: str | None) -> float | None:
    """Parameters stated by a size token in a model name, or None (never guessed from anything else)."""
    if not name:
        return None
    hits = _SIZE_TOKEN.findall(normalise_name(name))
    if len(hits) != 1:  # none, or ambiguous (`7b-to-13b`)
        return None
    experts, size, unit = hits[0]
    n = float(size) * (1e9 if unit == "b" else 1e6)
    if experts:
        n *= int(experts) * _MOE_SHARED
    return n if 1e6 <= n <= 3e12 else None


def lookup_model(name: str | None) -> tuple[str, str, float] | None:
    """(canonical name, family, params) for a known model name or a name that states its size."""
    if not name:
        return None
    n = normalise_name(name)
    for pat, canon, fam, params in KNOWN_MODELS:
        if n == canon or re.search(pat, n):
            return canon, fam, params
    size = size_from_name(n)
    if size is not None:
        return n, family_keyword(n) or "", size
    return None


def family_of(name: str | None) -> str | None:
    if not name:
        return None
    hit = lookup_model(name)
    if hit and hit[1]:
        return hit[1]
    return family_keyword(normalise_name(name))


def family_keyword(n: str) -> str | None:
    """The family a keyword in the (normalised) name points to."""
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

"""Known model names -> family and parameter count; family keywords; family -> workload class."""

from __future__ import annotations

import re

from schedmate.codeprof.known_models import KNOWN_MODELS, SCALES  # noqa: F401 - SCALES is read as known.SCALES

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
    """Lower case, the part after an organisation or directory (`meta-llama/Llama-2-7b-hf` -> `llama-2-7b-hf`),
    except where the part after the slash is a variant of the name itself (`DiT-XL/2`, `ViT-B/16`)."""
    n = str(name).strip().strip("/").lower()
    head, sep, tail = n.rpartition("/")
    if sep and re.fullmatch(r"\d{1,2}", tail) and head:
        return f"{head.rsplit('/', 1)[-1]}-{tail}"
    return tail


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


def lookup_in_path(path: str | None) -> tuple[str, str, float] | None:
    """A known model named by a directory of a local path (`/path/to/llama-7B/hf` -> llama-7b): the last
    component that is a known model, or that states its size beside a family keyword (a bare `7b` directory
    is no evidence)."""
    if not path or "/" not in str(path):
        return None
    for part in reversed([p for p in str(path).strip("/").split("/") if p]):
        hit = lookup_model(part)
        if hit and (any(re.search(pat, normalise_name(part)) for pat, *_ in KNOWN_MODELS)
                    or family_keyword(normalise_name(part))):
            return hit
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

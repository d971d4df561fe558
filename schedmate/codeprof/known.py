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
# (`bloom-7b1`, `bloom-1b1`: a digit after the unit is the first decimal, BLOOM's spelling of 7.1B)
_SIZE_TOKEN = re.compile(r"(?:^|[-_./ ])(?:(\d+)x)?(\d+(?:\.\d+)?)([bm])(\d)?(?=$|[-_./ ])")
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
    experts, size, unit, tenth = hits[0]
    if tenth and "." in size:
        return None
    n = float(f"{size}.{tenth}" if tenth else size) * (1e9 if unit == "b" else 1e6)
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
    return encoder_from_name(n)


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


# encoder families whose checkpoints are named by a size word (`roberta-base`, `ModernBERT-large`,
# `paraphrase-mpnet-base-v2`): the published size of each (family, word); longer family names first
ENCODER_SIZE_WORDS: tuple[tuple[str, str, dict[str, float]], ...] = (
    ("modernbert", "bert", {"base": 1.49e8, "large": 3.95e8}),
    ("xlm-roberta", "bert", {"base": 2.78e8, "large": 5.6e8, "xl": 3.5e9, "xxl": 1.07e10}),
    ("distilroberta", "bert", {"base": 8.2e7}),
    ("distilbert", "bert", {"base": 6.6e7}),
    ("roberta", "bert", {"base": 1.25e8, "large": 3.55e8}),
    ("deberta-v3", "bert", {"xsmall": 7.0e7, "small": 1.42e8, "base": 1.84e8, "large": 4.35e8}),
    ("deberta", "bert", {"base": 1.39e8, "large": 4.05e8, "xlarge": 7.5e8}),
    ("electra", "bert", {"small": 1.4e7, "base": 1.1e8, "large": 3.35e8}),
    ("albert", "bert", {"base": 1.2e7, "large": 1.8e7, "xlarge": 6.0e7, "xxlarge": 2.35e8}),
    ("mpnet", "bert", {"base": 1.09e8}),
    ("bert", "bert", {"tiny": 4.4e6, "mini": 1.1e7, "small": 2.9e7, "medium": 4.1e7, "base": 1.1e8,
                      "large": 3.4e8}),
    ("t5", "t5", {"small": 6.0e7, "base": 2.2e8, "large": 7.7e8, "xl": 3.0e9, "xxl": 1.1e10}),
)
_SIZE_WORD = re.compile(r"(?:^|[-_./ ])(xsmall|tiny|mini|small|medium|base|large|xlarge|xxlarge|xl|xxl)(?=$|[-_./ ])")
# BERT-style layer/width codes: `bert_uncased_L-4_H-256_A-4`, `MiniLM-L12-H384-uncased`
_LAYER_WIDTH = re.compile(r"(?:^|[-_])l-?(\d{1,2})[-_]h-?(\d{2,4})(?=$|[-_])")


def encoder_from_name(n: str) -> tuple[str, str, float] | None:
    """(name, family, params) of an encoder checkpoint named by its family and a size word, or by its layer
    and width code (counted as a BERT encoder over a 30,522-word vocabulary: 12 d^2 per layer plus biases,
    norms, 512 positions), else None. `n` is normalised; a word no family of the table publishes is None."""
    if m := _LAYER_WIDTH.search(n):
        layers, width = int(m.group(1)), int(m.group(2))
        from schedmate.codeprof.static.modelsize.families import decoder_lm_params

        size = decoder_lm_params(layers, width, heads=max(1, width // 64), ffn=4 * width, vocab=30522,
                                 gated=False, tied=True, positions=512, bias=True)
        return n, family_keyword(n) or "bert", float(size)
    words = _SIZE_WORD.findall(n)
    if len(set(words)) != 1:
        return None
    for fam_word, fam, sizes in ENCODER_SIZE_WORDS:
        if re.search(rf"(^|[^a-z]){re.escape(fam_word)}", n) and words[0] in sizes:
            return n, fam, sizes[words[0]]
    return None

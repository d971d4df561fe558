"""The context pack: the lines most relevant to the open fields, numbered `file:line| text`, within a token budget."""

from __future__ import annotations

import re
from dataclasses import dataclass

from schedmate.codeprof.llm_fields import (
    ASKABLE,
    CHARS_PER_TOKEN,
    TOKEN_BUDGET,
)
from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.static import StaticResult


@dataclass
class Region:
    file: str
    start: int
    end: int
    score: float


def _numbered(path: str, lines: list[str], start: int, end: int) -> str:
    out = [f"### {path}:{start}-{end}"]
    for i in range(start, end + 1):
        text = lines[i - 1].replace("<<<JOB", "<<JOB").replace("JOB>>>", "JOB>>")
        out.append(f"{i}| {text[:200]}")
    return "\n".join(out)


def build_context(
    res: StaticResult,
    wd: Workdir,
    fields: list[str],
    budget_tokens: int = TOKEN_BUDGET,
    extra_regions: list[tuple[str, int, int]] | None = None,
) -> tuple[str, list[str]]:
    """Ranked, numbered excerpt within the budget; returns (text, files included)."""
    budget = int(budget_tokens * CHARS_PER_TOKEN)
    keywords = [k for f in fields for k in ASKABLE[f][2]]
    pieces: list[tuple[float, str, str]] = []  # (score, file, text)
    launch = res.launch
    if launch is not None:
        cmd_text = (
            "### command\n"
            + " ".join([*launch.chain, str(launch.script or launch.module or ""), *launch.args])[:600]
        )
        pieces.append((1e9, "cmd", cmd_text))
    files = [f for f in ([res.entry] if res.entry else []) + [f for f in res.py if f != res.entry] if f]
    regions: list[Region] = []
    for rel in files:
        text = wd.read_text(rel)
        if text is None:
            continue
        lines = text.splitlines()
        n = len(lines)
        is_entry = rel == res.entry
        # head (docstring, imports): always for the entry script
        if is_entry:
            regions.append(Region(rel, 1, min(n, 12), 1e6))
        summary = res.py.get(rel, {})
        for c in summary.get("classes", []):
            regions.append(
                Region(
                    rel,
                    c["line"],
                    min(c["end"] or c["line"], c["line"] + 14),
                    50 + (20 if any(k in ("class ", "nn.Module") for k in keywords) else 0),
                )
            )
        for i, line in enumerate(lines, 1):
            hits = sum(1 for k in keywords if k.lower() in line.lower())
            if hits:
                regions.append(Region(rel, max(1, i - 2), min(n, i + 2), 10 * hits + (5 if is_entry else 0)))
        for a in summary.get("argparse", [])[:40]:
            regions.append(Region(rel, a["line"], a["line"], 8))
    for rel, s, e in extra_regions or []:
        regions.append(Region(rel, s, e, 5e5))
    # merge overlapping regions of a file, keep the best score
    merged: list[Region] = []
    for r in sorted(regions, key=lambda r: (r.file, r.start)):
        if merged and merged[-1].file == r.file and r.start <= merged[-1].end + 1:
            m = merged[-1]
            m.end = max(m.end, r.end)
            m.score = max(m.score, r.score) + 1
        else:
            merged.append(Region(r.file, r.start, r.end, r.score))
    for r in merged:
        lines = (wd.read_text(r.file) or "").splitlines()
        pieces.append((r.score, r.file, _numbered(r.file, lines, r.start, r.end)))
    for rel in res.configs:
        text = wd.read_text(rel)
        if text:
            lines = text.splitlines()
            pieces.append((30, rel, _numbered(rel, lines, 1, min(len(lines), 40))))
    pieces.sort(key=lambda p: -p[0])
    out: list[str] = []
    used = 0
    included: list[str] = []
    for _, f, text in pieces:
        if used + len(text) > budget:
            room = budget - used
            if room > 300:
                text = text[:room].rsplit("\n", 1)[0]
            else:
                continue
        out.append(text)
        used += len(text) + 1
        if f != "cmd" and f not in included:
            included.append(f)
    return "\n".join(out), included


def _number_forms(v: float) -> list[str]:
    forms = {str(int(v))} if float(v).is_integer() else set()
    forms.add(f"{v:,.0f}")
    forms.add(f"{int(v):_}" if float(v).is_integer() else str(v))
    return [f for f in forms if f]


def _prose_params(context: str) -> list[tuple[float, str]]:
    """Parameter counts written in prose: '1.3B-parameter', '350M params', '7 billion parameters'."""
    out = []
    for m in re.finditer(r"(\d+(?:\.\d+)?)\s*(B|M|K|billion|million)\b", context, re.IGNORECASE):
        mult = {"b": 1e9, "billion": 1e9, "m": 1e6, "million": 1e6, "k": 1e3}[m.group(2).lower()]
        window = context[max(0, m.start() - 60) : m.end() + 30].lower()
        if "param" in window:  # the number as written ("1.3B"), locatable in the excerpt
            out.append((float(m.group(1)) * mult, m.group(0)))
    return out


_FIELD_WORDS = {
    "micro_batch_size": r"batch",
    "seq_len": r"seq|block|len|context|ctx",
    "epochs": r"epoch",
    "train_steps": r"step|iter",
}


_FAMILY_HINTS = {
    "gpt": r"(?i)token|vocab|attention|transformer|causal|gpt|lm_head",
    "llama": r"(?i)llama|rmsnorm",
    "mistral": r"(?i)mistral|mixtral",
    "bert": r"(?i)bert|maskedlm",
    "t5": r"(?i)\bt5|seq2seq",
    "vit": r"(?i)vit|patch",
    "resnet": r"(?i)resnet",
    "cnn": r"Conv",
    "unet": r"(?i)unet",
    "yolo": r"(?i)yolo",
    "gan": r"Generator|Discriminator",
    "dlrm": r"(?i)embedding|recommend|click|rating|ctr",
    "rnn": r"LSTM|GRU|RNN",
    "mlp": r"Linear|Dense|(?i:mlp)",
}


def _locate_re(context: str, pattern: str) -> list[str]:
    where: list[str] = []
    current = None
    for line in context.splitlines():
        if line.startswith("### "):
            current = line[4:].rsplit(":", 1)[0]
            continue
        m = re.match(r"^(\d+)\| (.*)$", line)
        if m and current and re.search(pattern, m.group(2)):
            where.append(f"{current}:{m.group(1)}")
    return where[:3]


def _locate(context: str, needles: list[str], word: str | None = None) -> list[str]:
    """`file:line` of lines of the numbered excerpt containing any needle (and, with `word`, an identifier
    matching it that is not a count such as `num_minibatches`)."""
    where: list[str] = []
    current = None
    for line in context.splitlines():
        if line.startswith("### "):
            current = line[4:].rsplit(":", 1)[0]
            continue
        m = re.match(r"^(\d+)\| (.*)$", line)
        if not m or current is None:
            continue
        body = m.group(2)
        if word is not None:
            idents = [t for t in re.findall(r"[A-Za-z_][\w-]*", body) if re.search(word, t, re.IGNORECASE)]
            if not [t for t in idents if not re.match(r"(?i)(num|n)[_-]", t)]:
                continue
        if any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w.])", body, re.IGNORECASE) for n in needles if n):
            loc = f"{current}:{m.group(1)}"
            if loc not in where:
                where.append(loc)
    return where[:3]

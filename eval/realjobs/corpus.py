"""The real-jobs corpus: manifest records, labels, the dev/test split and the checks every shard passes.

The corpus points at real public training jobs (launch setups and logs) by reference only: a repository
snapshot at a commit, or a registry package at a version, plus paths, line ranges and sha256 digests. The
text and code of those jobs never enter this repository; `rebuild.py` materialises them into a local
cache. What is committed here is ours: the references, the labels derived by reading the sources, and a
one-line `how_derived` per item.

    python -m eval.realjobs.corpus            # validate every shard, print counts per split/framework

Shards: `code/*.jsonl` (one `CodeItem` per line) and `logs/*.jsonl` (one `LogItem` per line).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

HERE = Path(__file__).resolve().parent

# Repositories and packages reserved for independent evaluation: nothing from them may enter the corpus.
RESERVED_REPOS = frozenset(
    r.lower()
    for r in (
        "Lightning-AI/litgpt",
        "Lightning-AI/pytorch-lightning",
        "NVIDIA/Megatron-LM",
        "NVIDIA/NeMo",
        "bigscience-workshop/bigscience",
        "deepspeedai/DeepSpeed",
        "microsoft/DeepSpeed",
        "microsoft/DeepSpeedExamples",
        "facebookresearch/dlrm",
        "facebookresearch/fairseq",
        "pytorch/fairseq",
        "huggingface/accelerate",
        "huggingface/pytorch-image-models",
        "rwightman/pytorch-image-models",
        "karpathy/llm.c",
        "karpathy/nanoGPT",
        "lm-sys/FastChat",
        "open-mmlab/mmengine",
        "open-mmlab/mmdetection",
        "huggingface/trl",
        "pytorch/examples",
        "pytorch/torchtitan",
        "stas00/ml-engineering",
        "tatsu-lab/stanford_alpaca",
        "vwxyzjn/cleanrl",
    )
)
RESERVED_PACKAGES = frozenset({"mmdet", "trl", "mmengine", "litgpt", "lightning", "pytorch-lightning", "nemo-toolkit",
                               "megatron-core", "deepspeed", "accelerate", "timm", "fairseq"})

# The fields a scheduler needs from a launch setup; the code targets are scored on these.
CODE_FIELDS = ("params", "global_batch_size", "micro_batch_size", "num_gpus", "train_steps", "epochs")
# Optional further labels a collector may add when the sources settle them.
EXTRA_CODE_FIELDS = ("num_nodes", "gpus_per_node", "grad_accum_steps", "seq_len", "tensor", "pipeline", "context",
                     "precision", "model_name")
FRAMEWORKS = ("pytorch", "hf-trainer", "accelerate", "deepspeed", "megatron", "lightning", "jax", "tensorflow",
              "openmmlab", "detectron2", "fairseq-style", "composer", "hydra", "other")
DOMAINS = ("llm", "nlp", "vision", "multimodal", "diffusion", "speech", "rl", "recsys", "other")
LOG_CATEGORIES = ("none", "oom", "nccl", "nan", "dataloader", "segfault", "node", "preempted", "user_code", "hang",
                  "other")
_SHA = re.compile(r"^[0-9a-f]{64}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


class FileRef(BaseModel):
    """One file of a source, with the digest of its whole content (bytes) at that commit/version."""

    model_config = ConfigDict(extra="forbid")
    path: str
    sha256: str
    role: str = "source"
    """launcher | config | entry | readme | env | log | source"""
    lines: tuple[int, int] | None = None
    """1-based inclusive line range the item uses, when only part of the file matters."""

    @field_validator("sha256")
    @classmethod
    def _sha(cls, v: str) -> str:
        if not _SHA.match(v):
            raise ValueError(f"not a sha256 hex digest: {v!r}")
        return v


class Origin(BaseModel):
    """Where an item's files come from: a repository snapshot or a registry package."""

    model_config = ConfigDict(extra="forbid")
    repo: str | None = None
    """owner/name on GitHub"""
    commit: str | None = None
    package: str | None = None
    """a PyPI distribution name"""
    version: str | None = None
    artifact: str | None = None
    """the file `pip download` brings (wheel or sdist name)"""

    @model_validator(mode="after")
    def _one_kind(self) -> Origin:
        if bool(self.repo) == bool(self.package):
            raise ValueError("an origin names exactly one of repo (with commit) or package (with version)")
        if self.repo:
            if not re.fullmatch(r"[\w.-]+/[\w.-]+", self.repo):
                raise ValueError(f"repo must be owner/name: {self.repo!r}")
            if not self.commit or not _COMMIT.match(self.commit):
                raise ValueError(f"{self.repo}: commit must be a full 40-hex sha")
            if self.repo.lower() in RESERVED_REPOS:
                raise ValueError(f"{self.repo} is reserved for independent evaluation")
        if self.package:
            if not self.version:
                raise ValueError(f"package {self.package}: version is required")
            if self.package.lower().replace("_", "-") in RESERVED_PACKAGES:
                raise ValueError(f"package {self.package} is reserved for independent evaluation")
        return self

    @property
    def key(self) -> str:
        """The unit of the dev/test split: the repository, or the package."""
        return self.repo.lower() if self.repo else f"pypi:{self.package.lower()}"  # type: ignore[union-attr]

    @property
    def ref(self) -> str:
        return f"{self.repo}@{self.commit}" if self.repo else f"{self.package}=={self.version}"


class CommandFrom(BaseModel):
    """A launch command quoted in a file of the source (README, docs): rebuilt from these lines."""

    model_config = ConfigDict(extra="forbid")
    path: str
    lines: tuple[int, int]
    sha256: str


class CodeItem(BaseModel):
    """One launch setup: what a user would submit, and the scheduler-relevant facts read from its sources."""

    model_config = ConfigDict(extra="forbid")
    id: str
    origin: Origin
    cwd: str = "."
    """directory the command runs in, relative to the source root"""
    command: str | None = None
    """a short command we write ourselves (e.g. `bash scripts/train.sh`), or None with `command_from`"""
    command_from: CommandFrom | None = None
    env: dict[str, str] = Field(default_factory=dict)
    """environment the submitter sets (only when a documented invocation sets it)"""
    files: list[FileRef]
    framework: str
    domain: str
    style: list[str] = Field(default_factory=list)
    """launch styles covered: sbatch, srun, torchrun, deepspeed, accelerate, mpirun, python-m, shell-vars,
    shell-defaults, shell-arrays, source, env-file, hydra, omegaconf, yaml, toml, json, ds-auto, py-config,
    base-inheritance, hf-args, lightning, cli-framework, argparse, gin, ml-collections, yacs, jsonnet"""
    labels: dict[str, Any]
    """every CODE_FIELDS key: a number, or null when the sources do not determine it"""
    null_why: dict[str, str] = Field(default_factory=dict)
    extra_labels: dict[str, Any] = Field(default_factory=dict)
    how_derived: str

    @model_validator(mode="after")
    def _check(self) -> CodeItem:
        if (self.command is None) == (self.command_from is None):
            raise ValueError(f"{self.id}: give exactly one of command or command_from")
        if self.framework not in FRAMEWORKS:
            raise ValueError(f"{self.id}: framework {self.framework!r} not in {FRAMEWORKS}")
        if self.domain not in DOMAINS:
            raise ValueError(f"{self.id}: domain {self.domain!r} not in {DOMAINS}")
        missing = [f for f in CODE_FIELDS if f not in self.labels]
        if missing:
            raise ValueError(f"{self.id}: labels lack {missing} (use null when the sources do not determine one)")
        extra = set(self.labels) - set(CODE_FIELDS)
        if extra:
            raise ValueError(f"{self.id}: unknown label keys {sorted(extra)}; put others in extra_labels")
        for f, v in self.labels.items():
            if v is None:
                if f not in self.null_why:
                    raise ValueError(f"{self.id}: labels.{f} is null without a null_why.{f}")
            elif not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"{self.id}: labels.{f} must be a positive number or null, got {v!r}")
        bad = set(self.extra_labels) - set(EXTRA_CODE_FIELDS)
        if bad:
            raise ValueError(f"{self.id}: unknown extra_labels {sorted(bad)}")
        if not self.how_derived.strip():
            raise ValueError(f"{self.id}: how_derived is empty")
        return self


class LogSource(BaseModel):
    """Where a log comes from: a file in a repository/package (with a line range), or an excerpt quoted in a
    public issue thread (saved at collection time under its digest; see README)."""

    model_config = ConfigDict(extra="forbid")
    origin: Origin | None = None
    path: str | None = None
    sha256: str | None = None
    """digest of the whole file"""
    lines: tuple[int, int] | None = None
    issue_url: str | None = None
    excerpt_sha256: str
    """digest of the log text the item is (the line range of the file, or the issue excerpt), UTF-8"""
    find: str | None = None
    """for an issue excerpt: a query for the search tool (corpus `issues`) that brings the thread's quoted
    text back, so a new machine can recover the excerpt (`rebuild recover-excerpt`); saved texts do not
    travel with the repository"""

    @model_validator(mode="after")
    def _kind(self) -> LogSource:
        if self.issue_url:
            if self.origin or self.path:
                raise ValueError("an issue excerpt has no origin/path")
            if not re.match(r"^https://github\.com/[\w.-]+/[\w.-]+/(issues|pull|discussions)/\d+", self.issue_url):
                raise ValueError(f"issue_url must be a github issue/pull/discussion URL: {self.issue_url!r}")
            repo = "/".join(self.issue_url.split("/")[3:5]).lower()
            if repo in RESERVED_REPOS:
                raise ValueError(f"{repo} is reserved for independent evaluation")
            if not (self.find and self.find.strip()):
                raise ValueError(f"{self.issue_url}: an issue excerpt needs `find`, a search query that brings "
                                 "its text back")
        else:
            if not (self.origin and self.path and self.sha256):
                raise ValueError("a file log names origin, path and sha256")
            if self.find:
                raise ValueError("`find` is for issue excerpts; a file log rebuilds from its origin")
        for d in (self.sha256, self.excerpt_sha256):
            if d is not None and not _SHA.match(d):
                raise ValueError(f"not a sha256 hex digest: {d!r}")
        return self

    @property
    def key(self) -> str:
        if self.issue_url:
            return "/".join(self.issue_url.split("/")[3:5]).lower()
        return self.origin.key  # type: ignore[union-attr]


LOG_FIELDS = ("category", "failed", "current_step", "total_steps", "iteration_time_s")


class LogItem(BaseModel):
    """One real training log (or excerpt) and what a monitor should read from it."""

    model_config = ConfigDict(extra="forbid")
    id: str
    source: LogSource
    framework: str
    """the print format's family: hf-trainer, lightning, megatron, deepspeed, openmmlab, detectron2, fairseq,
    tqdm, keras, jax, custom, ..."""
    labels: dict[str, Any]
    """category (LOG_CATEGORIES), failed (bool), current_step, total_steps (int or null), iteration_time_s
    (seconds per optimizer step over the log, or null), finished (bool, optional), epoch / total_epochs
    (optional)"""
    null_why: dict[str, str] = Field(default_factory=dict)
    how_derived: str

    @model_validator(mode="after")
    def _check(self) -> LogItem:
        lab = self.labels
        missing = [f for f in LOG_FIELDS if f not in lab]
        if missing:
            raise ValueError(f"{self.id}: labels lack {missing}")
        if lab["category"] not in LOG_CATEGORIES:
            raise ValueError(f"{self.id}: category {lab['category']!r} not in {LOG_CATEGORIES}")
        if not isinstance(lab["failed"], bool):
            raise ValueError(f"{self.id}: failed must be true/false")  # noqa: TRY004 (pydantic reports ValueError)
        if (lab["category"] == "none") == lab["failed"]:
            raise ValueError(f"{self.id}: failed must be true exactly when the category is not none")
        for f in ("current_step", "total_steps", "iteration_time_s"):
            v = lab[f]
            if v is None:
                if f not in self.null_why:
                    raise ValueError(f"{self.id}: labels.{f} is null without a null_why.{f}")
            elif not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                raise ValueError(f"{self.id}: labels.{f} must be a non-negative number or null")
        if not self.how_derived.strip():
            raise ValueError(f"{self.id}: how_derived is empty")
        return self


# One repository under two names (its organisation renamed, or it moved): GitHub redirects the old name, and
# the split must follow the repository, not the name. Each name maps to the one the corpus used first.
SAME_REPOSITORY = {
    "zai-org/chatglm-6b": "thudm/chatglm-6b",
    "zai-org/chatglm2-6b": "thudm/chatglm2-6b",
    "openaccess-ai-collective/axolotl": "axolotl-ai-cloud/axolotl",
    "google/maxtext": "ai-hypercomputer/maxtext",
    "open-mmlab/mmediting": "open-mmlab/mmagic",
    "open-mmlab/mmclassification": "open-mmlab/mmpretrain",
    "microsoft/deepspeed": "deepspeedai/deepspeed",
}


def canonical_key(key: str) -> str:
    key = key.lower()
    return SAME_REPOSITORY.get(key, key)


def split_of(key: str) -> Literal["dev", "test"]:
    """The dev/test split, fixed once by repository (or package) before any analyzer work looked at the
    corpus: the parity of the sha256 of the lower-cased key (of the repository's first name in the corpus
    when it has two, `SAME_REPOSITORY`)."""
    return "test" if int(hashlib.sha256(canonical_key(key).encode()).hexdigest(), 16) % 2 else "dev"


def warn_unbuilt(ids: list[str], built: Any, what: str, hint: str = "run rebuild.py") -> None:
    """Say on stderr which of `ids` the cache does not hold, so a score on fewer items is never silent."""
    missing = [i for i in ids if i not in built]
    if missing:
        more = " ..." if len(missing) > 5 else ""
        print(f"{len(missing)} of {len(ids)} {what} not built ({hint}), scored without them: "
              f"{', '.join(missing[:5])}{more}", file=sys.stderr)


def _read_shards(kind: str, model: type[BaseModel]) -> list[Any]:
    items: list[Any] = []
    for path in sorted((HERE / kind).glob("*.jsonl")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append(model.model_validate_json(line))
            except ValueError as e:
                raise ValueError(f"{path.relative_to(HERE)}:{n}: {e}") from e
    ids = Counter(i.id for i in items)
    dup = [k for k, c in ids.items() if c > 1]
    if dup:
        raise ValueError(f"{kind}: duplicate ids {dup[:5]}")
    return items


def load_code_items(split: str | None = None) -> list[CodeItem]:
    items = _read_shards("code", CodeItem)
    return [i for i in items if split is None or split_of(i.origin.key) == split]


def load_log_items(split: str | None = None) -> list[LogItem]:
    items = _read_shards("logs", LogItem)
    return [i for i in items if split is None or split_of(i.source.key) == split]


def summary() -> dict[str, Any]:
    code, logs = load_code_items(), load_log_items()
    out: dict[str, Any] = {
        "code_items": len(code),
        "code_repos": len({i.origin.key for i in code}),
        "log_items": len(logs),
        "log_sources": len({i.source.key for i in logs}),
    }
    for name, items, key in (("code", code, lambda i: i.origin.key), ("logs", logs, lambda i: i.source.key)):
        out[f"{name}_by_split"] = dict(Counter(split_of(key(i)) for i in items))
        out[f"{name}_by_framework"] = dict(Counter(i.framework for i in items).most_common())
    out["code_styles"] = dict(Counter(s for i in code for s in i.style).most_common())
    out["log_categories"] = dict(Counter(i.labels["category"] for i in logs).most_common())
    return out


if __name__ == "__main__":
    print(json.dumps(summary(), indent=1))

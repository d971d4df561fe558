"""The log monitor: progress, remaining time and failures from a training job's runtime log.

    mon = Monitor(store=RuleStore())          # + assistant=LLMAssistant(), memory=FailureMemory() for the LLM path
    mon.feed(text) / mon.feed_bytes(data)     # chunks in any size; or FileFollower(path).follow()
    report = mon.report()                     # any time; mon.finish() at end of input
    annotation_fields(report)                 # -> predicted_remaining_s, failure (FailureSignal)

Pipeline (one module each): `ingest` (decode with replacement, tqdm carriage returns, ANSI, rank prefixes,
timestamps, file following across rotation) -> `rules` (built-in regex rules per framework, matcher with a
most-recently-used cache and needle prefilter) -> `progress` (steps, epochs, iteration time without eval and
checkpoint pauses, p10/p50/p90 remaining time) and `failures` (candidates, onset blocks, dismissal when
training continues, NaN/spike, verdict) -> `monitor` (per-line loop, hang detection; `resolve`: LLM deferral
and batching of unmatched lines) -> `report` (LogReport, Annotation fields). Learning: `learn` (rule synthesis from a line,
validation), `safety` (static ReDoS check + timed check in a subprocess), `store` (SQLite rules per log
family), `assist` (LLM prompts `log_rules`/`log_diagnose`, chromadb failure memory). `evaluate` scores it on
`eval/datasets/logs`; `cli` registers `schedmate analyze log` and `schedmate monitor`.
"""

from schedmate.logmon.ingest import FileFollower
from schedmate.logmon.monitor import Monitor, analyze_file, analyze_text
from schedmate.logmon.report import FailureInfo, LogReport, ProgressInfo, annotation_fields, to_annotation
from schedmate.logmon.store import RuleStore

__all__ = [
    "FailureInfo",
    "FileFollower",
    "LogReport",
    "Monitor",
    "ProgressInfo",
    "RuleStore",
    "analyze_file",
    "analyze_text",
    "annotation_fields",
    "to_annotation",
]

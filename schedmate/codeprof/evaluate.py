"""Score the code analyzer on a labelled dataset: per job, per field, per mode (static | llm | combined).

Dataset layout: `DIR/labels.jsonl` (one object per job: `job`, the contract fields, `parallelism{...}`) and
`DIR/jobs/<job>/` (files, `command.txt`, optional `env.json`).

Scoring (one row per job and field): `params` is right within 10 % relative error, `network_sensitivity`
within 0.1, `model_name` when the canonical names agree (known-model table, else lower-cased last path
part), every other field on equality; a null label means "not determined by the sources" and is right only
when the analyzer also says null.

Modes: `static` = static pass + derivation; `combined` = the full analyzer (static, LLM for open fields,
reconcile, derive); `llm` = the LLM alone on the fields it can be asked (`llmpass.ASKABLE`), given the same
context pack but no static facts and no grounding checks; its rows cover only those fields.

`write_report(df, out_dir)` writes `rows.csv`, `summary.csv` and `report.md` with the per-field accuracy of
every (mode, prompt version, model) side by side, plus seconds and tokens per job.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pandas as pd

from schedmate.codeprof.facts import FIELDS
from schedmate.codeprof.known import lookup_model, normalise_name

MODES = ("static", "llm", "combined")


def load_labels(dataset_dir: str | Path) -> list[dict[str, Any]]:
    path = Path(dataset_dir) / "labels.jsonl"
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{n}: not valid JSON: {e.msg}") from e
        if "job" not in d:
            raise ValueError(f"{path}:{n}: no `job` key")
        out.append(d)
    return out


def flat_label(d: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in d.items() if k not in {"job", "notes", "parallelism"}}
    for k, v in (d.get("parallelism") or {}).items():
        out[f"parallelism.{k}"] = v
    return {k: out.get(k) for k in FIELDS}


def canonical_name(v: Any) -> str | None:
    if v is None:
        return None
    hit = lookup_model(str(v))
    return hit[0] if hit else normalise_name(str(v))


def is_correct(field: str, label: Any, pred: Any) -> bool:
    if label is None or pred is None:
        return label is None and pred is None
    if field == "params":
        return abs(float(pred) - float(label)) <= 0.10 * abs(float(label))
    if field == "network_sensitivity":
        return abs(float(pred) - float(label)) <= 0.1
    if field == "model_name":
        return canonical_name(label) == canonical_name(pred)
    if isinstance(label, bool) or isinstance(pred, bool):
        return label is pred
    if isinstance(label, (int, float)) and isinstance(pred, (int, float)):
        return float(label) == float(pred)
    return label == pred


def _client(model: str | None) -> Any:
    from schedmate.llm import LLMClient, LLMConfig
    from schedmate.llm.serving import ENGINES, running_server

    if model in ENGINES:  # an engine name picks that local server
        state = running_server(model)
        if state is None:
            from schedmate.llm import LLMUnavailableError

            raise LLMUnavailableError(f"no running {model} server")
        return LLMClient(LLMConfig(base_url=state.base_url, model=state.model_alias))
    return LLMClient(LLMConfig.from_env(**({"model": model} if model else {})))


def evaluate_code(
    dataset_dir: str | Path,
    mode: str = "static",
    prompt_version: str | None = None,
    model: str | None = None,
    jobs: list[str] | None = None,
    client: Any = None,
) -> pd.DataFrame:
    """One row per (job, field): label, predicted, source, correct, plus per-job seconds, calls and tokens."""
    from schedmate.codeprof.analyzer import analyze_code, static_profile
    from schedmate.codeprof.llmpass import ASKABLE, run_llm_pass

    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
    root = Path(dataset_dir)
    labels = load_labels(root)
    if jobs:
        labels = [d for d in labels if d["job"] in set(jobs)]
    if mode != "static" and client is None:
        client = _client(model)
    model_name = getattr(getattr(client, "config", None), "model", None) if client is not None else None
    if mode != "static" and prompt_version is None:
        from schedmate.codeprof.llmpass import PROMPT_ID
        from schedmate.llm import load_prompt

        prompt_version = load_prompt(PROMPT_ID).version
    elif mode == "static":
        prompt_version = None
    rows: list[dict[str, Any]] = []
    for d in labels:
        job = d["job"]
        wd_path = root / "jobs" / job
        t0 = time.perf_counter()
        before = _usage(client)
        error = None
        pred: dict[str, Any] = {}
        src: dict[str, str] = {}
        calls = 0
        try:
            if mode == "llm":
                res, wd = static_profile(wd_path)
                out = run_llm_pass(
                    res, wd, client=client, prompt_version=prompt_version, fields=list(ASKABLE), raw=True
                )
                pred = {k: f.value for k, f in out.answers.items()}
                src = {k: "llm" for k in pred}
                calls = out.calls
                fields = list(ASKABLE)
            else:
                prof = analyze_code(
                    wd_path, use_llm=mode == "combined", client=client, prompt_version=prompt_version
                )
                pred = {k: f.value for k, f in prof.facts.items()}
                src = {k: f.source for k, f in prof.facts.items()}
                calls = prof.llm_calls
                fields = list(FIELDS)
        except Exception as e:  # a crash on one job is a wrong answer on every field, not a lost run
            error = f"{type(e).__name__}: {e}"
            fields = list(ASKABLE) if mode == "llm" else list(FIELDS)
        seconds = time.perf_counter() - t0
        after = _usage(client)
        lab = flat_label(d)
        for f in fields:
            p = pred.get(f)
            rows.append(
                {
                    "job": job,
                    "field": f,
                    "label": _cell(lab.get(f)),
                    "predicted": _cell(p),
                    "source": src.get(f),
                    "correct": (error is None) and is_correct(f, lab.get(f), p),
                    "labelled": lab.get(f) is not None,
                    "mode": mode,
                    "prompt_version": prompt_version or "-",
                    "model": model_name or "-",
                    "job_seconds": round(seconds, 3),
                    "job_llm_calls": calls,
                    "job_prompt_tokens": after[0] - before[0],
                    "job_completion_tokens": after[1] - before[1],
                    "error": error,
                }
            )
    return pd.DataFrame(rows)


def _cell(v: Any) -> Any:
    return json.dumps(v) if isinstance(v, (dict, list)) else v


def _usage(client: Any) -> tuple[int, int]:
    if client is None:
        return 0, 0
    try:
        s = client.usage.summary().get("code", {})
        return int(s.get("prompt_tokens", 0)), int(s.get("completion_tokens", 0))
    except Exception:
        return 0, 0


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Per field and run (mode, prompt version, model): rows, right, accuracy."""
    keys = ["mode", "prompt_version", "model"]
    g = df.groupby([*keys, "field"], sort=False)["correct"]
    s = g.agg(rows="count", right="sum").reset_index()
    s["accuracy"] = (s["right"] / s["rows"]).round(3)
    tot = df.groupby(keys, sort=False)["correct"].agg(rows="count", right="sum").reset_index()
    tot["field"] = "ALL"
    tot["accuracy"] = (tot["right"] / tot["rows"]).round(3)
    nn = df[df["labelled"]].groupby(keys, sort=False)["correct"].agg(rows="count", right="sum").reset_index()
    nn["field"] = "ALL (non-null labels)"
    nn["accuracy"] = (nn["right"] / nn["rows"]).round(3)
    return pd.concat([s, tot, nn], ignore_index=True)


def per_job_cost(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["mode", "prompt_version", "model"]
    jobs = df.drop_duplicates([*keys, "job"])
    return (
        jobs.groupby(keys, sort=False)
        .agg(
            jobs=("job", "count"),
            seconds_mean=("job_seconds", "mean"),
            seconds_max=("job_seconds", "max"),
            llm_calls=("job_llm_calls", "sum"),
            prompt_tokens_mean=("job_prompt_tokens", "mean"),
            completion_tokens_mean=("job_completion_tokens", "mean"),
        )
        .round(3)
        .reset_index()
    )


def write_report(df: pd.DataFrame, out_dir: str | Path) -> Path:
    """rows.csv, summary.csv, cost.csv and report.md (runs side by side); returns the markdown path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "rows.csv", index=False)
    s = summarize(df)
    s.to_csv(out / "summary.csv", index=False)
    cost = per_job_cost(df)
    cost.to_csv(out / "cost.csv", index=False)
    s["run"] = s["mode"] + " / v" + s["prompt_version"].astype(str) + " / " + s["model"].astype(str)
    wide = s.pivot_table(index="field", columns="run", values="accuracy", sort=False)
    order = [f for f in [*FIELDS, "ALL", "ALL (non-null labels)"] if f in wide.index]
    wide = wide.reindex(order)
    lines = [
        "# Code analyzer evaluation",
        "",
        (f"{df['job'].nunique()} jobs; accuracy per field (params within 10 %, network_sensitivity within 0.1,"
        " null labels must be answered null)."),
        "",
        "| field | " + " | ".join(wide.columns) + " |",
        "|---|" + "---|" * len(wide.columns),
    ]
    for f, row in wide.iterrows():
        lines.append(f"| {f} | " + " | ".join("" if pd.isna(v) else f"{v:.3f}" for v in row) + " |")
    lines += [
        "",
        "## Cost per job",
        "",
        "| run | jobs | s/job (mean) | s/job (max) | LLM calls | prompt tok/job | completion tok/job |",
        "|---|---|---|---|---|---|---|",
    ]
    for _, r in cost.iterrows():
        lines.append(
            f"| {r['mode']} / v{r['prompt_version']} / {r['model']} | {r['jobs']} | {r['seconds_mean']} | "
            f"{r['seconds_max']} | {r['llm_calls']} | {r['prompt_tokens_mean']} | "
            f"{r['completion_tokens_mean']} |"
        )
    wrong = df[~df["correct"]]
    if len(wrong):
        lines += [
            "",
            "## Wrong answers",
            "",
            "| run | job | field | label | predicted | source |",
            "|---|---|---|---|---|---|",
        ]
        for _, r in wrong.iterrows():
            lines.append(
                f"| {r['mode']}/v{r['prompt_version']} | {r['job']} | {r['field']} | {r['label']} | "
                f"{r['predicted']} | {r['source']} |"
            )
    md = out / "report.md"
    md.write_text("\n".join(lines) + "\n")
    return md

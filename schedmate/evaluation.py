"""`schedmate eval prompts`: score a component's prompts on its labelled dataset.

Components register an evaluator here (name -> function); the command dispatches on `--component`.
Each evaluator writes a report into `--out` and returns a one-line summary dict that is printed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from schedmate.registry import Registry

REPO = Path(__file__).resolve().parent.parent

Evaluator = Callable[..., dict[str, Any]]
EVALUATORS: Registry[dict[str, Any]] = Registry("prompt evaluator")


@EVALUATORS.register("code")
def _evaluate_code(dataset: Path | None, out: Path, modes: list[str], prompt_version: str | None,
                   model: str | None, use_llm: bool) -> dict[str, Any]:
    import pandas as pd

    from schedmate.codeprof.evaluate import evaluate_code, write_report

    dataset = dataset or REPO / "eval" / "datasets" / "code"
    modes = modes or (["static", "combined"] if use_llm else ["static"])
    frames = [evaluate_code(dataset, mode, prompt_version=prompt_version, model=model) for mode in modes]
    df = pd.concat(frames, ignore_index=True)
    write_report(df, out)
    return {mode: round(float(df[df["mode"] == mode]["correct"].mean()), 4) for mode in modes}


@EVALUATORS.register("logs")
def _evaluate_logs(dataset: Path | None, out: Path, modes: list[str], prompt_version: str | None,
                   model: str | None, use_llm: bool) -> dict[str, Any]:
    from schedmate.logmon.evaluate import evaluate_logs, summarize

    if prompt_version or model:
        raise ValueError("--prompt-version/--model are not supported for --component logs yet; "
                         "set SCHEDMATE_LLM_MODEL to compare models")
    dataset = dataset or REPO / "eval" / "datasets" / "logs"
    df = evaluate_logs(dataset, use_llm=use_llm)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "rows.csv", index=False)
    summary = summarize(df)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _real_corpus() -> Any:
    """The real-jobs corpus tools live in the repository's `eval/realjobs` (a checkout, like the datasets)."""
    import importlib
    import sys

    if not (REPO / "eval" / "realjobs" / "run.py").is_file():
        raise FileNotFoundError(f"{REPO / 'eval' / 'realjobs'} not found: --corpus real needs a repository checkout")
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    return importlib.import_module("eval.realjobs.run")


def evaluate_real(component: str, out: Path, modes: list[str], split: str, use_llm: bool) -> dict[str, Any]:
    """Score on the real-jobs corpus (built by `python -m eval.realjobs.rebuild`), per field and framework."""
    run = _real_corpus()
    if component == "code":
        chosen = [{"combined": "llm"}.get(m, m) for m in modes] or (["static", "llm"] if use_llm else ["static"])
        unknown = sorted(set(chosen) - set(run.MODES))
        if unknown:
            raise ValueError(f"--mode {', '.join(unknown)}: the real corpus knows {', '.join(run.MODES)}")
        items = run.load_code_items(None if split == "all" else split)
        df = run.evaluate(items, run.load_index(run.default_out()), chosen, progress=True)
        if df.empty:
            raise ValueError(f"no built code items in the {split} split: run python -m eval.realjobs.rebuild")
        out.mkdir(parents=True, exist_ok=True)
        df.to_csv(out / "rows.csv", index=False)
        tables = run.summary(df)
        for name, table in tables.items():
            (out / f"{name}.txt").write_text(table.round(3).to_string() + "\n")
        return {"split": split, "jobs": int(df["id"].nunique()),
                **{m: round(float(df[df["mode"] == m]["right"].mean()), 4) for m in chosen}}
    import importlib

    logs = importlib.import_module("eval.realjobs.run_logs")
    df = logs.evaluate_logs(split, use_llm=use_llm)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "rows.csv", index=False)
    return {"split": split, **logs.summarize(df)}


def register(app: typer.Typer, analyze_app: typer.Typer, eval_app: typer.Typer) -> None:
    @eval_app.command("prompts")
    def prompts(
        component: Annotated[str, typer.Option(help="Which component: code | logs.")],
        dataset: Annotated[Path | None, typer.Option(help="Dataset directory (default eval/datasets/<component>).")] = None,
        out: Annotated[Path, typer.Option(help="Report directory.")] = Path("out/eval"),
        mode: Annotated[list[str] | None, typer.Option(
            help="code only: static | llm | combined; repeat to compare side by side.")] = None,
        prompt_version: Annotated[str | None, typer.Option(help="Prompt version to score (default: current).")] = None,
        model: Annotated[str | None, typer.Option(help="Model name on the server (default: SCHEDMATE_LLM_MODEL).")] = None,
        no_llm: Annotated[bool, typer.Option("--no-llm", help="Rules/static pass only.")] = False,
        corpus: Annotated[str, typer.Option(
            help="datasets: our labelled datasets (regression); real: the real-jobs corpus (eval/realjobs).")] = "datasets",
        split: Annotated[str, typer.Option(help="real corpus only: dev | test | all.")] = "test",
    ) -> None:
        """Score a component on its labelled dataset; writes a report and prints a JSON summary.

        Examples: `schedmate eval prompts --component code --mode static --mode combined`;
        on real public jobs: `schedmate eval prompts --component code --corpus real --split test`.
        """
        try:
            if component not in EVALUATORS:
                raise ValueError(f"Unknown component: {component!r} (known: {', '.join(sorted(EVALUATORS))})")
            if corpus not in {"datasets", "real"}:
                raise ValueError(f"--corpus {corpus!r}: one of datasets, real")
            if corpus == "real":
                if split not in {"dev", "test", "all"}:
                    raise ValueError(f"--split {split!r}: one of dev, test, all")
                summary = evaluate_real(component, out / f"{component}-real", list(mode or []), split, not no_llm)
                typer.echo(json.dumps(summary))
                return
            fn = EVALUATORS[component]
            summary = fn(dataset, out / component, list(mode or []), prompt_version, model, not no_llm)
        except (ValueError, FileNotFoundError) as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        typer.echo(json.dumps(summary))

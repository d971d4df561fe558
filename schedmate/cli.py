"""The `schedmate` command. Each area registers its own commands; this file only wires them.

Contracts kept stable for outside tools: `schedmate replay`, `schedmate analyze code|log`,
`schedmate monitor`, `schedmate llm pull|serve|stop|status`, `schedmate eval prompts`, `schedmate serve`,
`schedmate token create`, `schedmate adapt slurm|kubernetes|slurm-plugin`, `schedmate watch slurm`.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(rich_markup_mode="markdown", 
    name="schedmate",
    help="Semantic-aware GPU cluster scheduling: annotate jobs from code, logs and history; replay traces.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
analyze_app = typer.Typer(rich_markup_mode="markdown", help="Analyze a job's code or log without running it.", no_args_is_help=True)
eval_app = typer.Typer(rich_markup_mode="markdown", help="Evaluate prompts and components on labelled datasets.", no_args_is_help=True)
app.add_typer(analyze_app, name="analyze")
app.add_typer(eval_app, name="eval")

# module -> function(app, analyze_app, eval_app) that adds its commands
_REGISTRARS = (
    "schedmate.replay",
    "schedmate.llm.cli",
    "schedmate.codeprof.cli",
    "schedmate.logmon.cli",
    "schedmate.evaluation",
    "schedmate.demo",
    "schedmate.service.cli",
    "schedmate.sweep.cli",
    "adapters.cli",
    "adapters.slurm_live.cli",
)
for _module in _REGISTRARS:
    try:
        importlib.import_module(_module).register(app, analyze_app, eval_app)
    except ModuleNotFoundError as _e:  # an area not installed in this build
        if _e.name is None or not _module.startswith(_e.name):
            raise


def main() -> None:
    app()


if __name__ == "__main__":
    main()

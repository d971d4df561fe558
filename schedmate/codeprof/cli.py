"""`schedmate analyze code`: profile a training job from its command and files, without running it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

HELP = """Profile a training job from its launch command and working directory, WITHOUT running anything.

Prints one JSON object (--json) with: framework, model_family, model_name, params, parallelism{data
(ddp|fsdp|zero|none), zero_stage, tensor, pipeline, expert, context}, num_nodes, gpus_per_node, num_gpus,
micro_batch_size, global_batch_size, grad_accum_steps, seq_len, epochs, train_steps, precision
(fp32|fp16|bf16|fp8), comm_heavy, network_sensitivity, evidence, llm_calls; plus `derived` (flops, comm
bytes, spread slowdown, files read, cache status) and `warnings`. A value the sources do not fix is null.

\b
Sources, in order of trust: first the static pass (a bash interpreter that follows the launch and
wrapper scripts without running them, the entry script's AST, the config files it uses with what they
inherit; exact, evidence file:line or `cmd`); then derivation (documented rules: known model sizes,
12 x L x d^2 + V x d, micro x accumulation x DP, the workload catalogue's spread slowdowns); then the LLM,
asked only for fields still open, whose answers must be grounded in the excerpt and never override a
static fact; with `--agent`, an LLM agent that lists, greps and reads the job's files and must cite the
file:line that states each value. evidence.FIELD.source says which one decided; a field left null says
why in warnings.

\b
Candidates (last step of the static pass, on unless --no-candidates): a field still null after derivation
and the LLM is filled from a named number of the command and the files the pass read (config keys, code
defaults, `--flag value`, shell variables) when its name fits the field and every candidate of the
highest precedence (command line > config files > code > defaults) agrees; never over a fact, never the GPU
count, never from a file the job does not read. Such a fill names the candidate in `warnings` ("read from a
candidate named X"): it is a name match, weaker than a derived fact.

\b
Without --command the first line of DIR/command.txt is used; DIR/env.json adds environment variables.
Job files are read with size caps (256 KiB per file, 4 MiB in total); binaries and symlinks leaving DIR
are skipped. Results are cached in $SCHEDMATE_HOME/cache/codeprof.sqlite (a resubmission with unchanged
files is answered from the cache; edited files are re-read and only LLM fields that depend on them are
asked again).

\b
LLM server down or failing: the static profile is printed, a warning goes to stderr and into
`warnings`, and the exit code is 0. Bad input (no command, unreadable wrapper): a message on stderr,
exit code 2.
"""


def register(app: typer.Typer, analyze_app: typer.Typer, eval_app: typer.Typer) -> None:
    @analyze_app.command("code", help=HELP)
    def analyze_code_cmd(
        workdir: Annotated[Path, typer.Option("--workdir", help="The job's working directory.")],
        command: Annotated[str | None, typer.Option("--command", help="The launch command line.")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
        no_llm: Annotated[bool, typer.Option("--no-llm", help="Static pass and derivation only.")] = False,
        env: Annotated[list[str] | None, typer.Option("--env", help="KEY=VALUE, repeatable.")] = None,
        launcher_config: Annotated[
            str | None,
            typer.Option(
                "--launcher-config",
                help="Accelerate YAML or DeepSpeed JSON applied to the launch (workdir-relative).",
            ),
        ] = None,
        samples: Annotated[
            int,
            typer.Option("--samples", min=1, max=9, help="Self-consistency: k LLM samples, majority vote."),
        ] = 1,
        seed: Annotated[int | None, typer.Option("--seed", help="Seed of the LLM samples.")] = None,
        tool_calls: Annotated[
            int,
            typer.Option(
                "--tool-calls", min=0, max=8, help="Reading-loop budget (list_files/read_file calls)."
            ),
        ] = 0,
        prompt_version: Annotated[str | None, typer.Option("--prompt-version")] = None,
        no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not use the version cache.")] = False,
        no_candidates: Annotated[bool, typer.Option(
            "--no-candidates", help="Leave a field null rather than fill it from a named number of the sources "
            "(see above).")] = False,
        agent: Annotated[bool, typer.Option(
            "--agent", help="After the static pass, let the LLM agent look for the open scheduler fields (list, "
            "grep, read; cited answers only). Needs the agent extra.")] = False,
    ) -> None:
        from schedmate.codeprof.analyzer import AnalyzeError, analyze_code
        from schedmate.codeprof.cache import VersionCache
        from schedmate.codeprof.configs import ConfigError
        from schedmate.codeprof.launcher import LaunchError

        env_d: dict[str, str] = {}
        for kv in env or []:
            if "=" not in kv:
                typer.echo(f"error: --env {kv!r}: expected KEY=VALUE", err=True)
                raise typer.Exit(2)
            k, v = kv.split("=", 1)
            env_d[k] = v
        try:
            if agent:
                try:
                    from schedmate.codeprof.agent import analyze_with_agent
                except ModuleNotFoundError as e:
                    typer.echo(f"error: --agent needs the agent extra (pip install -e '.[agent]'): {e}", err=True)
                    raise typer.Exit(2) from None
                prof = analyze_with_agent(workdir, command=command, env=env_d)
                out = prof.to_contract()
                for w in prof.warnings:
                    if w.startswith("agent"):
                        typer.echo(f"warning: {w}", err=True)
                if as_json:
                    sys.stdout.write(json.dumps(out, default=str) + "\n")
                else:
                    _table(out)
                return
            prof = analyze_code(
                workdir,
                command=command,
                env=env_d,
                launcher_config=launcher_config,
                use_llm=not no_llm,
                cache=None if no_cache else VersionCache(),
                samples=samples,
                seed=seed,
                prompt_version=prompt_version,
                tool_budget=tool_calls,
                candidates=not no_candidates,
            )
        except (AnalyzeError, LaunchError, ConfigError, NotADirectoryError) as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        for w in prof.warnings:
            if "LLM" in w or "reading loop" in w:
                typer.echo(f"warning: {w}", err=True)
        out = prof.to_contract()
        if as_json:
            sys.stdout.write(json.dumps(out, default=str) + "\n")
            return
        _table(out)


def _table(out: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="job profile", show_lines=False)
    t.add_column("field")
    t.add_column("value")
    t.add_column("source")
    t.add_column("evidence", overflow="fold")
    ev = out.get("evidence", {})
    rows = [
        (k, out[k]) for k in out if k not in {"parallelism", "evidence", "derived", "warnings", "llm_calls"}
    ]
    rows += [(f"parallelism.{k}", v) for k, v in out["parallelism"].items()]
    for k, v in rows:
        e = ev.get(k, {})
        t.add_row(k, "-" if v is None else str(v), e.get("source", ""), ", ".join(e.get("where", [])[:3]))
    con = Console()
    con.print(t)
    d = out.get("derived", {})
    con.print(
        f"llm_calls={out['llm_calls']}  spread_slowdown={d.get('spread_slowdown')}  "
        f"flops/iter={d.get('flops_per_iter')}  comm bytes/iter/GPU={d.get('comm_bytes_per_iter_per_gpu')}  "
        f"cache={d.get('cache')}"
    )
    for w in out.get("warnings", []):
        con.print(f"[yellow]warning:[/] {w}")

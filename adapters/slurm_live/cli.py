"""`schedmate adapt slurm-plugin` (install the submission plugin) and `schedmate watch slurm` (the watcher)."""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any, ClassVar

import typer
from rich.console import Console

from adapters.base import AdapterError
from adapters.slurm_live.rules import WatchConfig
from adapters.slurm_live.submit import SubmitPolicy

WATCH_HELP = """Follow running Slurm jobs' logs into the annotation service and act on its answers.

Every --interval seconds: squeue --json; for each job the submission plugin registered (AdminComment
schedmate:id=..., see `schedmate adapt slurm-plugin`), the new whole lines of its StdOut file go to the
service (POST /v1/jobs/{id}/log), and from the answer: a job that keeps progressing but would outrun its
time limit gets a longer one (its remaining-time estimate x --margin, never beyond what the user asked
for); a job with no new step for the hang window (--hang-after, or --hang-factor iteration times) or a
confident failure still standing at the next look is requeued (recoverable, requeueable, fewer than
--max-requeues restarts) or cancelled, with the reason in its Comment. Ended jobs are reported to the
service (POST /v1/jobs/{id}/finish), so the next predictions learn from them.

Runs as root (or SlurmUser) on a host that sees the jobs' output files; a file is read only when it is a
regular file owned by the job's user. Offsets survive restarts (--state-file). Without --apply the
Slurm commands are printed, not run (the logs still go to the service). Events are printed one per line,
as JSON with --json. Exit codes: 0 stopped (Ctrl-C, SIGTERM, or after one look with --once), 2 bad
arguments or state file.
"""

PLUGIN_HELP = """Install the job_submit.lua plugin into a Slurm configuration directory.

Writes job_submit.lua and schedmate_submit.conf next to slurm.conf. Then set JobSubmitPlugins=lua in
slurm.conf and restart slurmctld (later edits of the conf file need no restart). At each submission the
plugin asks the service (POST /v1/slurm/submit) and sets the job's Comment, TimeMin (--time-policy
time-min, the default: backfill may start the job early under it) or TimeLimit (limit), Nice and
Switches, never a time above the user's request, and AdminComment=schedmate:id=... for `schedmate watch
slurm`, which extends a predicted limit while the job progresses. It fails open: when the service is down,
slow (--timeout) or answers anything else, the job is submitted unchanged and slurmctld's log says why.
The token file must be readable by SlurmUser and hold a token with the submit scope.
"""


def _reflow(text: str) -> str:
    return "\n\n".join(" ".join(p.split()) for p in text.strip().split("\n\n"))


class Reporter:
    """One line per event: `HH:MM:SS event job=N key=value ...` (rich colours on a terminal) or JSON."""

    COLOURS: ClassVar[dict[str, str]] = {"extend": "green", "fail": "red", "finished": "cyan", "following": "blue"}

    def __init__(self, as_json: bool, console: Console | None = None) -> None:
        self.as_json = as_json
        self.console = console or Console(stderr=False, highlight=False, soft_wrap=True)

    def __call__(self, event: str, job: str = "-", **fields: Any) -> None:
        fields = {k: v for k, v in fields.items() if v not in (None, [], "")}
        if self.as_json:
            print(json.dumps({"ts": round(time.time(), 3), "event": event, "job": job, **fields}), flush=True)
            return
        parts = " ".join(f"{k}={json.dumps(v) if not isinstance(v, (int, float)) else v}" for k, v in fields.items())
        colour = self.COLOURS.get(event, "yellow" if "error" in event or event.startswith("not") else "white")
        self.console.print(f"{time.strftime('%H:%M:%S')} [{colour}]{event}[/] job={job} {parts}", markup=True)


def register_plugin_command(adapt_app: typer.Typer) -> None:
    @adapt_app.command("slurm-plugin", help=_reflow(PLUGIN_HELP))
    def slurm_plugin(
        conf_dir: Annotated[Path, typer.Option("--conf-dir", help="Slurm's configuration directory (of slurm.conf).")],
        service: Annotated[str, typer.Option("--service", help="The annotation service, http://host:port.")],
        token_file: Annotated[Path, typer.Option("--token-file", help="File holding a submit-scope token.")],
        timeout: Annotated[float, typer.Option("--timeout", help="Seconds slurmctld waits for the service.")] = 2.0,
        time_policy: Annotated[str, typer.Option("--time-policy", help="time-min, limit or none.")] = "time-min",
        curl: Annotated[str | None, typer.Option("--curl", help="Absolute path of curl (default: from PATH).")] = None,
        force: Annotated[bool, typer.Option("--force", help="Replace a job_submit.lua that is not schedmate's.")] = False,
    ) -> None:
        from adapters.slurm_live.install import install

        try:
            policy = SubmitPolicy(time_policy=time_policy)  # type: ignore[arg-type]
            written = install(conf_dir, service, token_file, timeout, curl, policy, force)
        except (AdapterError, ValueError, OSError) as e:
            print(f"error: {str(e).splitlines()[0] if not isinstance(e, AdapterError) else e}", file=sys.stderr)
            raise typer.Exit(2) from None
        for p in written:
            print(f"wrote {p}")
        print("then: JobSubmitPlugins=lua in slurm.conf, and restart slurmctld")


def register(app: typer.Typer, analyze_app: typer.Typer, eval_app: typer.Typer) -> None:
    watch_app = typer.Typer(rich_markup_mode="markdown", no_args_is_help=True,
                            help="Follow running jobs in a real cluster and act on what their logs show.")
    app.add_typer(watch_app, name="watch")
    d = WatchConfig()

    @watch_app.command("slurm", help=_reflow(WATCH_HELP))
    def watch_slurm(
        service: Annotated[str, typer.Option("--service", help="The annotation service, http://host:port.")],
        token_file: Annotated[Path, typer.Option("--token-file", help="File holding a submit-scope token.")],
        interval: Annotated[float, typer.Option("--interval", min=0.1, help="Seconds between looks.")] = d.interval_s,
        apply: Annotated[bool, typer.Option("--apply/--dry-run",
                                            help="Run the Slurm commands (default: print them).")] = False,
        once: Annotated[bool, typer.Option("--once", help="One look, then exit (for cron or a check).")] = False,
        state_file: Annotated[Path, typer.Option("--state-file", help="Offsets and memories across restarts.")]
            = Path("~/.schedmate/watch-slurm.json"),
        hang_after: Annotated[float, typer.Option("--hang-after", min=0,
                                                  help="Seconds without a new step that count as a hang (0: never).")]
            = d.hang_after_s,
        hang_factor: Annotated[float, typer.Option("--hang-factor", min=1, help="...or this many iteration times.")]
            = d.hang_factor,
        margin: Annotated[float, typer.Option("--margin", min=1, help="Extension = remaining estimate x this.")]
            = d.margin,
        unknown_step: Annotated[float, typer.Option("--unknown-step", min=1,
                                                    help="Extension when the log gives no remaining time, s.")]
            = d.unknown_step_s,
        min_confidence: Annotated[float, typer.Option("--min-confidence", min=0, max=1,
                                                      help="Act on log failure signals at or above this.")]
            = d.min_confidence,
        max_requeues: Annotated[int, typer.Option("--max-requeues", min=0,
                                                  help="Requeues before a failing job is cancelled.")]
            = d.max_requeues,
        as_json: Annotated[bool, typer.Option("--json", help="Events as JSON lines.")] = False,
    ) -> None:
        from adapters.slurm_live.watch import ServiceClient, Watcher

        try:
            token = token_file.read_text().strip()
            if not token:
                raise AdapterError(f"{token_file} is empty")
            cfg = WatchConfig(interval_s=interval, margin=margin, unknown_step_s=unknown_step,
                              hang_after_s=hang_after, hang_factor=hang_factor, min_confidence=min_confidence,
                              max_requeues=max_requeues)
            watcher = Watcher(ServiceClient(service, token), cfg, state_file.expanduser(), apply, Reporter(as_json))
        except (AdapterError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            raise typer.Exit(2) from None
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda _n, _f: stop.set())
        watcher.emit("started", service=service, interval_s=interval, applying=apply)
        watcher.run(once=once, stop=stop)
        watcher.emit("stopped")

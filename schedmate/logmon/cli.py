"""`schedmate analyze log` and `schedmate monitor` (stable CLI contract)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import typer

from schedmate.logmon.ingest import FileFollower, iter_stream_chunks
from schedmate.logmon.monitor import Monitor
from schedmate.logmon.report import LogReport


class _LazyMemory:
    """Loads chromadb and the embedding model only when a diagnosis is first looked up."""

    def __init__(self, path: Path | None = None) -> None:
        self._mem: Any = None
        self._failed = False
        self._path = path

    def _get(self) -> Any:
        if self._mem is None and not self._failed:
            from schedmate.logmon.assist import make_memory

            self._mem = make_memory(self._path)
            self._failed = self._mem is None
        return self._mem

    def lookup(self, window_text: str) -> Any:
        m = self._get()
        return m.lookup(window_text) if m is not None else None

    def remember(self, window_text: str, diagnosis: Any) -> None:
        m = self._get()
        if m is not None:
            m.remember(window_text, diagnosis)


def unreadable(path: Path) -> str | None:
    """Why a log path cannot be read, in words (None when it can)."""
    import os

    if path.is_dir():
        return "is a directory; give a log file (or - for stdin)"
    if not path.exists():
        return "no such file"
    if not path.is_file():
        return "not a regular file"
    if not os.access(path, os.R_OK):
        return "permission denied (not readable)"
    return None


def make_monitor(source: str, use_llm: bool, state_dir: Path | None = None, **kw: Any) -> Monitor:
    """A monitor with the learned rules and failure memory under `$SCHEDMATE_HOME`, or under `state_dir`
    (an evaluation's own, so that what one run learned does not score the next)."""
    from schedmate.logmon.store import RuleStore

    assistant = memory = None
    if use_llm:
        from schedmate.logmon.assist import make_assistant

        assistant = make_assistant()
        memory = _LazyMemory(None if state_dir is None else state_dir / "memory")
    store = RuleStore(None if state_dir is None else state_dir / "logrules.sqlite")
    return Monitor(source=source, assistant=assistant, memory=memory, store=store, **kw)


def _warn(report: LogReport, shown: set[str]) -> None:
    for w in report.warnings:
        if w not in shown:
            shown.add(w)
            print(f"warning: {w}", file=sys.stderr)


def _human(report: LogReport) -> str:
    f, p = report.failure, report.progress
    lines = [(f"log: {report.source} ({report.lines} lines, {report.rules_matched} matched by rules, "
             f"{report.llm_calls} LLM calls)")]
    step = f"{p.current_step}/{p.total_steps}" if p.total_steps else f"{p.current_step}"
    lines.append(f"progress: step {step}, epoch {p.epoch}/{p.total_epochs}, iteration {p.iteration_time_s} s, "
                 f"loss {p.last_loss}")
    if report.remaining:
        r = report.remaining
        lines.append(f"remaining: {r.p50:.0f} s (p10 {r.p10:.0f} s, p90 {r.p90:.0f} s)")
    if f.failed:
        lines.append(f"FAILED: {f.category.value} at line {f.onset_line}: {f.root_cause}")
        lines.append(f"  action: {f.action.value}, recoverable: {f.recoverable}")
    else:
        lines.append("failure: none" + (" (finished)" if report.finished else ""))
    return "\n".join(lines)


def register(app: typer.Typer, analyze_app: typer.Typer, eval_app: typer.Typer) -> None:
    @analyze_app.command("log")
    def analyze_log(
        file: str = typer.Argument(..., help="Log file to analyze ('-' reads standard input)."),
        json_out: bool = typer.Option(False, "--json", help="Print one JSON object (the stable contract)."),
        no_llm: bool = typer.Option(False, "--no-llm", help="Rules only: never call the LLM."),
    ) -> None:
        """Progress, remaining time and failure diagnosis of a training log.

        JSON (--json): {failure{category, failed, onset_line, root_cause, recoverable, action},
        progress{current_step, total_steps, epoch, total_epochs, iteration_time_s, samples_per_s, last_loss},
        remaining_time_s, llm_calls, rules_matched, ...}; unknown values are null. onset_line is 1-based.
        Without an LLM server, rules alone are used and a warning goes to stderr.
        """
        mon = make_monitor(file, use_llm=not no_llm)
        if file == "-":
            for chunk in iter_stream_chunks(sys.stdin.buffer):
                mon.feed_bytes(chunk)
        else:
            path = Path(file)
            problem = unreadable(path)
            if problem:
                print(f"error: {file}: {problem}", file=sys.stderr)
                raise typer.Exit(2)
            with open(path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    mon.feed_bytes(chunk)
        report = mon.finish()
        _warn(report, set())
        print(json.dumps(report.contract_json()) if json_out else _human(report))

    @app.command("monitor")
    def monitor(
        file: str = typer.Argument(..., help="Log file to watch ('-' reads standard input)."),
        follow: bool = typer.Option(False, "--follow", "-f", help="Keep reading as the file grows (survives "
                                    "rotation); otherwise stop at end of file."),
        json_out: bool = typer.Option(False, "--json", help="One JSON object per line per update."),
        no_llm: bool = typer.Option(False, "--no-llm", help="Rules only: never call the LLM."),
        poll_s: float = typer.Option(1.0, "--poll", help="Seconds between checks of the file when idle."),
        interval_s: float = typer.Option(10.0, "--interval", help="At most one progress-only update per this "
                                         "many seconds (failure changes are printed at once)."),
        grace_s: float = typer.Option(30.0, "--grace", help="With --follow, a failure is terminal once no "
                                      "progress has followed it for this many seconds."),
        hang_min_s: float = typer.Option(300.0, "--hang-min", help="Shortest silence called a hang."),
        idle_flush_s: float = typer.Option(5.0, "--idle-flush", help="With --follow, after this many quiet "
                                           "seconds process the lines still waiting for more context."),
    ) -> None:
        """Watch a training log and print an update whenever the estimate or the failure state changes.

        Exits 0 at end of file (without --follow), 3 on a terminal failure (printed first). Hangs are
        detected from timestamps in the log or, with --follow, from the wall clock.
        """
        mon = make_monitor(file, use_llm=not no_llm, clock=time.time, hang_min_s=hang_min_s)
        shown: set[str] = set()
        state: dict[str, Any] = {"key": None, "p50": None, "at": 0.0, "fail_since": None}

        def emit(report: LogReport, force: bool = False) -> None:
            _warn(report, shown)
            f = report.failure
            key = (f.category.value, f.failed, f.onset_line)
            p50 = report.remaining_time_s
            now = time.time()
            changed_fail = key != state["key"]
            step_changed = report.progress.current_step != state.get("step")
            big_change = (p50 is None) != (state["p50"] is None) or (
                p50 is not None and state["p50"] is not None and abs(p50 - state["p50"]) > 0.1 * max(1.0, state["p50"]))
            if force or changed_fail or ((step_changed or big_change) and now - state["at"] >= interval_s):
                state.update(key=key, p50=p50, at=now, step=report.progress.current_step)
                print(json.dumps(report.contract_json()) if json_out else _human(report) + "\n", flush=True)

        def terminal(report: LogReport) -> bool:
            if not report.failure.failed:
                state["fail_since"] = None
                return False
            if state["fail_since"] is None:
                state["fail_since"] = time.time()
            return time.time() - state["fail_since"] >= grace_s

        if file == "-":
            for chunk in iter_stream_chunks(sys.stdin.buffer):
                mon.feed_bytes(chunk)
                emit(mon.report())
            report = mon.finish()
            emit(report, force=True)
            raise typer.Exit(3 if report.failure.failed else 0)
        if not follow:
            problem = unreadable(Path(file))
            if problem:
                print(f"error: {file}: {problem}", file=sys.stderr)
                raise typer.Exit(2)
            with open(file, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    mon.feed_bytes(chunk)
                    emit(mon.report())
            report = mon.finish()
            emit(report, force=True)
            raise typer.Exit(3 if report.failure.failed else 0)
        follower = FileFollower(file)
        last_data = time.time()
        try:
            for data in follower.follow(poll_s=poll_s):
                if data:
                    mon.feed_bytes(data)
                    last_data = time.time()
                elif time.time() - last_data >= idle_flush_s:
                    mon.flush()  # the file went quiet: process lines still waiting for more context
                report = mon.report()
                emit(report)
                if terminal(report):
                    emit(report, force=True)
                    raise typer.Exit(3)
        except KeyboardInterrupt:
            emit(mon.finish(), force=True)

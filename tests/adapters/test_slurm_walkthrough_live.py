"""The README's Slurm walkthrough, run as written with bash against a throw-away Slurm (skipped without Slurm).

Two lines are adapted, and the test fails if they are not there as expected: the `export` of where things
live (temporary paths and a free port here) and the daemon line, which gets `--once` so it returns.
"""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import localslurm
import pytest
from livestack import REPO, env, megatron_lines

pytestmark = pytest.mark.slow


def walkthrough() -> str:
    readme = (REPO / "README.md").read_text()
    section = readme.split("### Slurm walkthrough", 1)[1]
    return re.search(r"```bash\n(.*?)```", section, re.DOTALL).group(1)


def test_the_readme_walkthrough_runs_as_written(slurm_with_plugin, tmp_path):
    block = walkthrough()
    export = next(line for line in block.splitlines() if line.startswith("export SERVICE="))
    daemon = next(line for line in block.splitlines() if "watch slurm" in line and "--apply" in line)
    port = localslurm._free_port()
    script = block.replace(export, f"export SERVICE=http://127.0.0.1:{port} DB={tmp_path}/service.sqlite "
                                   f"TOKEN_FILE={tmp_path}/token")
    script = script.replace(daemon, daemon.split("#")[0].rstrip() + " --once")
    jobs = tmp_path / "jobs"
    (jobs / "gpt").mkdir(parents=True)
    (jobs / "gpt" / "train.sbatch").write_text("#!/bin/bash\n" + megatron_lines(20, 20, 0.5, 500.0))
    run_env = {**env(), "SLURM_CONF": str(slurm_with_plugin.conf), "SLURM_CONF_DIR": str(slurm_with_plugin.root),
               "JOBS": str(jobs), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               "HOME": str(tmp_path)}
    log = tmp_path / "walkthrough.out"
    with open(log, "w") as sink:  # a file, not a pipe: the service left in the background keeps it open
        proc = subprocess.Popen(["bash", "-c", "set -euo pipefail\n" + script], env=run_env, cwd=tmp_path,
                                stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=300)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)  # that service
    out = log.read_text()
    assert proc.returncode == 0, out
    assert re.search(r"AdminComment=schedmate:id=slurm-[0-9a-f-]{36}", out), out
    assert "TimeLimit=00:30:00" in out and "\nschedmate:" in out, out  # the request kept, the summary written
    dry_run, daemon_look = out.split("applying=True", 1)
    job = re.search(r"following job=(\d+) .*cap_min=30", dry_run).group(1)  # the watcher found it and its request
    assert "stopped" in daemon_look and "error" not in daemon_look, out
    assert slurm_with_plugin.show_job(job)["AdminComment"].startswith("schedmate:id=slurm-")
    slurm_with_plugin.run("scancel", job)

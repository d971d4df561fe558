"""The live Slurm integration on loopback: the annotation service (the real app over HTTP and SQLite), a token,
and a throw-away Slurm whose slurmctld runs schedmate's job_submit.lua (installed by the same function as
`schedmate adapt slurm-plugin`). Used by test_slurm_plugin_live.py and test_slurm_watch_live.py; the
README walkthrough test starts `schedmate serve` itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import localslurm
from service.conftest import Running
from service.conftest import start as start_app

from adapters.slurm_live.install import install
from adapters.slurm_live.submit import SubmitPolicy
from schedmate.service.app import Settings, create_token
from schedmate.service.db import Store

SCHEDMATE = [sys.executable, "-m", "schedmate.cli"]
REPO = Path(__file__).resolve().parents[2]


def env() -> dict[str, str]:
    """The environment for schedmate subprocesses: this checkout first on the path."""
    paths = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


@dataclass
class Service:
    """The annotation service (the real app over HTTP, uvicorn on loopback in a thread, as the service tests run
    it) over its own SQLite file and so its own history: predictions depend only on what the test fed it."""

    running: Running
    token: str
    token_file: Path
    jobs: Path
    """The service's --root: job directories under it are read by the code analyzer."""

    @property
    def url(self) -> str:
        return self.running.url

    def stop(self) -> None:
        self.running.stop()


def start_service(root: Path) -> Service:
    root.mkdir(parents=True)
    jobs = root / "jobs"
    jobs.mkdir()
    db = str(root / "service.sqlite")
    token = create_token(Store(db), "slurm", ["submit", "read"])
    token_file = root / "token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    return Service(start_app(Settings(db=db, roots=[jobs], rate_per_s=1000, burst=1000)), token, token_file, jobs)


@dataclass
class Stack:
    cluster: localslurm.LocalSlurm
    service: Service
    log_start: int = 0

    @property
    def conf_dir(self) -> Path:
        return self.cluster.root

    @property
    def url(self) -> str:
        return self.service.url

    @property
    def jobs(self) -> Path:
        return self.service.jobs

    def configure(self, url: str | None = None, timeout_s: float = 2.0, **policy: Any) -> None:
        """Rewrite schedmate_submit.conf (the shim reads it at every submission)."""
        install(self.conf_dir, url or self.url, self.service.token_file, timeout_s, policy=SubmitPolicy(**policy))

    def http(self, method: str, path: str, **kw: Any) -> httpx.Response:
        return httpx.request(method, self.url + path, headers={"Authorization": f"Bearer {self.service.token}"},
                             timeout=60, **kw)

    def job_dir(self, name: str, files: dict[str, str]) -> Path:
        d = self.jobs / name
        d.mkdir(parents=True)
        for rel, text in files.items():
            (d / rel).write_text(text)
        return d

    def history(self, name: str, workdir: Path, command: str, runtime_s: float, n: int = 3) -> None:
        """`n` earlier runs of the same command that took `runtime_s` and ended an hour ago."""
        for i in range(n):
            jid = f"history-{name}-{i}"
            r = self.http("POST", "/v1/jobs", json={"id": jid, "command": command, "workdir": str(workdir),
                                                     "user": "root",
                                                     "submit_time": time.time() - 3600 - runtime_s})
            assert r.status_code == 201, r.text
            assert self.http("POST", f"/v1/jobs/{jid}/finish", json={"runtime_s": runtime_s}).status_code == 200

    def after_history(self, name: str, script: str, runtime_s: float, *args: str, **policy: Any) -> tuple[Path, str]:
        """Under `policy`, a held job `train.sbatch` whose three earlier runs from the same directory took
        `runtime_s` -> (its directory, its id). `args` go to sbatch."""
        self.configure(**policy)
        wd = self.job_dir(name, {"train.sbatch": script})
        self.history(name, wd, "sbatch train.sbatch", runtime_s)
        return wd, self.sbatch(wd, "--hold", *args, "train.sbatch")

    def sbatch(self, workdir: Path, *args: str) -> str:
        """sbatch from inside `workdir` (so the plugin sees the script path relative to it)."""
        p = subprocess.run(["sbatch", "--parsable", f"--output={workdir}/slurm-%j.out", *args], cwd=workdir,
                           env=self.cluster.env, capture_output=True, text=True, timeout=60, check=False)
        assert p.returncode == 0, p.stderr
        return p.stdout.strip().split(";")[0]

    def service_id(self, job_id: str) -> str:
        admin = self.cluster.show_job(job_id).get("AdminComment", "").strip()
        assert admin.startswith("schedmate:id="), admin
        return admin.removeprefix("schedmate:id=")

    def service_job(self, sid: str) -> dict[str, Any]:
        r = self.http("GET", f"/v1/jobs/{sid}")
        assert r.status_code == 200, r.text
        return r.json()

    def plugin_log(self) -> str:
        """What the plugin logged to slurmctld's log since this stack was made."""
        text = (self.conf_dir / "slurmctld.log").read_text(errors="replace")[self.log_start:]
        return "\n".join(line for line in text.splitlines() if "schedmate:" in line)


def start(cluster: localslurm.LocalSlurm, root: Path) -> Stack:
    """A fresh service for `cluster`, with the plugin pointed at it."""
    stack = Stack(cluster, start_service(root), len((cluster.root / "slurmctld.log").read_text(errors="replace")))
    stack.configure()
    return stack


def megatron_lines(steps: int, total: int, every_s: float, ms: float) -> str:
    """A bash loop printing Megatron-LM style iteration lines (our own text, in that framework's format)."""
    return (f"for i in $(seq 1 {steps}); do\n"
            f"  printf ' iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): {ms:.1f} |"
            f" learning rate: 1.000E-04 | global batch size: 8 | lm loss: 2.%03dE+00 |\\n' $i {total} $((i*8))"
            f" $((999-i))\n  sleep {every_s}\ndone\n")

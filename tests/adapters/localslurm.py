"""A throw-away single-node Slurm (munged + slurmctld + slurmd) in a temporary directory.

Used by the live adapter tests; also runnable by hand to poke at it:

    .venv/bin/python tests/adapters/localslurm.py   # prints the SLURM_CONF to export, Ctrl-C stops it

Needs root (slurmd runs jobs as their owner) and the Debian packages `slurm-wlm munge`. Nothing
outside the temporary directory is touched: own munge key and socket, own ports, own spool.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel")


def missing_binaries() -> list[str]:
    return [b for b in BINARIES if shutil.which(b) is None and not Path("/usr/sbin", b).exists()]


def _which(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalSlurm:
    root: Path
    procs: list[subprocess.Popen] = field(default_factory=list)
    started_in_s: float = 0.0

    @property
    def conf(self) -> Path:
        return self.root / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, timeout=30, check=check)

    def sbatch(self, *args: str) -> str:
        out = self.run("sbatch", "--parsable", f"--chdir={self.root}", f"--output={self.root}/job-%j.out",
                       *args).stdout
        return out.strip().split(";")[0]

    def squeue_field(self, job_id: str, fmt: str) -> str:
        """One squeue format field (%l limit, %y nice, %k comment, %T state) of one job, as printed."""
        return self.run("squeue", "-h", "-t", "all", "-j", job_id, "-o", fmt).stdout.rstrip("\n")

    def show_job(self, job_id: str) -> dict[str, str]:
        """`scontrol show job -o` as key -> value (values up to the next ` Key=`)."""
        line = self.run("scontrol", "show", "job", "-o", job_id).stdout.strip()
        fields: dict[str, str] = {}
        for token in line.split(" "):
            if "=" in token and token.split("=", 1)[0].isalnum():
                key, value = token.split("=", 1)
                fields[key] = value
                last = key
            elif fields:
                fields[last] += " " + token
        return fields

    def wait_for_state(self, job_id: str, states: set[str], timeout_s: float = 30.0) -> str:
        deadline = time.monotonic() + timeout_s
        state = ""
        while time.monotonic() < deadline:
            state = self.show_job(job_id).get("JobState", "")
            if state in states:
                return state
            time.sleep(0.2)
        raise TimeoutError(f"job {job_id} still {state!r}, wanted one of {sorted(states)}")

    def stop(self, remove: bool = True) -> None:
        """Cancel every job first (slurmd kills their processes), then stop the daemons, then delete the directory."""
        if len(self.procs) == 3:
            self.run("scancel", "--full", "--user=root", check=False)  # only this cluster: SLURM_CONF is ours
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and self.run("squeue", "-h", check=False).stdout.strip():
                time.sleep(0.2)
        for p in reversed(self.procs):
            p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()
        if remove and os.environ.get("SCHEDMATE_KEEP_SLURM") != "1":  # =1 keeps the logs for a post-mortem
            shutil.rmtree(self.root, ignore_errors=True)


def _write_config(root: Path, extra: str = "") -> None:
    cpus = max(8, os.cpu_count() or 1)  # room for several one-CPU test jobs at once (config_overrides)
    (root / "state").mkdir()
    (root / "spool").mkdir()
    (root / "slurm.conf").write_text(f"""\
ClusterName=schedmate-test
SlurmctldHost=localhost
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/munge.sock
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
PriorityType=priority/multifactor
JobRequeue=1
ReturnToService=2
SwitchType=switch/none
TopologyPlugin=topology/tree
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
{extra}""")
    (root / "topology.conf").write_text("SwitchName=s0 Nodes=localhost\n")


def start(timeout_s: float = 60.0, job_submit: Callable[[Path], object] | None = None,
          extra_conf: str = "") -> LocalSlurm:
    """Start munged, slurmctld and slurmd; return once the node is idle. Raises RuntimeError with the logs.

    `job_submit(conf_dir)`: installs a `job_submit.lua` there before slurmctld starts (JobSubmitPlugins=lua);
    `extra_conf`: more slurm.conf lines (another partition, say)."""
    t0 = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="schedmate-slurm-"))
    root.chmod(0o755)
    cluster = LocalSlurm(root)
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    _write_config(root, ("JobSubmitPlugins=lua\n" if job_submit else "") + extra_conf)
    if job_submit is not None:
        job_submit(root)
    try:
        cluster.procs.append(subprocess.Popen(
            [_which("munged"), "--foreground", "--force", f"--key-file={key}", f"--socket={root}/munge.sock",
             f"--pid-file={root}/munged.pid", f"--log-file={root}/munged.log", f"--seed-file={root}/munge.seed"],
            stdout=subprocess.DEVNULL, stderr=open(  # noqa: SIM115 (the daemon keeps writing to it)
                root / "munged.err", "w")))
        _wait(lambda: (root / "munge.sock").exists(), 10, "munged socket", root)
        cluster.procs.append(subprocess.Popen([_which("slurmctld"), "-D", "-i", "-f", str(cluster.conf)],
                                              env=cluster.env, stdout=subprocess.DEVNULL,
                                              stderr=open(  # noqa: SIM115 (the daemon keeps writing to it)
                root / "slurmctld.err", "w")))
        _wait(lambda: cluster.run("scontrol", "ping", check=False).stdout.count("UP") > 0, timeout_s,
              "slurmctld answering scontrol ping", root)
        cluster.procs.append(subprocess.Popen([_which("slurmd"), "-D", "-f", str(cluster.conf), "-N", "localhost"],
                                              env=cluster.env, stdout=subprocess.DEVNULL,
                                              stderr=open(  # noqa: SIM115 (the daemon keeps writing to it)
                root / "slurmd.err", "w")))
        _wait(lambda: "idle" in cluster.run("sinfo", "-h", "-o", "%T", check=False).stdout, timeout_s,
              "node idle in sinfo", root)
    except BaseException:
        cluster.stop(remove=False)  # keep the logs named in the error
        raise
    cluster.started_in_s = time.monotonic() - t0
    return cluster


def _wait(ready, timeout_s: float, what: str, root: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.2)
    logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
                     for p in sorted(root.glob("*.log")) + sorted(root.glob("*.err")))
    raise RuntimeError(f"local Slurm: timed out waiting for {what} ({timeout_s:.0f} s)\n{logs}")


if __name__ == "__main__":
    c = start()
    print(f"started in {c.started_in_s:.1f} s\nexport SLURM_CONF={c.conf}")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        c.stop()

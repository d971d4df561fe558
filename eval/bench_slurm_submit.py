"""What schedmate's job_submit.lua adds to an `sbatch`: wall time per submission, with and without the plugin.

slurmctld holds its job lock while the plugin waits for the service, so this is the cost every
submission pays. Needs root and Slurm (it starts the throw-away single-node Slurm of the live tests, one
without the plugin and one with it, and the annotation service in-process on loopback):

    .venv/bin/python -m eval.bench_slurm_submit --jobs 40
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "adapters"))

import livestack
import localslurm

from adapters.slurm_live.install import install

SCRIPT = "#!/bin/bash\n#SBATCH --job-name=bench\n" + livestack.megatron_lines(3, 3, 0.1, 100.0)
CODE = ("import argparse\nimport torch\np = argparse.ArgumentParser()\np.add_argument('--max_steps', type=int)\n"
        "args = p.parse_args()\nmodel = torch.nn.Linear(512, 512).cuda()\n")


def timed_sbatch(cluster: localslurm.LocalSlurm, workdir: Path, n: int, *args: str) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        p = subprocess.run(["sbatch", "--parsable", "--hold", "--time=30", f"--output={workdir}/%j.out", *args],
                           cwd=workdir, env=cluster.env, capture_output=True, text=True, timeout=60, check=False)
        out.append(time.perf_counter() - t0)
        if p.returncode != 0:
            raise RuntimeError(p.stderr)
    cluster.run("scancel", "--user=root", check=False)
    return out


def row(name: str, xs: list[float]) -> str:
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, int(0.9 * len(xs)))]
    return f"| {name} | {len(xs)} | {statistics.median(xs) * 1000:.0f} | {p90 * 1000:.0f} |"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=40, help="submissions per case (the silent-service case: 5)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="schedmate-bench-submit-"))
    plain = localslurm.start()
    plugged = localslurm.start(job_submit=lambda d: install(d, "http://127.0.0.1:9", Path("/dev/null")))
    stack = livestack.start(plugged, tmp / "service")
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    try:
        outside = tmp / "outside"
        outside.mkdir()
        (outside / "train.sbatch").write_text(SCRIPT)
        project = stack.job_dir("project", {"train.sbatch": "#!/bin/bash\npython train.py --max_steps 500\n",
                                            "train.py": CODE})
        rows = [row("no plugin", timed_sbatch(plain, outside, args.jobs, "train.sbatch"))]
        stack.configure()
        timed_sbatch(plugged, outside, 3, "train.sbatch")  # warm-up: the service's first answer loads models
        rows.append(row("plugin, service up, script only", timed_sbatch(plugged, outside, args.jobs, "train.sbatch")))
        rows.append(row("plugin, service up, workdir read", timed_sbatch(plugged, project, args.jobs, "train.sbatch")))
        stack.configure(url="http://127.0.0.1:9")
        rows.append(row("plugin, service down (refused)", timed_sbatch(plugged, outside, args.jobs, "train.sbatch")))
        stack.configure(url=f"http://127.0.0.1:{silent.getsockname()[1]}", timeout_s=1)
        rows.append(row("plugin, service silent, timeout_s=1", timed_sbatch(plugged, outside, 5, "train.sbatch")))
    finally:
        silent.close()
        stack.service.stop()
        plugged.stop()
        plain.stop()
    print("| case | submissions | median ms | p90 ms |\n|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

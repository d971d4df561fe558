"""`schedmate adapt slurm-plugin`: put `job_submit.lua` and its `schedmate_submit.conf` into a Slurm conf dir."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from adapters.base import AdapterError
from adapters.slurm_live.submit import SubmitPolicy

LUA = Path(__file__).with_name("job_submit.lua")
HEADER = "-- schedmate job_submit.lua"
CONF_NAME = "schedmate_submit.conf"
_URL = re.compile(r"https?://[\w.\-:\[\]/]+")


def conf_text(service: str, token_file: Path, timeout_s: float, curl: str, policy: SubmitPolicy) -> str:
    lines = [
        "# schedmate job_submit.lua settings, read at every submission (no restart needed after an edit).",
        "# The shim's own keys:",
        f"url = {service.rstrip('/')}",
        f"token_file = {token_file}",
        f"timeout_s = {timeout_s:g}",
        f"curl = {curl}",
        "# enabled = no    # submit every job unchanged without asking the service",
        "# Every other key is site policy, decided by the service (adapters/slurm_live/submit.py SubmitPolicy):",
    ]
    defaults = SubmitPolicy()
    for name in SubmitPolicy.model_fields:
        value = getattr(policy, name)
        text = str(value).lower() if isinstance(value, bool) else f"{value:g}" if isinstance(value, float) else value
        lines.append(f"{name} = {text}" if value != getattr(defaults, name) else f"# {name} = {text}")
    return "\n".join(lines) + "\n"


def install(conf_dir: Path, service: str, token_file: Path, timeout_s: float = 2.0, curl: str | None = None,
            policy: SubmitPolicy | None = None, force: bool = False) -> list[Path]:
    """Write both files; AdapterError for a bad argument or a job_submit.lua that is not ours (unless force)."""
    if not conf_dir.is_dir():
        raise AdapterError(f"{conf_dir}: not a directory")
    if not _URL.fullmatch(service):
        raise AdapterError(f"--service {service!r}: expected http(s)://host:port")
    if not 0 < timeout_s <= 30:
        raise AdapterError("--timeout must be in (0, 30] seconds: slurmctld waits for the call with its lock held")
    curl = curl or shutil.which("curl")
    if not curl or not Path(curl).is_absolute():
        raise AdapterError("curl not found: install it (apt-get install curl) or pass --curl /path/to/curl")
    lua = conf_dir / "job_submit.lua"
    if lua.exists() and not force and not lua.read_text(errors="replace").startswith(HEADER):
        raise AdapterError(f"{lua} exists and is not schedmate's: merge by hand or pass --force")
    conf = conf_dir / CONF_NAME
    conf.write_text(conf_text(service, token_file, timeout_s, curl, policy or SubmitPolicy()))
    shutil.copyfile(LUA, lua)
    lua.chmod(0o644)
    return [lua, conf]

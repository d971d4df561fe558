"""Parse a job's launch command (and the shell wrappers it names) with shlex; never run it.

Understood: python [-m module], `python -m torch.distributed.run|launch`, torchrun, deepspeed,
accelerate launch, srun, sbatch scripts (#SBATCH lines), mpirun/mpiexec/horovodrun, `bash run.sh`
wrappers (variables, `export`, `${X:-default}`, `$((a*b))`, arrays), `env A=B`, `cd d &&`, nohup/time.
The result says how many nodes and processes the job asks for, where the entry script is, its
arguments, and the launcher-level settings (accelerate config, DeepSpeed hostfile, ...), each with
evidence: `cmd` for the command line or `file:line` for a wrapper script.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof.pyast import const_eval
from schedmate.codeprof.reader import Workdir

PYTHONS = re.compile(r"^(python|python3|python3\.\d+|python2|pypy3?)$")
WRAPPERS = {"nohup", "time", "exec", "stdbuf", "nice", "ionice", "unbuffer"}
_TRANSPARENT = {"&&", ";", "||", "|"}


class LaunchError(ValueError):
    pass


@dataclass
class Setting:
    value: Any
    where: list[str]


@dataclass
class Launch:
    chain: list[str] = field(default_factory=list)
    """Launchers from outermost to innermost, e.g. ["srun", "torchrun", "python"]."""
    script: str | None = None
    """Workdir-relative entry script."""
    module: str | None = None
    args: list[str] = field(default_factory=list)
    args_where: list[str] = field(default_factory=lambda: ["cmd"])
    base: str = ""
    env: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Setting] = field(default_factory=dict)
    """num_nodes, procs_per_node, num_procs, gpus_per_node (when a launcher states GPUs), and
    launcher options: mixed_precision, distributed_type, zero_stage, grad_accum, ds_config, acc_config."""
    files: list[str] = field(default_factory=list)
    """Workdir-relative files the launch read (wrapper scripts, hostfiles, launcher configs)."""
    notes: list[str] = field(default_factory=list)

    def put(self, key: str, value: Any, where: list[str] | str, override: bool = True) -> None:
        if value is None:
            return
        if override or key not in self.settings:
            self.settings[key] = Setting(value, [where] if isinstance(where, str) else list(where))

    def get(self, key: str) -> Any:
        s = self.settings.get(key)
        return None if s is None else s.value


def to_int(v: Any) -> int | None:
    try:
        if isinstance(v, bool):
            return None
        if isinstance(v, (int, float)):
            return int(v) if float(v).is_integer() else None
        s = str(v).strip()
        return int(s) if re.fullmatch(r"[+]?\d+", s) else None
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------- option scanning


def _is_program(tok: str) -> bool:
    base = PurePosixPath(tok).name
    return bool(
        tok.endswith((".py", ".sh"))
        or PYTHONS.match(base)
        or base in {"torchrun", "deepspeed", "accelerate", "bash", "sh", "srun", "mpirun", "mpiexec"}
    )


def scan_options(
    toks: list[str],
    i: int,
    valued: set[str],
    flags: set[str],
    two_valued: set[str] = frozenset(),
) -> tuple[dict[str, str | bool], int]:
    """Options from toks[i:] up to the first positional token; returns (options, index of positional).

    Names are normalised (`--nproc-per-node` -> `nproc_per_node`, `-N` -> `N`)."""
    opts: dict[str, str | bool] = {}
    while i < len(toks):
        t = toks[i]
        if t == "--":
            return opts, i + 1
        if not t.startswith("-") or t == "-":
            break
        if t.startswith("--"):
            name, eq, val = t[2:].partition("=")
            name = name.replace("-", "_")
            if eq:
                opts[name] = val
                i += 1
            elif name in two_valued:
                opts[name] = " ".join(toks[i + 1 : i + 3])
                i += 3
            elif name in flags:
                opts[name] = True
                i += 1
            elif name in valued or (
                i + 1 < len(toks) and not toks[i + 1].startswith("-") and not _is_program(toks[i + 1])
            ):
                opts[name] = toks[i + 1] if i + 1 < len(toks) else ""
                i += 2
            else:
                opts[name] = True
                i += 1
        else:  # short option(s): -N 2, -N2, -n=4
            name = t[1:2]
            rest = t[2:]
            if len(t) > 2 and t[1:].replace("-", "_") in valued | flags | two_valued:
                name, rest = t[1:].replace("-", "_"), ""  # single-dash long options (-np, -npernode)
            if name in two_valued:
                opts[name] = " ".join(toks[i + 1 : i + 3])
                i += 3
            elif rest:
                opts[name] = rest.lstrip("=")
                i += 1
            elif name in flags:
                opts[name] = True
                i += 1
            elif name in valued or (
                i + 1 < len(toks) and not toks[i + 1].startswith("-") and not _is_program(toks[i + 1])
            ):
                opts[name] = toks[i + 1] if i + 1 < len(toks) else ""
                i += 2
            else:
                opts[name] = True
                i += 1
    return opts, i


# --------------------------------------------------------------------------- shell


UNKNOWN = "__unknown__"
_VAR = re.compile(r"\$\{#?(\w+)(\[[@*]\])?(?::?[-=]([^}]*))?\}|\$\(\((.*?)\)\)|\$\(([^)]*)\)|\$(\w+)|`[^`]*`")


class Shell:
    """Just enough of sh to follow a launch wrapper: variables, exports, defaults, arithmetic."""

    def __init__(self, env: dict[str, str], fname: str):
        self.vars: dict[str, str] = dict(env)
        self.where: dict[str, str] = {}
        self.fname = fname

    def expand(self, s: str, used: set[str] | None = None) -> str:
        def sub(m: re.Match[str]) -> str:
            name, _, default, arith, cmdsub, plain = m.groups()
            if arith is not None:
                inner = self.expand(
                    re.sub(r"\b([A-Za-z_]\w*)\b", lambda n: self.vars.get(n.group(1), n.group(1)), arith),
                    used,
                )
                try:
                    import ast as _ast

                    ok, v = const_eval(_ast.parse(inner.replace("/", "//"), mode="eval").body)
                    return str(v) if ok else ""
                except SyntaxError:
                    return ""
            if cmdsub is not None or m.group(0).startswith("`"):
                return UNKNOWN  # command substitution: never run, its value is unknown
            var = name or plain
            if var in self.vars and self.vars[var] != "":
                if used is not None:
                    used.add(var)
                return self.vars[var]
            return self.expand(default, used) if default else ""

        for _ in range(4):
            new = _VAR.sub(sub, s)
            if new == s:
                break
            s = new
        return s


def _logical_lines(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    buf, start = "", 0
    for n, line in enumerate(text.splitlines(), 1):
        if not buf:
            start = n
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        if re.search(r"=\(\s*$", line) or (buf and "(" in buf and ")" not in buf and ")" not in line):
            buf += line.split("#", 1)[0] + " "
            continue
        buf += line
        out.append((start, buf))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


_ASSIGN = re.compile(r"^(?:export\s+|declare\s+-x\s+|local\s+|readonly\s+)?([A-Za-z_]\w*)=(.*)$")
_SBATCH = {
    "nodes": "num_nodes",
    "N": "num_nodes",
    "ntasks_per_node": "procs_per_node",
    "gpus_per_node": "gpus_per_node",
    "ntasks": "num_procs",
    "n": "num_procs",
    "gres": "gres",
    "gpus": "gpus",
    "G": "gpus",
}


# --------------------------------------------------------------------------- parser


class _Parser:
    def __init__(self, wd: Workdir, env: dict[str, str]):
        self.wd = wd
        self.launch = Launch(env=dict(env))
        self.depth = 0

    # entry points -----------------------------------------------------------
    def parse_command(self, command: str) -> Launch:
        shell = Shell(self.launch.env, "cmd")
        try:  # $VARS of the given environment expand as the shell would; unset ones stay empty
            toks = shlex.split(shell.expand(command), comments=True)
        except ValueError as e:
            raise LaunchError(f"cannot split the command line: {e}") from e
        self._segments(toks, "cmd", shell)
        return self.launch

    def _segments(self, toks: list[str], where: str, shell: Shell) -> bool:
        """Run through `a && b; c` segments: `cd` and assignments apply, the first launch wins."""
        segs: list[list[str]] = [[]]
        for t in toks:
            if t in _TRANSPARENT:
                segs.append([])
            else:
                segs[-1].append(t)
        for seg in segs:
            if self._segment(seg, where, shell):
                return True
        return False

    def _segment(self, toks: list[str], where: str, shell: Shell) -> bool:
        i = 0
        while i < len(toks):
            m = _ASSIGN.match(toks[i])
            if m and toks[i] == toks[i].strip():
                shell.vars[m.group(1)] = m.group(2)
                self.launch.env[m.group(1)] = m.group(2)
                shell.where[m.group(1)] = where
                i += 1
            elif toks[i] == "env":
                i += 1
            else:
                break
        toks = toks[i:]
        if not toks:
            return False
        if toks[0] == "cd" and len(toks) > 1:
            self.launch.base = self.wd.rel(toks[1], self.launch.base) or self.launch.base
            return False
        return self._launch(toks, where, shell)

    # launchers ---------------------------------------------------------------
    def _launch(self, toks: list[str], where: str, shell: Shell) -> bool:
        self.depth += 1
        if self.depth > 8:
            raise LaunchError("launch wrappers nest too deep")
        prog = PurePosixPath(toks[0]).name
        L = self.launch
        if prog in WRAPPERS:
            return self._launch(toks[1:], where, shell) if len(toks) > 1 else False
        if prog == "env" or (_ASSIGN.match(toks[0]) and len(toks) > 1):
            return self._segment(toks, where, shell)
        if prog == "numactl":
            _, i = scan_options(toks, 1, set(), set())
            return self._launch(toks[i:], where, shell)
        if PYTHONS.match(prog):
            return self._python(toks, where, shell)
        if prog == "torchrun":
            return self._torchrun(toks, 1, where, shell)
        if prog == "deepspeed":
            return self._deepspeed(toks, where, shell)
        if prog == "accelerate" and len(toks) > 1 and toks[1] == "launch":
            return self._accelerate(toks, 2, where, shell)
        if prog == "srun":
            return self._srun(toks, where, shell)
        if prog in {"mpirun", "mpiexec", "horovodrun"}:
            return self._mpirun(toks, where, shell)
        if prog == "sbatch":
            opts, i = scan_options(toks, 1, {"nodes", "N", "ntasks_per_node", "gpus_per_node", "gres"}, set())
            self._slurm_opts(opts, where)
            return self._script(toks[i:], where, shell) if i < len(toks) else False
        if prog in {"bash", "sh", "zsh"}:
            _, i = scan_options(toks, 1, set(), {"x", "e", "l", "u"})
            return self._script(toks[i:], where, shell) if i < len(toks) else False
        if toks[0].endswith((".sh", ".slurm", ".sbatch")):
            return self._script(toks, where, shell)
        if toks[0].endswith(".py"):
            L.chain.append("python")
            return self._entry(toks[0], toks[1:], where)
        return False

    def _python(self, toks: list[str], where: str, shell: Shell) -> bool:
        opts: dict[str, str | bool] = {}
        i = 1
        while i < len(toks) and toks[i].startswith("-"):
            t = toks[i]
            if t == "-c":
                raise LaunchError("`python -c` runs inline code; the analyzer needs an entry script")
            if t in {"-m", "-X", "-W"}:
                opts[t[1:]] = toks[i + 1] if i + 1 < len(toks) else ""
                i += 2
                if t == "-m":
                    break
            elif t.startswith("-m") and len(t) > 2:
                opts["m"] = t[2:]
                i += 1
                break
            else:
                i += 1
        mod = opts.get("m")
        if isinstance(mod, str):
            if mod in {"torch.distributed.run", "torch.distributed.launch"}:
                self.launch.chain.append(f"python -m {mod}")
                return self._torchrun(toks, i, where, shell, legacy=mod.endswith("launch"))
            if mod in {"accelerate.commands.launch"}:
                self.launch.chain.append("accelerate")
                return self._accelerate(toks, i, where, shell)
            if mod in {"deepspeed.launcher.runner"}:
                return self._deepspeed(["deepspeed", *toks[i:]], where, shell)
            self.launch.chain.append("python")
            return self._entry(None, toks[i:], where, module=mod)
        if i >= len(toks):
            return False
        self.launch.chain.append("python")
        return self._entry(toks[i], toks[i + 1 :], where)

    def _entry(self, script: str | None, args: list[str], where: str, module: str | None = None) -> bool:
        L = self.launch
        if module is not None:
            L.module = module
            cand = module.replace(".", "/")
            for p in (f"{cand}.py", f"{cand}/__main__.py"):
                r = self.wd.rel(p, L.base)
                if r and self.wd.exists(r):
                    L.script = r
                    break
        elif script is not None:
            L.script = self.wd.rel(script, L.base)
            if L.script is None:
                L.notes.append(f"entry script {script} is outside the workdir; not read")
        L.args = list(args)
        L.args_where = where.split("|")
        if not L.get("distributed_launcher") and not any(
            k in L.settings for k in ("num_nodes", "num_procs", "procs_per_node")
        ):
            # a bare interpreter: one process on one node
            L.put("num_nodes", 1, where, override=False)
            L.put("procs_per_node", 1, where, override=False)
            L.put("single_process", True, where, override=False)
        return True

    def _torchrun(self, toks: list[str], i: int, where: str, shell: Shell, legacy: bool = False) -> bool:
        L = self.launch
        if not L.chain or not L.chain[-1].startswith("python -m"):
            L.chain.append("torchrun")
        opts, i = scan_options(
            toks,
            i,
            {
                "nnodes",
                "nproc_per_node",
                "node_rank",
                "master_addr",
                "master_port",
                "rdzv_endpoint",
                "rdzv_backend",
                "rdzv_id",
                "rdzv_conf",
                "max_restarts",
                "monitor_interval",
                "log_dir",
                "redirects",
                "tee",
                "local_addr",
                "role",
                "start_method",
                "logs_specs",
                "local_ranks_filter",
            },
            {"standalone", "no_python", "run_path", "m", "module", "use_env"},
        )
        nn = opts.get("nnodes")
        if isinstance(nn, str):
            n = to_int(nn)
            if n is None and ":" in nn:  # elastic min:max
                lo, hi = (to_int(x) for x in nn.split(":", 1))
                n = lo if lo == hi else None
                if n is None:
                    L.notes.append(f"elastic --nnodes {nn}: node count not fixed")
            L.put("num_nodes", n, where)
        elif "standalone" in opts or "nnodes" not in opts:
            L.put("num_nodes", 1, where, override=False)
        npn = opts.get("nproc_per_node")
        if isinstance(npn, str):
            L.put("procs_per_node", to_int(npn), where)  # "gpu"/"auto": all local GPUs, unknown here
        elif npn is None:
            L.put("procs_per_node", 1, where, override=False)
        L.put("distributed_launcher", True, where)
        if i >= len(toks):
            return False
        if opts.get("m") is True or opts.get("module") is True:
            return self._entry(None, toks[i + 1 :], where, module=toks[i])
        if opts.get("no_python") is True:
            return self._launch(toks[i:], where, shell)
        return self._entry(toks[i], toks[i + 1 :], where)

    def _deepspeed(self, toks: list[str], where: str, shell: Shell) -> bool:
        L = self.launch
        L.chain.append("deepspeed")
        opts, i = scan_options(
            toks,
            1,
            {
                "num_gpus",
                "num_nodes",
                "hostfile",
                "include",
                "exclude",
                "master_port",
                "master_addr",
                "launcher",
                "launcher_args",
                "node_rank",
                "num_accelerators",
                "ssh_port",
            },
            {
                "no_python",
                "no_local_rank",
                "module",
                "force_multi",
                "autotuning",
                "elastic_training",
                "bind_cores_to_rank",
            },
        )
        ng = opts.get("num_gpus", opts.get("num_accelerators"))
        if isinstance(ng, str):
            L.put("procs_per_node", to_int(ng), where)
        nn = opts.get("num_nodes")
        if isinstance(nn, str):
            L.put("num_nodes", to_int(nn), where)
        inc = opts.get("include")
        if isinstance(inc, str):
            hosts = [h for h in inc.split("@") if h]
            L.put("num_nodes", len(hosts), where, override="num_nodes" not in opts)
            counts = {len(h.split(":", 1)[1].split(",")) if ":" in h else None for h in hosts}
            if len(counts) == 1 and None not in counts:
                L.put("procs_per_node", counts.pop(), where, override="num_gpus" not in opts)
        hf = opts.get("hostfile")
        if isinstance(hf, str):
            self._hostfile(
                hf,
                where,
                explicit_nodes="num_nodes" in opts or isinstance(inc, str),
                explicit_slots="num_gpus" in opts,
            )
        elif "num_nodes" not in opts and not isinstance(inc, str):
            L.put("num_nodes", 1, where, override=False)  # no hostfile: runs on the local node only
        L.put("distributed_launcher", True, where)
        if i >= len(toks):
            return False
        if opts.get("module") is True:
            return self._entry(None, toks[i + 1 :], where, module=toks[i])
        if opts.get("no_python") is True:
            return self._launch(toks[i:], where, shell)
        return self._entry(toks[i], toks[i + 1 :], where)

    def _hostfile(self, path: str, where: str, explicit_nodes: bool, explicit_slots: bool) -> None:
        L = self.launch
        rel = self.wd.rel(path, L.base)
        text = self.wd.read_text(rel) if rel else None
        if text is None:
            L.notes.append(f"hostfile {path} not readable in the workdir")
            return
        L.files.append(rel)  # type: ignore[arg-type]
        hosts: list[tuple[int, int | None]] = []
        for n, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.search(r"slots\s*=\s*(\d+)", line) or re.search(r":(\d+)\s*$", line)
            hosts.append((n, int(m.group(1)) if m else None))
        if not hosts:
            return
        ev = [f"{rel}:{n}" for n, _ in hosts]
        if not explicit_nodes:
            L.put("num_nodes", len(hosts), ev)
        slots = {s for _, s in hosts}
        if not explicit_slots and len(slots) == 1 and None not in slots:
            L.put("procs_per_node", slots.pop(), ev)
        elif not explicit_slots and None not in slots:
            L.put("num_procs", sum(s for _, s in hosts if s), ev)

    def _accelerate(self, toks: list[str], i: int, where: str, shell: Shell) -> bool:
        L = self.launch
        if not L.chain or L.chain[-1] != "accelerate":
            L.chain.append("accelerate")
        opts, i = scan_options(
            toks,
            i,
            {
                "num_processes",
                "num_machines",
                "config_file",
                "mixed_precision",
                "machine_rank",
                "main_process_ip",
                "main_process_port",
                "gpu_ids",
                "zero_stage",
                "gradient_accumulation_steps",
                "deepspeed_config_file",
                "dynamo_backend",
                "num_cpu_threads_per_process",
                "fsdp_sharding_strategy",
                "deepspeed_hostfile",
                "tp_size",
            },
            {
                "multi_gpu",
                "use_deepspeed",
                "use_fsdp",
                "cpu",
                "tpu",
                "use_cpu",
                "module",
                "m",
                "no_python",
                "debug",
                "quiet",
                "same_network",
            },
        )
        cf = opts.get("config_file")
        if isinstance(cf, str):
            self._accelerate_config(cf, where)
        for k, key in (("num_machines", "num_nodes"), ("num_processes", "num_procs")):
            if isinstance(opts.get(k), str):
                L.put(key, to_int(opts[k]), where)
        if isinstance(opts.get("mixed_precision"), str):
            L.put("mixed_precision", opts["mixed_precision"], where)
        if opts.get("use_deepspeed") is True:
            L.put("distributed_type", "DEEPSPEED", where)
        if opts.get("use_fsdp") is True:
            L.put("distributed_type", "FSDP", where)
        if opts.get("multi_gpu") is True and L.get("distributed_type") is None:
            L.put("distributed_type", "MULTI_GPU", where)
        if opts.get("cpu") is True or opts.get("use_cpu") is True:
            L.put("cpu_only", True, where)
        for k, key in (("zero_stage", "zero_stage"), ("gradient_accumulation_steps", "grad_accum")):
            if isinstance(opts.get(k), str):
                L.put(key, to_int(opts[k]), where)
        if isinstance(opts.get("deepspeed_config_file"), str):
            L.put("ds_config", self.wd.rel(opts["deepspeed_config_file"], L.base), where)
        if L.get("num_procs") is not None and L.get("num_nodes") is None:
            L.put("num_nodes", 1, where)
        L.put("distributed_launcher", True, where)
        if i >= len(toks):
            return False
        if opts.get("module") is True or opts.get("m") is True:
            return self._entry(None, toks[i + 1 :], where, module=toks[i])
        if opts.get("no_python") is True:
            return self._launch(toks[i:], where, shell)
        return self._entry(toks[i], toks[i + 1 :], where)

    def _accelerate_config(self, path: str, where: str) -> None:
        from schedmate.codeprof.configs import ConfigError, key_lines, parse_config

        L = self.launch
        rel = self.wd.rel(path, L.base)
        text = self.wd.read_text(rel) if rel else None
        if text is None:
            L.notes.append(f"accelerate config {path} not readable in the workdir")
            return
        L.files.append(rel)  # type: ignore[arg-type]
        try:
            cfg = parse_config(rel, text)  # type: ignore[arg-type]
        except ConfigError as e:
            L.notes.append(str(e))
            return
        L.put("acc_config", rel, where)
        lines = key_lines(
            text,
            [
                "num_processes",
                "num_machines",
                "mixed_precision",
                "distributed_type",
                "deepspeed_config.zero_stage",
                "deepspeed_config.gradient_accumulation_steps",
                "deepspeed_config.deepspeed_config_file",
                "use_cpu",
            ],
        )

        def ev(k: str) -> str:
            return f"{rel}:{lines[k]}" if k in lines else str(rel)

        for k, key in (("num_processes", "num_procs"), ("num_machines", "num_nodes")):
            if k in cfg:
                L.put(key, to_int(cfg[k]), ev(k))
        if cfg.get("mixed_precision") is not None:
            L.put("mixed_precision", str(cfg["mixed_precision"]), ev("mixed_precision"))
        if cfg.get("distributed_type"):
            L.put("distributed_type", str(cfg["distributed_type"]).upper(), ev("distributed_type"))
        if cfg.get("use_cpu") is True:
            L.put("cpu_only", True, ev("use_cpu"))
        ds = cfg.get("deepspeed_config") or {}
        if isinstance(ds, dict):
            if "zero_stage" in ds:
                L.put("zero_stage", to_int(ds["zero_stage"]), ev("deepspeed_config.zero_stage"))
            if "gradient_accumulation_steps" in ds:
                L.put(
                    "grad_accum",
                    to_int(ds["gradient_accumulation_steps"]),
                    ev("deepspeed_config.gradient_accumulation_steps"),
                )
            if ds.get("deepspeed_config_file"):
                L.put(
                    "ds_config",
                    self.wd.rel(str(ds["deepspeed_config_file"]), L.base),
                    ev("deepspeed_config.deepspeed_config_file"),
                )
        fsdp = cfg.get("fsdp_config")
        if isinstance(fsdp, dict) and fsdp:
            L.put("fsdp_config", fsdp, str(rel))

    def _slurm_opts(self, opts: dict[str, str | bool], where: str | dict[str, str]) -> None:
        L = self.launch
        for k, v in opts.items():
            key = _SBATCH.get(k)
            if key is None or not isinstance(v, str):
                continue
            w = where[k] if isinstance(where, dict) else where
            if key == "gres":
                m = re.search(r"gpu(?::[\w-]+)?:(\d+)", v)
                if m:
                    L.put("gpus_per_node", int(m.group(1)), w)
            elif key == "gpus":
                n = to_int(v.rsplit(":", 1)[-1])
                L.put("slurm_total_gpus", n, w)
            elif key == "gpus_per_node":
                L.put("gpus_per_node", to_int(v.rsplit(":", 1)[-1]), w)
            else:
                L.put(key, to_int(v), w)

    def _srun(self, toks: list[str], where: str, shell: Shell) -> bool:
        L = self.launch
        L.chain.append("srun")
        opts, i = scan_options(
            toks,
            1,
            {
                "N",
                "nodes",
                "n",
                "ntasks",
                "ntasks_per_node",
                "gpus_per_node",
                "gres",
                "c",
                "cpus_per_task",
                "gpus",
                "G",
                "p",
                "partition",
                "t",
                "time",
                "J",
                "job_name",
                "mem",
                "A",
                "account",
                "o",
                "output",
                "e",
                "error",
                "gpus_per_task",
                "mpi",
                "cpu_bind",
                "export",
                "container_image",
                "container_mounts",
                "qos",
                "w",
                "nodelist",
                "x",
                "exclude",
                "constraint",
                "C",
            },
            {
                "exclusive",
                "l",
                "label",
                "u",
                "unbuffered",
                "overlap",
                "kill_on_bad_exit",
                "K",
                "no_container_mount_home",
            },
        )
        self._slurm_opts(opts, where)
        # srun starts one task per slot; a distributed launcher inside starts its own workers
        rest = toks[i:]
        if (
            L.get("num_procs") is not None
            and L.get("num_nodes") is not None
            and L.get("procs_per_node") is None
        ):
            n, nn = L.get("num_procs"), L.get("num_nodes")
            if n and nn and n % nn == 0:
                L.put("procs_per_node", n // nn, L.settings["num_procs"].where)
        if (
            rest
            and PurePosixPath(rest[0]).name in {"torchrun", "deepspeed", "accelerate"} | {"bash", "sh"}
            or (
                len(rest) > 2
                and PYTHONS.match(PurePosixPath(rest[0]).name)
                and rest[1] == "-m"
                and rest[2].startswith(("torch.distributed", "accelerate"))
            )
        ):
            # the inner launcher decides processes per node; srun's per-node task count is 1 per node
            L.settings.pop("procs_per_node", None)
            L.settings.pop("num_procs", None)
        L.put("distributed_launcher", True, where)
        return self._launch(rest, where, shell) if rest else False

    def _mpirun(self, toks: list[str], where: str, shell: Shell) -> bool:
        L = self.launch
        L.chain.append(PurePosixPath(toks[0]).name)
        opts, i = scan_options(
            toks,
            1,
            {
                "np",
                "n",
                "H",
                "host",
                "hostfile",
                "machinefile",
                "npernode",
                "N",
                "map_by",
                "bind_to",
                "x",
                "rank_by",
                "ppn",
                "f",
                "wdir",
            },
            {"allow_run_as_root", "oversubscribe", "tag_output", "display_map", "report_bindings", "verbose"},
            two_valued={"mca", "gmca"},
        )
        n = opts.get("np", opts.get("n"))
        if isinstance(n, str):
            L.put("num_procs", to_int(n), where)
        hosts = opts.get("H", opts.get("host"))
        if isinstance(hosts, str):
            parts = [h for h in hosts.split(",") if h]
            L.put("num_nodes", len(parts), where)
            counts = {to_int(h.split(":", 1)[1]) if ":" in h else None for h in parts}
            if len(counts) == 1 and None not in counts:
                L.put("procs_per_node", counts.pop(), where)
        hf = opts.get("hostfile", opts.get("machinefile", opts.get("f")))
        if isinstance(hf, str):
            self._hostfile(hf, where, explicit_nodes=isinstance(hosts, str), explicit_slots=False)
        ppn = opts.get("npernode", opts.get("N", opts.get("ppn")))
        mb = opts.get("map_by")
        if isinstance(mb, str):
            m = re.match(r"ppr:(\d+):node", mb)
            ppn = m.group(1) if m else ppn
        if isinstance(ppn, str):
            L.put("procs_per_node", to_int(ppn), where)
        if L.get("num_nodes") is None and L.get("num_procs") and L.get("procs_per_node"):
            np_, pp = L.get("num_procs"), L.get("procs_per_node")
            if np_ % pp == 0:
                L.put("num_nodes", np_ // pp, where)
        L.put("distributed_launcher", True, where)
        return self._launch(toks[i:], where, shell) if i < len(toks) else False

    def _script(self, toks: list[str], where: str, shell: Shell) -> bool:
        L = self.launch
        rel = self.wd.rel(toks[0], L.base)
        text = self.wd.read_text(rel) if rel else None
        if text is None:
            raise LaunchError(
                f"wrapper script {toks[0]} is not readable inside the workdir "
                f"({self.wd.skipped.get(rel or toks[0], 'missing')})"
            )
        L.files.append(rel)  # type: ignore[arg-type]
        L.chain.append(f"sh:{rel}")
        sh = Shell(shell.vars, rel)  # type: ignore[arg-type]
        for k, a in enumerate(toks[1:], 1):
            sh.vars[str(k)] = a
        # #SBATCH directives first: they hold for the whole script
        sb_opts: dict[str, str | bool] = {}
        sb_where: dict[str, str] = {}
        for n, line in enumerate(text.splitlines(), 1):
            if line.startswith("#SBATCH"):
                try:
                    o, _ = scan_options(
                        shlex.split(line[7:]), 0, set(_SBATCH) | {"gres", "gpus"}, {"exclusive"}
                    )
                except ValueError:
                    continue
                for k in o:
                    sb_where[k] = f"{rel}:{n}"
                sb_opts.update(o)
        if sb_opts:
            L.chain.append("sbatch")
            self._slurm_opts(sb_opts, sb_where)
            nn = L.get("num_nodes")
            if nn:
                sh.vars.setdefault("SLURM_NNODES", str(nn))
                sh.vars.setdefault("SLURM_JOB_NUM_NODES", str(nn))
            gpn = L.get("gpus_per_node")
            if gpn:
                sh.vars.setdefault("SLURM_GPUS_PER_NODE", str(gpn))
            tpn = L.get("procs_per_node")
            if tpn:
                sh.vars.setdefault("SLURM_NTASKS_PER_NODE", str(tpn))
        lines = _logical_lines(text)
        launch_lines: list[tuple[int, list[str], set[str]]] = []
        for n, raw in lines:
            s = raw.strip()
            if not s or s.startswith("#"):
                continue
            if _ASSIGN.match(s):
                val0 = _ASSIGN.match(s).group(2).strip()  # type: ignore[union-attr]
                if val0.startswith("(") and val0.endswith(")"):  # bash array
                    try:
                        items = shlex.split(val0[1:-1], comments=True)
                    except ValueError:
                        items = []
                    name = _ASSIGN.match(s).group(1)  # type: ignore[union-attr]
                    sh.vars[name] = sh.expand(" ".join(shlex.quote(x) for x in items))
                    sh.where[name] = f"{rel}:{n}"
                    continue
                if val0.startswith(("$(", "`")) and not val0.startswith("$(("):
                    name = _ASSIGN.match(s).group(1)  # type: ignore[union-attr]
                    sh.vars[name] = UNKNOWN  # command substitution: never run
                    sh.where[name] = f"{rel}:{n}"
                    continue
                try:
                    parts = shlex.split(s, comments=True)
                except ValueError:
                    parts = []
                if parts and parts[0] in {"export", "local", "readonly", "declare"}:
                    parts = [p for p in parts[1:] if not p.startswith("-")]
                if parts and all(_ASSIGN.match(p) for p in parts):
                    for p in parts:
                        k, v = p.split("=", 1)
                        sh.vars[k] = sh.expand(v)
                        sh.where[k] = f"{rel}:{n}"
                    continue
            if s.startswith("cd "):
                try:
                    d = shlex.split(sh.expand(s[3:]))
                except ValueError:
                    d = []
                if d:
                    L.base = self.wd.rel(d[0], L.base) or L.base
                continue
            used: set[str] = set()
            expanded = sh.expand(re.sub(r'"(\$\{\w+\[[@*]\]\})"', r"\1", s), used)
            try:
                ltoks = shlex.split(expanded, comments=True)
            except ValueError:
                continue
            first = next((t for t in ltoks if not _ASSIGN.match(t) and t != "env"), "")
            name = PurePosixPath(first).name
            if (
                PYTHONS.match(name)
                or name in {"torchrun", "deepspeed", "accelerate", "srun", "mpirun", "mpiexec", "horovodrun"}
                or first.endswith(".py")
            ):
                launch_lines.append((n, ltoks, used))
        if not launch_lines:
            L.notes.append(f"{rel}: no launch line found")
            return False

        def rank(item: tuple[int, list[str], set[str]]) -> tuple[int, int]:
            _, lt, _ = item
            dist = any(
                PurePosixPath(t).name in {"torchrun", "deepspeed", "accelerate", "srun", "mpirun"}
                or t.startswith("torch.distributed")
                for t in lt
            )
            train = any("train" in t or "pretrain" in t for t in lt if t.endswith(".py"))
            return (int(dist), int(train))

        n, ltoks, used = max(launch_lines, key=rank)
        var_lines = sorted({sh.where[v] for v in used if v in sh.where})
        ev = [f"{rel}:{n}", *var_lines]
        L.env.update({k: v for k, v in sh.vars.items() if not k.isdigit()})
        return self._segments(ltoks, ev[0] if len(ev) == 1 else "|".join(ev), sh)


def parse_launch(command: str, wd: Workdir, env: dict[str, str] | None = None) -> Launch:
    """Parse `command` as run from the workdir root. Raises LaunchError with a clear message."""
    p = _Parser(wd, env or {})
    launch = p.parse_command(command)
    # multi-place evidence strings ("a|b") become lists
    for s in launch.settings.values():
        s.where = [w for ws in s.where for w in ws.split("|")]
    _combine(launch)
    return launch


def _combine(L: Launch) -> None:
    """Fill num_procs / num_nodes / procs_per_node from each other when two of them are known."""
    nn, pp, tot = L.get("num_nodes"), L.get("procs_per_node"), L.get("num_procs")
    if tot is None and nn is not None and pp is not None:
        L.put("num_procs", nn * pp, L.settings["num_nodes"].where + L.settings["procs_per_node"].where)
    elif pp is None and nn and tot is not None and tot % nn == 0:
        L.put("procs_per_node", tot // nn, L.settings["num_nodes"].where + L.settings["num_procs"].where)
    elif nn is None and pp and tot is not None and tot % pp == 0:
        L.put("num_nodes", tot // pp, L.settings["num_procs"].where + L.settings["procs_per_node"].where)

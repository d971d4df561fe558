"""`accelerate launch`: command-line options over its config file (num_processes, machines, precision)."""

from __future__ import annotations

from schedmate.codeprof.launch.context import Ctx, family
from schedmate.codeprof.launch.model import scan_options, to_int
from schedmate.codeprof.launch.python import entry

_VALUED = {"num_processes", "num_machines", "config_file", "mixed_precision", "machine_rank", "main_process_ip",
           "main_process_port", "gpu_ids", "zero_stage", "gradient_accumulation_steps", "deepspeed_config_file",
           "dynamo_backend", "num_cpu_threads_per_process", "fsdp_sharding_strategy", "deepspeed_hostfile",
           "tp_size", "rdzv_backend", "deepspeed_multinode_launcher", "offload_optimizer_device",
           "offload_param_device", "fsdp_state_dict_type"}
_FLAGS = {"multi_gpu", "use_deepspeed", "use_fsdp", "cpu", "tpu", "use_cpu", "module", "m", "no_python", "debug",
          "quiet", "same_network"}


@family("accelerate")
def accelerate(ctx: Ctx, toks: list[str]) -> bool:
    if len(toks) < 2 or toks[1] != "launch":
        return False
    L, where = ctx.launch, ctx.where
    if not L.chain or L.chain[-1] != "accelerate":
        L.chain.append("accelerate")
    opts, i = scan_options(toks, 2, _VALUED, _FLAGS)
    cf = opts.get("config_file")
    if isinstance(cf, str):
        accelerate_config(ctx, cf, where)
    for k, key in (("num_machines", "num_nodes"), ("num_processes", "num_procs")):
        if isinstance(opts.get(k), str):
            L.put(key, to_int(opts[k]), where, raw=opts[k])
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
        L.put("ds_config", ctx.wd.rel(opts["deepspeed_config_file"], L.base), where)
    if L.get("num_procs") is not None and L.get("num_nodes") is None:
        L.put("num_nodes", 1, where)
    cvd = [d for d in (L.env.get("CUDA_VISIBLE_DEVICES") or "").split(",") if d.strip()]
    if L.get("num_procs") is None and not isinstance(cf, str) and L.get("acc_config") is None \
            and len(cvd) == 1 and cvd[0].strip().isdigit():
        # whatever the machine's default config says, one visible GPU is one process on one GPU
        L.put("num_procs", 1, ["env:CUDA_VISIBLE_DEVICES"])
        L.put("num_nodes", 1, where, override=False)
    if L.get("num_procs") is None and "num_procs" not in L.unknown and not isinstance(cf, str) \
            and L.get("acc_config") is None:
        # no --num_processes and no config file: accelerate's default config on the machine decides
        L.unknown["num_procs"] = ["accelerate launch without --num_processes or --config_file"]
    L.put("distributed_launcher", True, where)
    if i >= len(toks):
        return False
    if opts.get("module") is True or opts.get("m") is True:
        return entry(ctx, None, toks[i + 1 :], module=toks[i])
    if opts.get("no_python") is True:
        return ctx.dispatch(toks[i:])
    return entry(ctx, toks[i], toks[i + 1 :])


def accelerate_config(ctx: Ctx, path: str, where: list[str] | str) -> None:
    from schedmate.codeprof.configs import ConfigError, key_lines, parse_config

    L = ctx.launch
    rel = ctx.wd.rel(path, L.base)
    text = ctx.wd.read_text(rel) if rel else None
    if text is None:
        L.notes.append(f"accelerate config {path} not readable in the workdir")
        return
    L.files.append(rel)  # type: ignore[arg-type]
    try:
        cfg = parse_config(rel, text)  # type: ignore[arg-type]
    except ConfigError as e:
        L.notes.append(str(e))
        return
    L.put("acc_config", rel, where, override=False)
    keys = ["num_processes", "num_machines", "mixed_precision", "distributed_type", "deepspeed_config.zero_stage",
            "deepspeed_config.gradient_accumulation_steps", "deepspeed_config.deepspeed_config_file", "use_cpu"]
    lines = key_lines(text, keys)

    def ev(k: str) -> str:
        return f"{rel}:{lines[k]}" if k in lines else str(rel)

    for k, key in (("num_processes", "num_procs"), ("num_machines", "num_nodes")):
        if k in cfg:
            L.put(key, to_int(cfg[k]), ev(k), override=False)
    if cfg.get("mixed_precision") is not None:
        L.put("mixed_precision", str(cfg["mixed_precision"]), ev("mixed_precision"), override=False)
    if cfg.get("distributed_type"):
        L.put("distributed_type", str(cfg["distributed_type"]).upper(), ev("distributed_type"), override=False)
    if cfg.get("use_cpu") is True:
        L.put("cpu_only", True, ev("use_cpu"), override=False)
    ds = cfg.get("deepspeed_config") or {}
    if isinstance(ds, dict):
        if "zero_stage" in ds:
            L.put("zero_stage", to_int(ds["zero_stage"]), ev("deepspeed_config.zero_stage"), override=False)
        if "gradient_accumulation_steps" in ds:
            L.put("grad_accum", to_int(ds["gradient_accumulation_steps"]),
                  ev("deepspeed_config.gradient_accumulation_steps"), override=False)
        if ds.get("deepspeed_config_file"):
            L.put("ds_config", ctx.wd.rel(str(ds["deepspeed_config_file"]), L.base),
                  ev("deepspeed_config.deepspeed_config_file"), override=False)
    fsdp = cfg.get("fsdp_config")
    if isinstance(fsdp, dict) and fsdp:
        L.put("fsdp_config", fsdp, str(rel), override=False)

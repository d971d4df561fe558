"""What happens in a log: NCCL chatter and warnings, the failure lines of each failure kind, benign look-alikes,
and `make_log`, which writes one whole log and its label."""

from __future__ import annotations

import random

from .frameworks import HF, Custom, DeepSpeed, Fairseq, Megatron, MMEngine, NanoGPT, Titan
from .writer import Framework, Writer, iso


def nccl_chatter(w: Writer, rng: random.Random, n: int) -> None:
    for _ in range(n):
        r = rng.randrange(w.nranks)
        w.line(f"node{rng.randint(1, 32):03d}:{rng.randint(1000, 9999)}:{rng.randint(1000, 9999)} [{r}] NCCL INFO "
               + rng.choice(["Channel 00/02 :    0   1   2   3   4   5   6   7",
                             "NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",
                             f"comm 0x55d1 rank {r} nranks 8 cudaDev {r} busId 1b000 - Init COMPLETE",
                             "Connected all rings", "Using network IB",
                             "NCCL_SOCKET_IFNAME set by environment to ib0",
                             "ncclCommInitRank comm 0x5 rank 3 nranks 8 - error handler installed"]), rank=r)


def warnings_noise(w: Writer, rng: random.Random) -> None:
    r = rng.randrange(w.nranks)
    w.line(rng.choice([
        "/usr/lib/python3/site-packages/torch/utils/checkpoint.py:91: UserWarning: None of the inputs have "
        "requires_grad=True. Gradients will be None",
        "UserWarning: Some weights of the checkpoint were not used when initializing: error_msgs=[] (expected)",
        "FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated.",
        "[W Utils.hpp:133] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated (function "
        "getCvarInt)",
    ]), rank=r)


# ----------------------------------------------------------------------------------------- scenarios
def failure_lines(kind: str, rng: random.Random, w: Writer, fw: Framework, step: int) -> tuple[str, int]:
    """Write the failure; return (category, onset line)."""
    r = rng.randrange(w.nranks)
    ts = fw.ts()
    if kind == "oom_cuda":
        on = w.line("Traceback (most recent call last):", r)
        w.line('  File "/app/train.py", line 212, in <module>', r)
        w.line("    loss.backward()", r)
        w.line(f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {rng.choice([1.5, 2.0, 4.0])} GiB. "
               f"GPU {r} has a total capacity of 79.15 GiB of which 1.2 GiB is free.", r)
        w.line(f"[rank{r}]: ChildFailedError: train.py FAILED", 0) if rng.random() < 0.5 else None
        return "oom", on
    if kind == "oom_host":
        on = w.line(f"Out of memory: Killed process {rng.randint(1000, 99999)} (python) total-vm:912345kB, "
                    "anon-rss:812345kB", r)
        w.line("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.0. Some of your processes may have "
               "been killed by the cgroup out-of-memory handler.")
        return "oom", on
    if kind == "nccl_watchdog":
        on = w.line(f"[E ProcessGroupNCCL.cpp:563] [Rank {r}] Watchdog caught collective operation timeout: "
                    f"WorkNCCL(SeqNum={step * 4}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
                    "for 600321 milliseconds before timing out.", r)
        w.line(f"[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank {r}] Timeout at NCCL work: {step * 4}, last enqueued "
               "NCCL work: 1, last completed NCCL work: 0.", r)
        w.line("terminate called after throwing an instance of 'c10::DistBackendError'", r)
        return "nccl", on
    if kind == "nccl_system":
        on = w.line("Traceback (most recent call last):", r)
        w.line('  File "/app/train.py", line 88, in train_step', r)
        w.line("    dist.all_reduce(t)", r)
        w.line("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
               "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL "
               "version 2.20.5", r)
        return "nccl", on
    if kind == "nccl_reset":
        on = w.line(f"RuntimeError: [{r}] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via "
                    "c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer", r)
        return "nccl", on
    if kind == "dataloader_killed":
        on = w.line("Traceback (most recent call last):", r)
        w.line('  File "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py", line 1133, in '
               "_try_get_data", r)
        w.line(f"RuntimeError: DataLoader worker (pid {rng.randint(1000, 99999)}) is killed by signal: Killed.", r)
        return "dataloader", on
    if kind == "dataloader_shm":
        on = w.line("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
                    "memory (shm).", r)
        w.line("Traceback (most recent call last):", r)
        w.line(f"RuntimeError: DataLoader worker (pid(s) {rng.randint(1000, 99999)}) exited unexpectedly", r)
        return "dataloader", on
    if kind == "segfault":
        on = w.line("Fatal Python error: Segmentation fault", r)
        w.line("", r)
        w.line("Thread 0x00007f3a (most recent call first):", r)
        w.line('  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1532 in _call_impl', r)
        w.line("Segmentation fault (core dumped)")
        return "segfault", on
    if kind == "segfault_elastic":
        on = w.line(f"Signal 11 (SIGSEGV) received by PID {rng.randint(1000, 99999)}", 0)
        w.line("torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -11) local_rank: 0", 0)
        return "segfault", on
    if kind == "node_xid":
        on = w.line(f"NVRM: Xid (PCI:0000:{rng.choice(['3b', '86', 'af'])}:00): 79, pid={rng.randint(1000, 9999)}, "
                    "GPU has fallen off the bus.", r)
        w.line("RuntimeError: CUDA error: unspecified launch failure", r)
        return "node", on
    if kind == "node_ecc":
        on = w.line("Traceback (most recent call last):", r)
        w.line('  File "/app/train.py", line 120, in <module>', r)
        w.line("RuntimeError: CUDA error: uncorrectable ECC error encountered", r)
        return "node", on
    if kind == "node_ib":
        on = w.line(f"node017:1234:5678 [{r}] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
                    "10.0.3.17<49152> with error 12, opcode 0, len 0, vendor err 129 (Recv)", r)
        w.line(f"node017:1234:5678 [{r}] NCCL INFO transport/net.cc:1121 -> 6", r)
        return "node", on
    if kind == "preempt_slurm":
        on = w.line(f"slurmstepd: error: *** JOB {rng.randint(100000, 999999)} ON node{rng.randint(1, 64):03d} "
                    f"CANCELLED AT {iso(w.t, sep='T', ms=False)} DUE TO TIME LIMIT ***")
        return "preempted", on
    if kind == "preempt_sigterm":
        on = w.line("WARNING:torch.distributed.elastic.agent.server.api:Received Signals.SIGTERM death signal, "
                    "shutting down workers")
        w.line(f"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process {rng.randint(1000, 9999)} "
               "closing signal SIGTERM")
        return "preempted", on
    if kind == "user_key":
        on = w.line("Traceback (most recent call last):", r)
        w.line('  File "/app/train.py", line 301, in <module>', r)
        w.line("    batch = collate(samples)", r)
        w.line('  File "/app/data.py", line 45, in collate', r)
        w.line("    labels = [s['labels'] for s in samples]", r)
        w.line("KeyError: 'labels'", r)
        return "user_code", on
    if kind == "nan_line":
        on = w.line(ts + "FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. "
                    "Try lowering the learning rate.", r)
        return "nan", on
    if kind == "other_abort":
        on = w.line("terminate called after throwing an instance of 'std::runtime_error'", r)
        w.line("  what():  shard index out of range in packed dataset", r)
        w.line("Aborted (core dumped)", r)
        return "other", on
    if kind == "novel_thermal":
        on = w.line(f"[health-check] GPU {r} thermal shutdown: device crashed at {rng.randint(95, 99)}C", r)
        return "node", on
    if kind == "novel_shard":
        on = w.line(f"loader: shard /data/part-{rng.randint(0, 9999):04d}.arrow is corrupt (checksum mismatch), "
                    "cannot continue", r)
        return "dataloader", on
    if kind == "novel_revoked":
        on = w.line("job controller: allocation revoked by scheduler, job lost its nodes")
        return "preempted", on
    if kind == "novel_heartbeat":
        on = w.line(f"param-sync: lost heartbeat from worker {r}, aborting all-reduce", r)
        return "nccl", on
    raise ValueError(kind)


FAIL_KINDS = ["oom_cuda", "oom_host", "nccl_watchdog", "nccl_system", "nccl_reset", "dataloader_killed",
              "dataloader_shm", "segfault", "segfault_elastic", "node_xid", "node_ecc", "node_ib", "preempt_slurm",
              "preempt_sigterm", "user_key", "nan_line", "other_abort"]
NOVEL_FAIL = ["novel_thermal", "novel_shard", "novel_revoked", "novel_heartbeat"]
SPECIAL = ["novel_progress", "user_import", "user_argparse", "nan_loss", "nan_spike", "hang", "hang2", "hang3"]
BENIGN = ["healthy_done", "healthy_running", "benign_fp16", "benign_warning", "benign_retry", "benign_caught_tb",
          "benign_apex"]


def make_log(idx: int, fw_cls: type[Framework], scenario: str, rng: random.Random) -> tuple[str, dict]:
    prefix = rng.choice(["", "", "rank", "srun", "mpi"])
    if scenario.startswith("hang") and not fw_cls.timestamps:
        fw_cls = rng.choice([Megatron, DeepSpeed, MMEngine, Fairseq, Titan, Custom])
    if scenario == "nan_spike" and fw_cls.per_epoch:
        fw_cls = rng.choice([Megatron, NanoGPT, HF, Titan, Custom])
    w = Writer(rng=rng, prefix=prefix, ansi=rng.random() < 0.3, t=1714560000 + rng.randint(0, 10**7))
    it = round(rng.uniform(0.2, 3.0), 3)
    epochs = rng.randint(2, 5)
    per_epoch_total = rng.choice([200, 400, 500, 1000])
    total = per_epoch_total if fw_cls.per_epoch else rng.choice([1000, 2000, 5000, 20000])
    fw = fw_cls(rng, w, total, it, epochs)
    grand_total = total * epochs if fw.per_epoch else total

    if scenario == "user_argparse":
        w.line("usage: train.py [-h] [--lr LR] [--batch-size BATCH_SIZE] [--epochs EPOCHS]")
        on = 1
        w.line("train.py: error: unrecognized arguments: --lr_schedule cosine")
        return w.text(), dict(framework=fw.name, category="user_code", failed=True, onset_line=on, total_steps=None,
                              current_step=None, iteration_time_s=None, epoch=None, total_epochs=None, finished=False)
    if fw.name != "novel":
        nccl_chatter(w, rng, rng.randint(3, 12))
    fw.header()
    if scenario == "user_import":
        r = rng.randrange(w.nranks)
        on = w.line("Traceback (most recent call last):", r)
        w.line('  File "/app/train.py", line 7, in <module>', r)
        w.line("    from flash_attn import flash_attn_func", r)
        w.line("ModuleNotFoundError: No module named 'flash_attn'", r)
        return w.text(), dict(framework=fw.name, category="user_code", failed=True, onset_line=on,
                              total_steps=None, current_step=None, iteration_time_s=None, epoch=None,
                              total_epochs=fw.epochs if fw.name in ("hf", "lightning", "mmengine", "timm") else None,
                              finished=False)
    # how far the run gets
    if scenario == "healthy_done":
        end = grand_total
    else:
        end = rng.randint(max(fw.log_every * 6, grand_total // 10), max(fw.log_every * 8, grand_total * 3 // 4))
        end -= end % fw.log_every
        end = min(end, grand_total - fw.log_every)
    if scenario == "nan_spike":
        end = min(grand_total - fw.log_every, max(end, 40 * fw.log_every))
    eval_every = fw.log_every * rng.choice([10, 20])
    if fw.per_epoch:
        eval_every = total
    nan_from = end - fw.log_every * 4 if scenario in ("nan_loss", "nan_spike") else None
    onset = None
    last_line = 0
    category, failed = "none", False
    benign_at = rng.randint(fw.log_every * 2, max(fw.log_every * 3, end // 2))
    benign_at -= benign_at % fw.log_every
    step = 0
    last_progress = None
    for step in range(fw.log_every, end + 1, fw.log_every):
        w.t += it * fw.log_every * rng.uniform(0.97, 1.03)
        bad = nan_from is not None and step > nan_from
        loss = fw.next_loss(nan=bad and scenario == "nan_loss", spike=bad and scenario == "nan_spike")
        fw.last_step = step
        last_line = fw.progress(step, loss)
        last_progress = step
        if bad and onset is None:
            onset, category, failed = last_line, "nan", True
            if fw.name == "hf":  # the loss is on the dict line, which is the one returned
                pass
        if rng.random() < 0.08:
            warnings_noise(w, rng)
        if rng.random() < 0.05:
            nccl_chatter(w, rng, 1)
        if step == benign_at:
            benign_noise(scenario, w, rng, fw, step)
        if step % eval_every == 0 and step < end:
            w.t += rng.uniform(20, 60)
            fw.eval()
            if rng.random() < 0.6:
                w.t += rng.uniform(10, 30)
                fw.ckpt(step)
    if scenario == "healthy_done":
        fw.done()
    if scenario in FAIL_KINDS + NOVEL_FAIL:
        w.t += it * rng.uniform(0.2, 1.0)
        if scenario == "nccl_watchdog":
            w.t += 600
        category, onset = failure_lines(scenario, rng, w, fw, step)
        failed = True
        if rng.random() < 0.5:
            w.line("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: "
                   f"{rng.randint(1000, 99999)}) of binary: /usr/bin/python3")
    if scenario.startswith("hang"):
        # no progress any more; periodic monitor lines with timestamps. Onset: the line after the last progress.
        onset = last_line + 1
        category, failed = "hang", True
        gap = {"hang": 300.0, "hang2": 600.0, "hang3": 900.0}[scenario]
        for _ in range(rng.randint(4, 8)):
            w.t += max(gap, it * 40)
            w.line(fw.ts() + f"system-monitor gpu_util=0% mem_used={rng.uniform(30, 70):.1f}GiB "
                   f"host_load={rng.uniform(0.1, 1.0):.2f}")
    label = dict(framework=fw.name, category=category, failed=failed, onset_line=onset,
                 total_steps=total, current_step=fw.label_step(last_progress) if last_progress else None,
                 iteration_time_s=it, epoch=fw.label_epoch(),
                 total_epochs=epochs if fw.name in ("hf", "lightning", "mmengine", "timm") else None,
                 finished=scenario == "healthy_done")
    if fw.name in ("deepspeed", "nanogpt", "novel"):
        label["total_steps"] = None  # these frameworks never print the total
    return w.text(), label


def benign_noise(scenario: str, w: Writer, rng: random.Random, fw: Framework, step: int) -> None:
    r = rng.randrange(w.nranks)
    if scenario == "benign_fp16":
        for _ in range(rng.randint(1, 3)):
            w.line(f"[deepspeed] OVERFLOW! Rank {r} Skipping step. Attempted loss scale: 65536, reducing to 32768", r)
    elif scenario == "benign_apex":
        w.line("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0", r)
    elif scenario == "benign_warning":
        w.line("/app/model.py:88: UserWarning: load_state_dict returned error_msgs=['size mismatch ignored'] "
               "(strict=False)", r)
        w.line("  warnings.warn(", r)
    elif scenario == "benign_retry":
        w.line("RuntimeError: Connection reset by peer while reading from store, retrying (attempt 1/5)", r)
        w.line("store client reconnected after 1 retry", r)
    elif scenario == "benign_caught_tb":
        w.line("Traceback (most recent call last):", r)
        w.line('  File "/app/data.py", line 77, in __getitem__', r)
        w.line("    img = decode(path)", r)
        w.line("PIL.UnidentifiedImageError: cannot identify image file '/data/img_0042.jpg'", r)
        w.line("skipping corrupt sample 42 and continuing", r)

"""Generate the labelled log dataset (seeded, deterministic): `python eval/datasets/logs/generate.py`.

Every log is written by this script in the *style* of a real framework's output (no text copied from a
project), with realistic noise: NCCL INFO chatter, warnings, interleaved rank prefixes, tqdm carriage
returns, ANSI colours, timestamps. Labels go to `labels.jsonl`, one object per log:

    file, framework, scenario, category, failed, onset_line (1-based, first line of the failure; for a hang
    the first line after the last progress line), total_steps, current_step (main counter at the end, as
    the framework prints it), epoch, total_epochs, iteration_time_s (the true mean time per step),
    lines, finished.
"""

from __future__ import annotations

import json
import math
import random
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261122

ANSI = {"green": "\x1b[32m", "yellow": "\x1b[33m", "red": "\x1b[31m", "blue": "\x1b[34m", "reset": "\x1b[0m"}


@dataclass
class Writer:
    rng: random.Random
    prefix: str  # "", "rank", "srun", "mpi"
    ansi: bool
    t: float
    nranks: int = 8
    parts: list[str] = field(default_factory=list)
    n: int = 0

    def _pfx(self, rank: int) -> str:
        if self.prefix == "rank":
            return f"[rank{rank}]:"
        if self.prefix == "srun":
            return f"{rank}: "
        if self.prefix == "mpi":
            return f"[1,{rank}]<stdout>:"
        return ""

    def line(self, text: str, rank: int = 0) -> int:
        self.parts.append(self._pfx(rank) + text + "\n")
        self.n += 1
        return self.n

    def color(self, text: str, c: str) -> str:
        return f"{ANSI[c]}{text}{ANSI['reset']}" if self.ansi else text

    def text(self) -> str:
        return "".join(self.parts)


def iso(t: float, sep: str = " ", ms: bool = True, comma: bool = True) -> str:
    d = datetime.fromtimestamp(t, tz=UTC)
    s = d.strftime(f"%Y-%m-%d{sep}%H:%M:%S")
    if ms:
        s += ("," if comma else ".") + f"{int((t % 1) * 1000):03d}"
    return s


def tqdm_bar(step: int, total: int, elapsed: float, rate: float, prefix: str = "", extra: str = "") -> str:
    pct = int(100 * step / total)
    filled = int(10 * step / total)
    bar = "█" * filled + " " * (10 - filled)
    def mmss(x: float) -> str:
        x = int(x)
        return f"{x // 3600:d}:{x // 60 % 60:02d}:{x % 60:02d}" if x >= 3600 else f"{x // 60:02d}:{x % 60:02d}"
    remain = (total - step) / rate if rate > 0 else 0
    r = f"{rate:.2f}it/s" if rate >= 1 else f"{1 / rate:.2f}s/it"
    return f"{prefix}{pct:3d}%|{bar}| {step}/{total} [{mmss(elapsed)}<{mmss(remain)}, {r}{extra}]"


# ----------------------------------------------------------------------------------------- frameworks
class Framework:
    name = "base"
    per_epoch = False
    timestamps = False
    log_every = 10
    epoch_base = 0

    def __init__(self, rng: random.Random, w: Writer, total: int, it: float, epochs: int = 1) -> None:
        self.rng, self.w, self.total, self.it, self.epochs = rng, w, total, it, epochs
        self.loss = rng.uniform(6.0, 10.0)
        self.lr = rng.choice([1e-4, 3e-4, 6e-4, 2e-5, 5e-5])
        self.start_t = w.t
        self.epoch = epoch_base = self.epoch_base
        self.epoch = epoch_base
        self.last_step = 0

    def ts(self) -> str:
        return ""

    def next_loss(self, nan: bool = False, spike: bool = False) -> float:
        if nan:
            return float("nan")
        if spike:
            return self.rng.uniform(2e4, 9e4)
        self.loss = max(0.5, self.loss * self.rng.uniform(0.97, 1.0))
        return self.loss

    def header(self) -> None: ...

    def progress(self, step: int, loss: float) -> int:
        raise NotImplementedError

    def eval(self) -> None:
        self.w.line(self.ts() + "Running evaluation ...")

    def ckpt(self, step: int) -> None:
        self.w.line(self.ts() + f"Saving checkpoint to /ckpt/step_{step}")

    def done(self) -> None:
        self.w.line(self.ts() + "Training completed.")

    def label_step(self, step: int) -> int:
        return step

    def label_epoch(self) -> float | None:
        return None


def fmt_loss(x: float, spec: str = ".4f") -> str:
    return "nan" if math.isnan(x) else format(x, spec)


class HF(Framework):
    name = "hf"
    log_every = 10

    def header(self) -> None:
        w = self.w
        w.line("***** Running training *****")
        w.line(f"  Num examples = {self.total * 32:,}")
        w.line(f"  Num Epochs = {self.epochs}")
        w.line("  Instantaneous batch size per device = 8")
        w.line("  Total train batch size (w. parallel, distributed & accumulation) = 32")
        w.line("  Gradient Accumulation steps = 1")
        w.line(f"  Total optimization steps = {self.total:,}")

    def progress(self, step: int, loss: float) -> int:
        states = []
        for s in range(max(1, step - self.log_every + 1), step + 1):
            el = self.w.t - self.start_t
            rate = 1 / (self.it * self.rng.uniform(0.95, 1.05))
            states.append(tqdm_bar(s, self.total, el, rate))
        self.w.line("\r" + "\r".join(states[-3:]))
        ep = round(step / self.total * self.epochs, 2)
        self.epoch_f = ep
        return self.w.line(f"{{'loss': {fmt_loss(loss)}, 'grad_norm': {self.rng.uniform(0.5, 3):.4f}, "
                           f"'learning_rate': {self.lr:.2e}, 'epoch': {ep}}}")

    def eval(self) -> None:
        self.w.line("***** Running Evaluation *****")
        self.w.line("  Num examples = 2000")
        self.w.line("\r" + "\r".join(tqdm_bar(i, 63, i * 0.1, 9.8) for i in (20, 40, 63)))
        self.w.line(f"{{'eval_loss': {self.loss * 1.05:.4f}, 'eval_runtime': 6.41, 'epoch': {getattr(self, 'epoch_f', 0)}}}")

    def ckpt(self, step: int) -> None:
        self.w.line(f"Saving model checkpoint to /out/checkpoint-{step}")

    def done(self) -> None:
        self.w.line(f"{{'train_runtime': {self.w.t - self.start_t:.1f}, 'train_samples_per_second': 55.2, "
                    f"'train_loss': {self.loss:.4f}, 'epoch': {float(self.epochs)}}}")

    def label_epoch(self) -> float | None:
        return getattr(self, "epoch_f", None)


class Lightning(Framework):
    name = "lightning"
    per_epoch = True
    log_every = 25

    def header(self) -> None:
        w = self.w
        w.line("GPU available: True (cuda), used: True")
        w.line("LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]")
        w.line(f"hparams: {{'lr': {self.lr}, 'batch_size': 64, 'max_epochs': {self.epochs}}}")
        w.line("  | Name  | Type        | Params")
        w.line("----------------------------------------")
        w.line("0 | model | Transformer | 124 M")

    def progress(self, step: int, loss: float) -> int:
        ep = (step - 1) // self.total
        s = (step - 1) % self.total + 1
        self.epoch = ep
        self.s = s
        el = s * self.it
        rate = 1 / (self.it * self.rng.uniform(0.97, 1.03))
        extra = f", v_num=3, train_loss={fmt_loss(loss)}"
        bars = [tqdm_bar(x, self.total, el, rate, prefix=f"Epoch {ep}: ", extra=extra)
                for x in range(max(1, s - 2), s + 1)]
        return self.w.line("\r" + "\r".join(bars))

    def eval(self) -> None:
        self.w.line("\r" + "\r".join(tqdm_bar(i, 40, i * 0.05, 20.0, prefix="Validation DataLoader 0: ")
                                     for i in (10, 40)))

    def ckpt(self, step: int) -> None:
        self.w.line(f"Epoch {self.epoch}, global step {step}: 'val_loss' reached {self.loss:.3f} (best "
                    f"{self.loss:.3f}), saving model to '/ckpt/epoch={self.epoch}.ckpt' as top 1")

    def done(self) -> None:
        self.w.line(f"`Trainer.fit` stopped: `max_epochs={self.epochs}` reached.")

    def label_step(self, step: int) -> int:
        return (step - 1) % self.total + 1

    def label_epoch(self) -> float | None:
        return float(self.epoch)


class Megatron(Framework):
    name = "megatron"
    log_every = 10
    timestamps = True

    def ts(self) -> str:
        return f"[{iso(self.w.t)}] "

    def header(self) -> None:
        w = self.w
        w.line("using world size: 64, data-parallel size: 8, tensor-model-parallel size: 8")
        w.line(f"  train_iters ..................................... {self.total}")
        w.line(f"  lr .............................................. {self.lr}")
        w.line("> building GPT2BPETokenizer tokenizer ...")
        w.line("[after dataloaders are built] datetime: " + iso(self.w.t))
        w.line("training ...")

    def progress(self, step: int, loss: float) -> int:
        ms = self.it * 1000 * self.rng.uniform(0.97, 1.03)
        return self.w.line(
            f"{self.ts()} iteration {step:8d}/{self.total:8d} | consumed samples: {step * 512:12d} | elapsed time "
            f"per iteration (ms): {ms:.1f} | learning rate: {self.lr:.6E} | global batch size:   512 | lm loss: "
            f"{fmt_loss(loss, '.6E')} | loss scale: 1.0 | grad norm: {self.rng.uniform(0.5, 3):.3f} | number of "
            f"skipped iterations:   0 | number of nan iterations:   0 |")

    def eval(self) -> None:
        self.w.line("-" * 80)
        self.w.line(f" validation loss at iteration {self.last_step} | lm loss value: {self.loss:.6E} | lm loss PPL: "
                    "1.2E+03 |")
        self.w.line("-" * 80)

    def ckpt(self, step: int) -> None:
        self.w.line(f"saving checkpoint at iteration {step:8d} to /ckpt")
        self.w.line(f"  successfully saved checkpoint at iteration {step:8d} to /ckpt")

    def done(self) -> None:
        self.w.line(self.ts() + "after training is done")


class DeepSpeed(Framework):
    name = "deepspeed"
    log_every = 10
    timestamps = True

    def ts(self) -> str:
        return f"[{iso(self.w.t)}] [INFO] [logging.py:96:log_dist] "

    def header(self) -> None:
        w = self.w
        w.line(f"[{iso(self.w.t)}] [INFO] [config.py:1000:print] DeepSpeedEngine configuration:")
        w.line(f"[{iso(self.w.t)}] [INFO] [config.py:1004:print]   fp16_enabled ................. True")
        w.line(f"[{iso(self.w.t)}] [INFO] [config.py:1004:print]   train_batch_size ............. 256")

    def progress(self, step: int, loss: float) -> int:
        self.w.line(self.ts() + f"[Rank 0] step={step}, skipped={self.rng.randint(0, 3)}, lr=[{self.lr}], "
                                "mom=[(0.9, 0.999)]")
        sps = 256 / self.it
        self.w.line(f"[Rank 0] epoch=0/micro_step={step}/global_step={step}, RunningAvgSamplesPerSec="
                    f"{sps * self.rng.uniform(0.97, 1.03):.3f}, CurrSamplesPerSec={sps:.3f}, MemAllocated=10.2GB")
        return self.w.line(f"step {step} loss {fmt_loss(loss)}")

    def ckpt(self, step: int) -> None:
        self.w.line(self.ts() + f"[Rank 0] Saving model checkpoint: /ckpt/global_step{step}/mp_rank_00_model_states.pt")
        self.w.line(self.ts() + f"[Rank 0] Checkpoint global_step{step} is ready now!")


class MMEngine(Framework):
    name = "mmengine"
    per_epoch = True
    log_every = 50
    timestamps = True
    epoch_base = 1

    def ts(self) -> str:
        d = datetime.fromtimestamp(self.w.t, tz=UTC)
        return d.strftime("%Y/%m/%d %H:%M:%S") + " - mmengine - INFO - "

    def header(self) -> None:
        self.w.line(self.ts() + "Config:")
        self.w.line(f"train_cfg = dict(type='EpochBasedTrainLoop', max_epochs={self.epochs}, val_interval=1)")
        self.w.line(self.ts() + "Checkpoints will be saved to /work_dirs/exp.")

    def progress(self, step: int, loss: float) -> int:
        ep = (step - 1) // self.total + 1
        s = (step - 1) % self.total + 1
        self.epoch = ep
        it = self.it * self.rng.uniform(0.97, 1.03)
        eta = int((self.total * self.epochs - step) * self.it)
        return self.w.line(
            self.ts() + f"Epoch(train) [{ep}][{s:4d}/{self.total}]  lr: {self.lr:.4e}  eta: {eta // 3600}:"
            f"{eta // 60 % 60:02d}:{eta % 60:02d}  time: {it:.4f}  data_time: 0.0123  memory: 12001  grad_norm: "
            f"3.2  loss: {fmt_loss(loss)}  loss_cls: {fmt_loss(loss * 0.6)}")

    def eval(self) -> None:
        self.w.line(self.ts() + f"Epoch(val) [{self.epoch}][50/50]    accuracy/top1: 71.2300  data_time: 0.01")

    def ckpt(self, step: int) -> None:
        self.w.line(self.ts() + f"Saving checkpoint at {self.epoch} epochs")

    def label_step(self, step: int) -> int:
        return (step - 1) % self.total + 1

    def label_epoch(self) -> float | None:
        return float(self.epoch)


class Fairseq(Framework):
    name = "fairseq"
    log_every = 100
    timestamps = True
    epoch_base = 1

    def ts(self) -> str:
        return iso(self.w.t, ms=False) + " | INFO | fairseq.trainer | "

    def header(self) -> None:
        self.w.line(iso(self.w.t, ms=False) + f" | INFO | fairseq_cli.train | {{'max_update': {self.total}, "
                    "'max_epoch': 0, 'lr': [0.0005]}")
        self.w.line(iso(self.w.t, ms=False) + " | INFO | fairseq_cli.train | task: TranslationTask")

    def progress(self, step: int, loss: float) -> int:
        ups = 1 / (self.it * self.rng.uniform(0.97, 1.03))
        return self.w.line(
            iso(self.w.t, ms=False) + f" | INFO | train_inner | epoch 001:   {step:5d} / 3000 loss={fmt_loss(loss, '.3f')}, "
            f"nll_loss=3.1, ppl=8.57, wps={ups * 4000:.0f}, ups={ups:.2f}, wpb=4000, bsz=128, num_updates={step}, "
            f"lr={self.lr}, gnorm=1.2, train_wall=30, gb_free=10.2, wall={self.w.t - self.start_t:.0f}")

    def eval(self) -> None:
        self.w.line(iso(self.w.t, ms=False) + ' | INFO | fairseq_cli.train | begin validation on "valid" subset')
        self.w.line(iso(self.w.t, ms=False) + f" | INFO | valid | epoch 001 | valid on 'valid' subset | loss "
                    f"{self.loss:.3f} | nll_loss 3.2 | ppl 9.1 | wps 41000 | wpb 3900 | bsz 120 | num_updates "
                    f"{self.last_step}")

    def ckpt(self, step: int) -> None:
        self.w.line(iso(self.w.t, ms=False) + f" | INFO | fairseq.checkpoint_utils | Saved checkpoint "
                    f"/ckpt/checkpoint_1_{step}.pt (epoch 1 @ {step} updates, score 3.2) (writing took 4.1 seconds)")

    def done(self) -> None:
        self.w.line(iso(self.w.t, ms=False) + " | INFO | fairseq_cli.train | done training in 1234.5 seconds")

    def label_epoch(self) -> float | None:
        return 1.0


class Timm(Framework):
    name = "timm"
    per_epoch = True
    log_every = 50

    def header(self) -> None:
        self.w.line("Training with a single process on 8 devices.")
        self.w.line("Model resnet50 created, param count:25557032")
        self.w.line(f"Scheduled epochs: {self.epochs}. LR stepped per epoch.")

    def progress(self, step: int, loss: float) -> int:
        ep = (step - 1) // self.total
        s = (step - 1) % self.total
        self.epoch = ep
        it = self.it * self.rng.uniform(0.97, 1.03)
        return self.w.line(
            f"Train: {ep} [{s:4d}/{self.total} ({100 * s // self.total:3d}%)]  Loss: {fmt_loss(loss, '.3f')} "
            f"({fmt_loss(loss, '.3f')})  Time: {it:.3f}s, {256 / it:6.1f}/s  ({it:.3f}s, {256 / it:6.1f}/s)  "
            f"LR: {self.lr:.3e}  Data: 0.010 (0.012)")

    def eval(self) -> None:
        self.w.line("Test: [   0/48]  Time: 0.512 (0.512)  Loss:  1.2 (1.2)  Acc@1: 71.1 (71.1)")
        self.w.line("Test: [  48/48]  Time: 0.101 (0.130)  Loss:  1.1 (1.2)  Acc@1: 72.1 (71.5)")

    def ckpt(self, step: int) -> None:
        self.w.line("Current checkpoints:")
        self.w.line(f" ('./output/checkpoint-{self.epoch}.pth.tar', 71.5)")

    def label_step(self, step: int) -> int:
        return (step - 1) % self.total

    def label_epoch(self) -> float | None:
        return float(self.epoch)


class NanoGPT(Framework):
    name = "nanogpt"
    log_every = 10

    def header(self) -> None:
        self.w.line("tokens per iteration will be: 491,520")
        self.w.line("Initializing a new model from scratch")
        self.w.line("number of parameters: 123.69M")
        self.w.line("compiling the model... (takes a ~minute)")

    def progress(self, step: int, loss: float) -> int:
        ms = self.it * 1000 * self.rng.uniform(0.97, 1.03)
        return self.w.line(f"iter {step}: loss {fmt_loss(loss)}, time {ms:.2f}ms, mfu {self.rng.uniform(28, 32):.2f}%")

    def eval(self) -> None:
        self.w.line(f"step {self.last_step}: train loss {self.loss:.4f}, val loss {self.loss * 1.02:.4f}")

    def ckpt(self, step: int) -> None:
        self.w.line("saving checkpoint to out")


class Titan(Framework):
    name = "torchtitan"
    log_every = 10
    timestamps = True

    def ts(self) -> str:
        return f"[titan] {iso(self.w.t)} - root - INFO - "

    def header(self) -> None:
        self.w.line(self.ts() + "Starting job: Llama 3 8B training")
        self.w.line(self.ts() + f"Training starts at step 1, with local batch size 1, global batch size 8, "
                    f"sequence length 8192, total steps {self.total} (warmup 200)")

    def progress(self, step: int, loss: float) -> int:
        tps = int(8192 / self.it * self.rng.uniform(0.97, 1.03))
        return self.w.line(self.ts() + self.w.color(f"step: {step:2d}  ", "red") + self.w.color(
            f"loss: {fmt_loss(loss)}  ", "green") + self.w.color("memory: 32.12GiB(40.62%)  ", "yellow")
            + self.w.color(f"tps: {tps:,}  ", "blue") + "tflops: 180.22  mfu: 18.22%")

    def ckpt(self, step: int) -> None:
        self.w.line(self.ts() + "Saving the checkpoint (or staging if async is enabled).")
        self.w.line(self.ts() + "Finished saving the checkpoint (or staging if async is enabled)in 12.3 seconds.")


class Custom(Framework):
    name = "custom"
    log_every = 20
    timestamps = True

    def ts(self) -> str:
        return iso(self.w.t, sep="T", comma=False) + "Z "

    def header(self) -> None:
        self.w.line(self.ts() + f"config: max_steps={self.total} lr={self.lr} bs=64")

    def progress(self, step: int, loss: float) -> int:
        return self.w.line(self.ts() + f"step {step}/{self.total} | loss {fmt_loss(loss)} | "
                           f"{self.it * self.rng.uniform(0.97, 1.03):.3f}s/it | grad_norm 1.02")


class Novel(Framework):
    """A home-grown print format no built-in rule knows (the LLM path has to learn it)."""

    name = "novel"
    log_every = 20

    def header(self) -> None:
        self.w.line("novel-trainer v0.3 | world=8 | seed=1234")

    def progress(self, step: int, loss: float) -> int:
        return self.w.line(f">> it#{step} | l={fmt_loss(loss)} | {self.it * self.rng.uniform(0.97, 1.03):.3f} s/it")


FRAMEWORKS = [HF, Lightning, Megatron, DeepSpeed, MMEngine, Fairseq, Timm, NanoGPT, Titan, Custom]


# ----------------------------------------------------------------------------------------- noise
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


def generate(out: Path = HERE, seed: int = SEED) -> list[dict]:
    rng = random.Random(seed)
    plan: list[tuple[type[Framework], str]] = []
    fws = list(FRAMEWORKS)
    i = 0
    for sc in FAIL_KINDS + SPECIAL + BENIGN + NOVEL_FAIL:
        n = 3 if sc in FAIL_KINDS + BENIGN else 2
        if sc in ("nan_loss", "hang", "novel_progress"):
            n = 3
        for _ in range(n):
            plan.append((Novel if sc == "novel_progress" else fws[i % len(fws)], sc))
            i += 1
    labels = []
    for idx, (fw_cls, sc) in enumerate(plan):
        text, label = make_log(idx, fw_cls, sc, rng)
        name = f"{idx:03d}_{label['framework']}_{sc}.log"
        (out / name).write_text(text, encoding="utf-8", newline="")
        label = {"file": name, "scenario": sc, **label, "lines": text.count("\n")}
        labels.append(label)
    with open(out / "labels.jsonl", "w") as fh:
        fh.writelines(json.dumps(lab) + "\n" for lab in labels)
    return labels


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    labs = generate(out)
    print(f"wrote {len(labs)} logs to {out}")

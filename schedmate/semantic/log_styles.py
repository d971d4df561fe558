"""How each framework prints its progress (Megatron, DeepSpeed, torchtitan, nanoGPT, HF Trainer, Lightning, MMEngine, fairseq, timm, and a plain custom loop): one class per style, registered in `STYLES`."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

from schedmate.semantic.augment import Plan
from schedmate.semantic.catalogue import CATCH_ALL, TEMPLATES

EPOCH0 = 1735689600.0  # 2025-01-01T00:00:00Z


def _iso(t: float, sep: str = " ", comma: bool = True, ms: bool = True) -> str:
    d = datetime.fromtimestamp(EPOCH0 + t, tz=UTC)
    s = d.strftime(f"%Y-%m-%d{sep}%H:%M:%S")
    if ms:
        s += ("," if comma else ".") + f"{int((t % 1) * 1000):03d}"
    return s


def _hms(x: float) -> str:
    x = int(max(0, x))
    return f"{x // 3600:d}:{x // 60 % 60:02d}:{x % 60:02d}" if x >= 3600 else f"{x // 60:02d}:{x % 60:02d}"


def _loss(x: float, spec: str = ".4f") -> str:
    return "nan" if math.isnan(x) else format(x, spec)


# ----------------------------------------------------------------------------- styles
class Style:
    """One framework's print format. `ts(t)` is the line prefix (own timestamp, or a log collector's)."""

    name = "custom"
    own_ts = True

    def __init__(self, plan: Plan, rng: random.Random) -> None:
        self.plan = plan
        self.p = plan.p
        self.rng = rng

    def ts(self, t: float) -> str:
        return _iso(t, sep="T", comma=False) + "Z "

    def spe(self) -> int:
        return self.p.steps_per_epoch or self.p.steps

    def header(self, t: float) -> list[str]:
        p = self.p
        lr = f" lr={p.lr:g}" if p.lr else ""  # evaluation jobs have no learning rate
        return [f"config: max_steps={p.steps}{lr} batch_size={p.micro_batch} world_size={max(1, p.num_gpus)}"]

    def progress(self, t: float, step: int, it: float, loss: float) -> list[str]:
        t_ = TEMPLATES[self.plan.template]
        if t_.kinds == {"eval"} or t_.name == CATCH_ALL:  # these scripts print no timing
            return [f"step {step}/{self.p.steps} | loss {_loss(loss)}"]
        return [f"step {step}/{self.p.steps} | loss {_loss(loss)} | {it:.3f}s/it"]

    def eval(self, t: float, step: int, loss: float) -> list[str]:
        return [f"running evaluation at step {step}", f"eval step {step}: val_loss {loss * 1.04:.4f}"]

    def ckpt(self, t: float, step: int) -> list[str]:
        return [f"Saving checkpoint to /ckpt/step_{step}"]

    def done(self, t: float, step: int, loss: float) -> list[str]:
        return ["Training completed."]

    def early_stop(self, t: float, step: int, loss: float) -> list[str]:
        return [f"Early stopping: val_loss did not improve for 3 evaluations, stopping at step {step}"]

    def resume(self, t: float, step: int) -> list[str]:
        return [f"Resuming from checkpoint /ckpt/step_{step} (step {step})"]


class Custom(Style):
    pass


class Megatron(Style):
    name = "megatron"

    def ts(self, t: float) -> str:
        return ""

    def header(self, t: float) -> list[str]:
        p = self.p
        return [(f"using world size: {p.num_gpus}, data-parallel size: {p.dp}, tensor-model-parallel size: {p.tp}, "
                f"pipeline-model-parallel size: {p.pp}"),
                f"  train_iters ..................................... {p.steps}",
                f"  lr .............................................. {p.lr:g}",
                "> building GPT2BPETokenizer tokenizer ...",
                f"[after dataloaders are built] datetime: {_iso(t)}",
                "training ..."]

    def progress(self, t: float, step: int, it: float, loss: float) -> list[str]:
        p = self.p
        return [(f"[{_iso(t)}]  iteration {step:8d}/{p.steps:8d} | consumed samples: {step * p.global_batch:12d} | "
                f"elapsed time per iteration (ms): {it * 1000:.1f} | learning rate: {p.lr:.6E} | global batch size: "
                f"{p.global_batch:5d} | lm loss: {_loss(loss, '.6E')} | loss scale: 1.0 | grad norm: "
                f"{self.rng.uniform(0.5, 3):.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |")]

    def eval(self, t: float, step: int, loss: float) -> list[str]:
        return ["-" * 80, (f" validation loss at iteration {step} | lm loss value: {loss:.6E} | lm loss PPL: "
                f"{math.exp(min(loss, 20)):.6E} |"), "-" * 80]

    def ckpt(self, t: float, step: int) -> list[str]:
        return [f"saving checkpoint at iteration {step:8d} to /ckpt",
                f"  successfully saved checkpoint at iteration {step:8d} to /ckpt"]

    def done(self, t: float, step: int, loss: float) -> list[str]:
        return [f"[{_iso(t)}] after training is done"]

    def resume(self, t: float, step: int) -> list[str]:
        return [f" loading checkpoint from /ckpt at iteration {step}",
                f"  successfully loaded checkpoint from /ckpt at iteration {step}"]


class DeepSpeed(Style):
    name = "deepspeed"

    def ts(self, t: float) -> str:
        return f"[{_iso(t)}] [INFO] [logging.py:96:log_dist] "

    def header(self, t: float) -> list[str]:
        p = self.p
        c = f"[{_iso(t)}] [INFO] [config.py:1004:print] "
        return [f"[{_iso(t)}] [INFO] [config.py:1000:print] DeepSpeedEngine configuration:",
                c + "  bf16_enabled ................. True",
                c + f"  train_batch_size ............. {p.global_batch}",
                c + f"  train_micro_batch_size_per_gpu  {p.micro_batch}"]

    def progress(self, t: float, step: int, it: float, loss: float) -> list[str]:
        p = self.p
        sps = p.global_batch / it
        return [f"[Rank 0] step={step}, skipped=0, lr=[{p.lr:g}], mom=[(0.9, 0.95)]",
                (f"[Rank 0] epoch=0/micro_step={step * p.grad_accum}/global_step={step}, RunningAvgSamplesPerSec="
                f"{sps * self.rng.uniform(0.98, 1.02):.3f}, CurrSamplesPerSec={sps:.3f}, MemAllocated=21.4GB"),
                f"step {step} loss {_loss(loss)}"]

    def ckpt(self, t: float, step: int) -> list[str]:
        return [f"[Rank 0] Saving model checkpoint: /ckpt/global_step{step}/mp_rank_00_model_states.pt",
                f"[Rank 0] Checkpoint global_step{step} is ready now!"]

    def eval(self, t: float, step: int, loss: float) -> list[str]:
        return [f"[Rank 0] evaluating at step {step}", f"eval loss {loss * 1.04:.4f} at step {step}"]


class Torchtitan(Style):
    name = "torchtitan"

    def ts(self, t: float) -> str:
        return f"[titan] {_iso(t)} - root - INFO - "

    def header(self, t: float) -> list[str]:
        p = self.p
        return [f"Starting job: {TEMPLATES[self.plan.template].model} training",
                (f"Training starts at step 1, with local batch size {p.micro_batch}, global batch size "
                f"{p.global_batch}, sequence length {p.seq_len}, total steps {p.steps} (warmup {min(200, p.steps // 10)})")]

    def progress(self, t: float, step: int, it: float, loss: float) -> list[str]:
        p = self.p
        tps = int(p.micro_batch * p.seq_len / it)
        return [(f"step: {step:2d}  loss: {_loss(loss)}  memory: 41.17GiB(52.07%)  tps: {tps:,}  tflops: "
                f"{self.rng.uniform(150, 200):.2f}  mfu: {self.rng.uniform(15, 20):.2f}%")]

    def ckpt(self, t: float, step: int) -> list[str]:
        return ["Saving the checkpoint (or staging if async is enabled).",
                f"Finished saving the checkpoint (or staging if async is enabled)in {self.rng.uniform(5, 20):.2f} seconds."]

    def eval(self, t: float, step: int, loss: float) -> list[str]:
        return [f"Validation at step {step}: loss {loss * 1.04:.4f}"]

    def done(self, t: float, step: int, loss: float) -> list[str]:
        return ["Training completed"]


class NanoGPT(Style):
    name = "nanogpt"
    own_ts = False

    def header(self, t: float) -> list[str]:
        p = self.p
        return [f"tokens per iteration will be: {p.global_batch * p.seq_len:,}",
                "Initializing a new model from scratch", "compiling the model... (takes a ~minute)"]

    def progress(self, t: float, step: int, it: float, loss: float) -> list[str]:
        return [f"iter {step}: loss {_loss(loss)}, time {it * 1000:.2f}ms, mfu {self.rng.uniform(28, 36):.2f}%"]

    def eval(self, t: float, step: int, loss: float) -> list[str]:
        return [f"step {step}: train loss {loss:.4f}, val loss {loss * 1.03:.4f}"]

    def ckpt(self, t: float, step: int) -> list[str]:
        return ["saving checkpoint to out"]

    def done(self, t: float, step: int, loss: float) -> list[str]:
        return [f"training done at iter {step}"]


class HF(Style):
    name = "hf"
    own_ts = False

    def header(self, t: float) -> list[str]:
        p = self.p
        return ["***** Running training *****",
                f"  Num examples = {p.steps * p.global_batch:,}",
                "  Num Epochs = 1",
                f"  Instantaneous batch size per device = {p.micro_batch}",
                f"  Total train batch size (w. parallel, distributed & accumulation) = {p.global_batch}",
                f"  Gradient Accumulation steps = {p.grad_accum}",
                f"  Total optimization steps = {p.steps:,}"]

    def progress(self, t: float, step: int, it: float, loss: float) -> list[str]:
        p = self.p
        el = t - getattr(self, "t_start", 0.0)
        pct = int(100 * step / p.steps)
        fill = int(10 * step / p.steps)
        rate = f"{1 / it:.2f}it/s" if it < 1 else f"{it:.2f}s/it"
        bar = f"{pct:3d}%|{'█' * fill}{' ' * (10 - fill)}| {step}/{p.steps} [{_hms(el)}<{_hms((p.steps - step) * it)}, {rate}]"
        ep = round(step / p.steps, 2)
        return [bar, (f"{{'loss': {_loss(loss)}, 'grad_norm': {self.rng.uniform(0.3, 2):.4f}, 'learning_rate': "
                f"{p.lr:.2e}, 'epoch': {ep}}}")]

    def eval(self, t: float, step: int, loss: float) -> list[str]:
        return ["***** Running Evaluation *****", "  Num examples = 2000",
                (f"{{'eval_loss': {loss * 1.04:.4f}, 'eval_runtime': {self.rng.uniform(20, 60):.2f}, 'epoch': "
                f"{round(step / self.p.steps, 2)}}}")]

    def ckpt(self, t: float, step: int) -> list[str]:
        return [f"Saving model checkpoint to out/checkpoint-{step}"]

    def done(self, t: float, step: int, loss: float) -> list[str]:
        return [(f"{{'train_runtime': {t - getattr(self, 't_start', 0.0):.1f}, 'train_samples_per_second': "
                f"{self.p.global_batch / max(self.plan.iter_s, 1e-9):.2f}, 'train_loss': {loss:.4f}, 'epoch': "
                f"{round(step / self.p.steps, 2)}}}")]

    def early_stop(self, t: float, step: int, loss: float) -> list[str]:
        return [f"Early stopping at step {step}: eval_loss did not improve for 3 evaluation calls"]


class Lightning(Style):
    name = "lightning"
    own_ts = False

    def header(self, t: float) -> list[str]:
        p = self.p
        return ["GPU available: True (cuda), used: True",
                f"LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [{','.join(str(i) for i in range(max(1, p.gpus_per_node)))}]",
                f"hparams: {{'lr': {p.lr:g}, 'batch_size': {p.micro_batch}, 'max_epochs': {p.epochs}}}",
                "  | Name | Type | Params", "0 | net  | Net  | 11.2 M"]

    def progress(self, t: float, step: int, it: float, loss: float) -> list[str]:
        spe = self.spe()
        ep, s = (step - 1) // spe, (step - 1) % spe + 1
        pct = int(100 * s / spe)
        fill = int(10 * s / spe)
        rate = f"{1 / it:.2f}it/s" if it < 1 else f"{it:.2f}s/it"
        return [(f"Epoch {ep}: {pct:3d}%|{'█' * fill}{' ' * (10 - fill)}| {s}/{spe} [{_hms(s * it)}<"
                f"{_hms((spe - s) * it)}, {rate}, v_num=0, train_loss={_loss(loss)}]")]

    def eval(self, t: float, step: int, loss: float) -> list[str]:
        return ["Validation DataLoader 0: 100%|██████████| 40/40 [00:02<00:00, 19.87it/s]"]

    def ckpt(self, t: float, step: int) -> list[str]:
        ep = (step - 1) // self.spe()
        return [(f"Epoch {ep}, global step {step}: 'val_loss' reached {self.rng.uniform(0.5, 2):.3f} (best "
                f"{self.rng.uniform(0.5, 2):.3f}), saving model to '/ckpt/epoch={ep}.ckpt' as top 1")]

    def done(self, t: float, step: int, loss: float) -> list[str]:
        return [f"`Trainer.fit` stopped: `max_epochs={self.p.epochs}` reached."]

    def early_stop(self, t: float, step: int, loss: float) -> list[str]:
        return [(f"Monitored metric val_loss did not improve in the last 3 records. Best score: {loss:.3f}. "
                "Signaling Trainer to stop.")]


class MMEngine(Style):
    name = "mmengine"

    def ts(self, t: float) -> str:
        return datetime.fromtimestamp(EPOCH0 + t, tz=UTC).strftime("%Y/%m/%d %H:%M:%S") + " - mmengine - INFO - "

    def header(self, t: float) -> list[str]:
        return ["Config:", f"train_cfg = dict(type='EpochBasedTrainLoop', max_epochs={self.p.epochs}, val_interval=1)",
                "Checkpoints will be saved to /work_dirs/exp."]

    def progress(self, t: float, step: int, it: float, loss: float) -> list[str]:
        spe = self.spe()
        ep, s = (step - 1) // spe + 1, (step - 1) % spe + 1
        eta = int((self.p.steps - step) * it)
        return [(f"Epoch(train) [{ep}][{s:4d}/{spe}]  lr: {self.p.lr:.4e}  eta: {eta // 3600}:{eta // 60 % 60:02d}:"
                f"{eta % 60:02d}  time: {it:.4f}  data_time: 0.0123  memory: 12001  loss: {_loss(loss)}")]

    def eval(self, t: float, step: int, loss: float) -> list[str]:
        ep = (step - 1) // self.spe() + 1
        return [f"Epoch(val) [{ep}][50/50]    accuracy/top1: {self.rng.uniform(60, 78):.4f}  data_time: 0.0100"]

    def ckpt(self, t: float, step: int) -> list[str]:
        return [f"Saving checkpoint at {(step - 1) // self.spe() + 1} epochs"]

    def done(self, t: float, step: int, loss: float) -> list[str]:
        return []

    def early_stop(self, t: float, step: int, loss: float) -> list[str]:
        return [f"the monitored metric did not improve in the last 3 records. best score: {loss:.3f}. stopping training"]


class Fairseq(Style):
    name = "fairseq"

    def ts(self, t: float) -> str:
        return ""

    def _pfx(self, t: float, mod: str) -> str:
        return _iso(t, ms=False) + f" | INFO | {mod} | "

    def header(self, t: float) -> list[str]:
        return [self._pfx(t, "fairseq_cli.train") + f"{{'max_update': {self.p.steps}, 'max_epoch': 0, 'lr': [{self.p.lr:g}]}}",
                self._pfx(t, "fairseq_cli.train") + "task: TranslationTask"]

    def progress(self, t: float, step: int, it: float, loss: float) -> list[str]:
        ups = 1 / it
        return [self._pfx(t, "train_inner") + f"epoch 001:   {step:5d} / {self.p.steps} loss={_loss(loss, '.3f')}, "
                f"nll_loss=3.1, ppl=8.57, wps={ups * 4000:.0f}, ups={ups:.2f}, wpb=4000, bsz=128, num_updates={step}, "
                f"lr={self.p.lr:g}, gnorm=1.2, train_wall=30, gb_free=10.2, wall={t - getattr(self, 't_start', 0.0):.0f}"]

    def eval(self, t: float, step: int, loss: float) -> list[str]:
        return [self._pfx(t, "fairseq_cli.train") + 'begin validation on "valid" subset',
                self._pfx(t, "valid") + f"epoch 001 | valid on 'valid' subset | loss {loss:.3f} | nll_loss 3.2 | "
                f"ppl 9.1 | wps 41000 | wpb 3900 | bsz 120 | num_updates {step}"]

    def ckpt(self, t: float, step: int) -> list[str]:
        return [self._pfx(t, "fairseq.checkpoint_utils") + f"Saved checkpoint /ckpt/checkpoint_1_{step}.pt (epoch 1 @ "
                f"{step} updates, score 3.2) (writing took 4.1 seconds)"]

    def done(self, t: float, step: int, loss: float) -> list[str]:
        return [self._pfx(t, "fairseq_cli.train") + f"done training in {t - getattr(self, 't_start', 0.0):.1f} seconds"]

    def early_stop(self, t: float, step: int, loss: float) -> list[str]:
        return [self._pfx(t, "fairseq_cli.train") + "early stop since valid performance hasn't improved for last 3 runs"]

    def resume(self, t: float, step: int) -> list[str]:
        return [self._pfx(t, "fairseq.trainer") + f"Loaded checkpoint /ckpt/checkpoint_last.pt (epoch 1 @ {step} updates)"]


class Timm(Style):
    name = "timm"
    own_ts = False

    def header(self, t: float) -> list[str]:
        return [f"Training in distributed mode with multiple processes, 1 device per process. Total {max(1, self.p.num_gpus)}.",
                f"Model {TEMPLATES[self.plan.template].model} created",
                f"Scheduled epochs: {self.p.epochs}. LR stepped per epoch."]

    def progress(self, t: float, step: int, it: float, loss: float) -> list[str]:
        spe = self.spe()
        ep, s = (step - 1) // spe, (step - 1) % spe
        rate = self.p.micro_batch * max(1, self.p.num_gpus) / it
        return [(f"Train: {ep} [{s:4d}/{spe} ({100 * s // spe:3d}%)]  Loss: {_loss(loss, '.3f')} ({_loss(loss, '.3f')})  "
                f"Time: {it:.3f}s, {rate:6.1f}/s  ({it:.3f}s, {rate:6.1f}/s)  LR: {self.p.lr:.3e}  Data: 0.010 (0.012)")]

    def eval(self, t: float, step: int, loss: float) -> list[str]:
        return ["Test: [   0/48]  Time: 0.512 (0.512)  Loss:  1.2 (1.2)  Acc@1: 71.1 (71.1)",
                "Test: [  48/48]  Time: 0.101 (0.130)  Loss:  1.1 (1.2)  Acc@1: 72.1 (71.5)"]

    def ckpt(self, t: float, step: int) -> list[str]:
        return ["Current checkpoints:", f" ('./output/checkpoint-{(step - 1) // self.spe()}.pth.tar', 71.5)"]

    def done(self, t: float, step: int, loss: float) -> list[str]:
        return [f"*** Best metric: 72.1 (epoch {(step - 1) // self.spe()})"]


STYLES: dict[str, type[Style]] = {c.name: c for c in (Custom, Megatron, DeepSpeed, Torchtitan, NanoGPT, HF,
                                                       Lightning, MMEngine, Fairseq, Timm)}

"""One log style per framework: how each prints its start, progress, evaluation and end."""

from __future__ import annotations

from datetime import UTC, datetime

from .writer import Framework, fmt_loss, iso, tqdm_bar


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

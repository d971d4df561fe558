"""The names a value goes by in real jobs' code and configs (data tables), and scalar parsing."""

from __future__ import annotations

import re
from typing import Any

MICRO = (
    "train_dataloader.batch_size",  # OpenMMLab 2.x (mmengine): the per-GPU batch of the training loader
    "data.samples_per_gpu",  # OpenMMLab 1.x (mmcv)
    "data.train_dataloader.samples_per_gpu",  # OpenMMLab 1.x with per-loader settings (mmflow, mmseg 0.x)
    "data.videos_per_gpu",
    "data.imgs_per_gpu",
    "train_batch_size_per_gpu",
    "data.train.batchsize_per_replica",  # vissl
    "micro_batch_size",
    "per_device_train_batch_size",
    "train_micro_batch_size_per_gpu",
    "train_micro_batch_size",
    "micro_bsz",
    "local_batch_size",
    "batch_size_per_gpu",
    "per_gpu_batch_size",
    "per_gpu_train_batch_size",
    "batch_size_per_device",
    "per_device_batch_size",
    "batch_size_per_replica",
    "micro_batch",
    "device_train_microbatch_size",
    "train_batch_size",
    "batch_size_train",
    "mbs",
    "batch_size",
    "bs",
    "train.batch_size",
    "training.batch_size",
    "n_rand",  # NeRF family (`--N_rand`): the rays sampled per optimisation step, the run's batch
)
GLOBAL = ("global_batch_size", "total_batch_size", "global_bs", "effective_batch_size", "gbs", "ims_per_batch",
          "global_train_batch_size", "total_bs")
ACCUM = (
    "gradient_accumulation_steps",
    "grad_accum_steps",
    "accumulate_grad_batches",
    "grad_accum",
    "accum_steps",
    "gradient_accumulation",
    "accumulation_steps",
    "grad_acc_steps",
    "gradient_accumulate_every",
    "accum_iter",
    "gradient_accumulation_iters",
    "batch_accumulation_per_replica",
    "grad_accumulation_factor",
    "update_freq",
    "accum_freq",
    "iter_size",  # Caffe solver convention (gradients summed over iter_size forward/backward passes per update)
    "accumulate_grad_batches",
    "optimizer_config.cumulative_iters",  # mmcv GradientCumulativeOptimizerHook
    "optim_wrapper.accumulative_counts",  # mmengine OptimWrapper
)
SEQ = (
    "seq_len",
    "seq_length",
    "max_seq_length",
    "max_seq_len",
    "block_size",
    "sequence_length",
    "context_length",
    "max_length",
    "ctx_len",
    "encoder_seq_length",
    "max_source_length",
    "n_ctx",
    "max_position_embeddings",
)
EPOCHS = (
    "epochs",
    "num_epochs",
    "num_train_epochs",
    "max_epochs",
    "n_epochs",
    "train_epochs",
    "total_epochs",
    "number_of_epochs",
    "num_epoch",
    "n_epoch",
    "max_epoch",
    "nepochs",
    "end_epoch",
)
STEPS = (
    "max_steps",
    "train_steps",
    "max_iters",
    "train_iters",
    "total_steps",
    "num_train_steps",
    "training.steps",
    "max_iterations",
    "total_iters",
    "num_iterations",
    "num_updates",
    "num_training_steps",
    "max_train_steps",
    "max_iter",
    "total_training_steps",
    "num_train_steps",
    "training_steps",
    "num_steps",
)
# a fixed number of optimizer steps per epoch (a cap per pass, or "epochs" that are blocks of iterations)
STEPS_PER_EPOCH = ("max_steps_per_epoch", "iters_per_epoch", "num_iters_per_epoch", "iterations_per_epoch",
                   "num_iterations_per_epoch",
                   "train_steps_per_epoch", "steps_per_epoch", "num_batches_per_epoch", "batches_per_epoch")
# global batch sizes a script computes from its knobs and the world size
COMPUTED_GLOBAL = ("total_batch_size", "global_batch_size", "effective_batch_size", "eff_batch_size",
                   "total_train_batch_size", "global_bs", "total_bs")
# names computed inside functions that the static pass evaluates (`steps = tokens // (bs * seq * world)`)
COMPUTED_STEPS = STEPS + ("steps", "n_iters", "iterations")
TP = (
    "tensor_model_parallel_size",
    "tensor_parallel_degree",
    "tensor_parallel_size",
    "tp_size",
    "tp_degree",
    "model_parallel_size",  # gpt-neox, fairscale/metaseq: the tensor-parallel width
    "tensor_parallel_dim",  # torchtune
    "tensor_parallel",
    "mp_size",
    "tp",
)
PP = (
    "pipeline_model_parallel_size",
    "pipeline_parallel_degree",
    "pipeline_parallel_size",
    "pp_size",
    "pp_degree",
    "pipe_parallel_size",  # gpt-neox
    "pipeline_parallel",
    "pp",
)
EP = ("expert_model_parallel_size", "expert_parallel_degree", "expert_parallel_size", "ep_size", "ep")
CP = ("context_parallel_size", "context_parallel_degree", "cp_size", "cp")
LAYERS = ("num_layers", "n_layer", "n_layers", "num_hidden_layers", "layers", "depth", "nlayers", "num_layer",
          "n_blocks")
HIDDEN = ("hidden_size", "n_embd", "d_model", "dim", "embed_dim", "hidden_dim", "emb_dim", "n_embed", "width")
VOCAB = ("vocab_size", "padded_vocab_size", "n_vocab", "ntokens", "num_tokens")
FFN = ("ffn_hidden_size", "intermediate_size", "ffn_dim", "d_ff", "dim_feedforward", "mlp_dim")
EXPERTS = ("num_experts", "num_local_experts", "n_experts", "moe_num_experts")
MODEL_NAME = (
    "model_name_or_path",
    "preset",  # KerasHub/KerasNLP `--preset bert_base_en`: the pretrained weights the task model starts from
    "init_from",
    "pretrained_model_name_or_path",
    "model_name",
    "model_id",
    "arch",
    "architecture",
    "model_type",
    "model.name",
    "model",
    "base_model",
    "network",
    "net",
    "backbone",
    "init_checkpoint",  # TF (BERT, XLNet, ALBERT): the pretrained checkpoint a fine-tuning run starts from
)
HF_DEFAULTS = {
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "num_train_epochs": 3,
    "max_steps": -1,
    "fp16": False,
    "bf16": False,
}
LIGHTNING_KW = {
    "devices",
    "gpus",
    "num_nodes",
    "strategy",
    "precision",
    "max_epochs",
    "max_steps",
    "accumulate_grad_batches",
    "accelerator",
    "fast_dev_run",
}
_FLAG_WORDS = re.compile(r"^(true|false|yes|no|none|null)$", re.IGNORECASE)


def positive_int(v: Any) -> int | None:
    """A positive whole number given as an int or a whole float (not a bool, not a string), else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return v if isinstance(v, int) and v > 0 else None


def parse_scalar(s: str) -> Any:
    t = s.strip()
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", t):
        return float(t)
    if _FLAG_WORDS.match(t):
        return {"true": True, "yes": True, "false": False, "no": False}.get(t.lower())
    return t.strip("\"'")


# names a setting goes by when no listed name fits (`nb_epoch`, `n_iters`, `imgs_per_gpu`); words that make a
# look-alike (eval, warm-up, save, log, decay, per-epoch, ...) rule a key out
FUZZY = {
    "steps": re.compile(r"^(?:(?:max|total|num|n|nb|train|training)_?)*(?:steps?|iters?|iterations?|updates?|niter)$"),
    "epochs": re.compile(r"^(?:(?:max|total|num|n|nb|train|training)_?)*(?:epochs?|nepoch|n_ep)$"),
    "micro": re.compile(r"^(?:(?:train|training|per_gpu|per_device|local|device|gpu)_?)*(?:batch_?size|bs|batch|"
                        r"imgs_per_gpu|images_per_gpu|samples_per_gpu)(?:_?(?:per_gpu|per_device|train))?$"),
}
LOOKALIKE = re.compile(r"eval|valid|(^|[._])val([._]|$)|test|infer|predict|warm|save|ckpt|checkpoint|log|print|"
                       r"display|report|decay|sched|(^|[._])lr|patience|early|per_epoch|interval|freq|every|"
                       r"sample|gen|rollout|buffer|replay|target|(^|[._])min_|start|resume|skip|anneal|ramp|"
                       r"accum|grad|ema|swa|reg|prune|distill|teacher|pseudo|"
                       # an RL n-step return's length (`nstep: 3`), not a step budget
                       r"(^|[._])n_?step($|[._])", re.IGNORECASE)

# an option documented as a knob of generation, sampling or evaluation is not the training run's
LOOKALIKE_HELP = re.compile(r"generat|sampl|inferenc|evaluat|validat|\btest", re.IGNORECASE)

"""The framework, DeepSpeed/sharding and the model: name, family, size."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof import known
from schedmate.codeprof.configs import ConfigError, key_lines, parse_config
from schedmate.codeprof.params import COMMAND_LINE, CONFIG
from schedmate.codeprof.static.layer_family import family_from_layers
from schedmate.codeprof.static.model_config_names import (backbone_is_a_part, name_from_backbone_builder,
    name_from_compound_coef, name_from_config_stem, name_from_conv_body, name_from_hrnet_width,
    one_branch_of_a_name_choice)
from schedmate.codeprof.static.model_keys import (
    name_from_backbone_option,
    name_from_model_section,
    runs_only_as_program,
)
from schedmate.codeprof.static.modelsize.hook import (
    definition_stem,
    name_from_default_config,
    name_from_launcher,
    params_from_definition,
)
from schedmate.codeprof.static.names import MODEL_NAME
from schedmate.codeprof.static.torch_with_tf import trains_with_torch

# a model a job loads beside the one it trains: for evaluation, as a reference, teacher, reward or judge
_HUB_NAME_CLASSES = ("SentenceTransformer", "CrossEncoder", "SparseEncoder")
_AUX_MODEL = re.compile(r"eval|ref_|_ref\b|reference|teacher|reward|judge|critic|tokenizer|vae|clip_|text_encoder",
                        re.IGNORECASE)


class ModelMixin:
    """The framework, DeepSpeed/sharding and the model: name, family, size."""

    def _framework(self) -> None:
        r = self.r
        sig: dict[str, list[str]] = {}

        def hit(name: str, where: list[str] | str) -> None:
            sig.setdefault(name, []).extend([where] if isinstance(where, str) else where)

        L = r.launch
        assert L is not None
        megatron_flags = [
            k
            for k, _ in r.params.items()
            if k in {"tensor_model_parallel_size", "pipeline_model_parallel_size", "micro_batch_size"}
        ]
        for rel in self._imports_any("megatron"):
            hit("megatron", f"{rel}:1")
        if (
            megatron_flags
            and any(pv.layer == COMMAND_LINE for k, pv in r.params.items() if k in megatron_flags)
            and r.params.get("global_batch_size") is not None
        ):
            hit("megatron", L.args_where)
        for rel, c in self._find_calls("initialize"):
            if c["func"].startswith("deepspeed"):
                hit("deepspeed", f"{rel}:{c['line']}")
        trainer_calls = self._find_calls("Trainer", "Seq2SeqTrainer", "SFTTrainer")
        hf_mod = self._imports_any("transformers", "trl")
        pl_mod = self._imports_any("lightning", "pytorch_lightning")
        for rel, c in trainer_calls:
            if pl_mod and (
                c["func"].startswith(("pl.", "L.", "lightning", "pytorch_lightning"))
                or not hf_mod
                or rel in pl_mod
                and rel not in hf_mod
            ):
                hit("lightning", f"{rel}:{c['line']}")
            elif hf_mod:
                hit("hf-trainer", f"{rel}:{c['line']}")
        if pl_mod:  # Trainer.from_argparse_args(...), LightningCLI(...)
            for rel, c in self._find_calls("from_argparse_args", "LightningCLI"):
                hit("lightning", f"{rel}:{c['line']}")
        for rel, c in self._find_calls("Accelerator"):
            hit("accelerate", f"{rel}:{c['line']}")
        for rel in self._imports_any("jax", "flax"):
            hit("jax", f"{rel}:1")
        for rel in self._imports_any("tensorflow", "keras"):
            hit("tensorflow", f"{rel}:1")
        for rel in self._imports_any("torch"):
            hit("pytorch", f"{rel}:1")
        for lib in self._libraries:
            hit(lib.framework, f"{lib.name} (library conventions)")
        if not sig and any(c in L.chain for c in ("torchrun", "python -m torch.distributed.launch",
                                                  "python -m torch.distributed.run")):
            hit("pytorch", L.args_where)  # PyTorch's own launcher: a PyTorch job whatever the library on top
        torch_step = trains_with_torch(self.calls, r.py) if "tensorflow" in sig else None
        if torch_step:
            hit("pytorch", torch_step)  # a torch loop importing TensorFlow for data, files or TensorBoard
        r.framework_signals = sig
        for fw in (
            "megatron",
            "hf-trainer",
            "lightning",
            "deepspeed",
            "accelerate",
            "jax",
            "tensorflow",
            "pytorch",
        ):
            if fw in sig and not (fw == "tensorflow" and torch_step):
                r.put("framework", fw, sig[fw][:3])
                return

    def _deepspeed_and_sharding(self) -> None:
        r, P, L = self.r, self.r.params, self.r.launch
        assert L is not None
        self._ds: dict[str, Any] | None = None
        ds_path: tuple[Any, list[str]] | None = None
        for k in ("deepspeed", "deepspeed_config", "ds_config", "deepspeed_config_file"):
            pv = P.get(k)
            if pv is not None and isinstance(pv.value, str) and pv.value.endswith(".json"):
                ds_path = (pv.value, pv.where)
                break
        if ds_path is None and L.get("ds_config"):
            ds_path = (L.get("ds_config"), L.settings["ds_config"].where)
        if ds_path is None:
            for rel, c in self._find_calls("initialize"):
                if c["func"].startswith("deepspeed"):
                    for key in ("config", "config_params"):
                        if key in c["kwargs"]:
                            ok, v, ev = self._resolver.eval(c["kwargs"][key])
                            if ok and isinstance(v, str):
                                ds_path = (v, [f"{rel}:{c['line']}", *ev])
                            elif ok and isinstance(v, dict) and v:  # the config is a dict in the code
                                line = next((e for e in ev if e.startswith(rel + ":")), f"{rel}:{c['line']}")
                                self._ds = {
                                    "path": line.rsplit(":", 1)[0],
                                    "cfg": v,
                                    "lines": {},
                                    "where": [f"{rel}:{c['line']}", *ev],
                                    "ev": line,
                                }
                                return
        if ds_path is None and self._ds_cfg is not None:
            ds_path = (self._ds_cfg[0], [self._ds_cfg[0]])
        if ds_path is not None:
            path, where = ds_path
            base = str(PurePosixPath(r.entry).parent) if r.entry else ""
            rel = None
            for root in (L.base, base, ""):
                cand = self.wd.rel(path, root)
                if cand and self.wd.exists(cand):
                    rel = cand
                    break
            text = self.wd.read_text(rel) if rel else None
            if text is None:
                r.notes.append(f"DeepSpeed config {path} ({where[0]}) not readable")
            else:
                try:
                    cfg = parse_config(rel, text)  # type: ignore[arg-type]
                    if rel not in r.configs:
                        r.configs.append(rel)  # type: ignore[arg-type]
                    self._ds = {
                        "path": rel,
                        "cfg": cfg,
                        "lines": key_lines(
                            text,
                            [
                                "zero_optimization.stage",
                                "train_micro_batch_size_per_gpu",
                                "train_batch_size",
                                "gradient_accumulation_steps",
                                "fp16.enabled",
                                "bf16.enabled",
                                "bfloat16.enabled",
                            ],
                        ),
                        "where": where,
                    }
                    self._ds_keys_set_in_code()
                except ConfigError as e:
                    r.notes.append(str(e))

    _DS_BATCH_KEYS = ("train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "train_batch_size")

    def _ds_keys_set_in_code(self) -> None:
        """Batch keys of the DeepSpeed json that the job's code sets before handing the dict to DeepSpeed
        (`ds_config["train_micro_batch_size_per_gpu"] = args.batch_size`): the code's value wins; one the
        sources leave open (a world size) makes the key unknown rather than the file's stale number."""
        assert self._ds is not None
        cfg = self._ds["cfg"]
        if not isinstance(cfg, dict):
            return
        for rel, s in self.r.py.items():
            for a in s.get("key_sets", []):
                if a["key"] not in self._DS_BATCH_KEYS or not re.search(r"(^|[._])(ds|deepspeed)", a["obj"],
                                                                         re.IGNORECASE):
                    continue
                # a guard on the DeepSpeed setting itself (`if args.deepspeed_config is not None:`) holds: that
                # setting is how this json was found (a later `args.deepspeed_config = None` does not undo it)
                when = [c for c in a.get("when", []) if not re.search(r"deepspeed|ds_?conf", c, re.IGNORECASE)]
                if when and self._resolver.truth(when) is False:
                    continue
                ok, v, ev = self._resolver.eval(a["expr"])
                cfg[a["key"]] = v if ok and isinstance(v, int) and not isinstance(v, bool) and v > 0 else "auto"
                self._ds["lines"].pop(a["key"], None)
                self._ds.setdefault("code_keys", {})[a["key"]] = [f"{rel}:{a['line']}", *ev]

    def _ds_value(self, key: str) -> tuple[Any, list[str]] | None:
        if not self._ds:
            return None
        cur: Any = self._ds["cfg"]
        for part in key.split("."):
            if not isinstance(cur, dict) or part not in cur:
                return None
            cur = cur[part]
        if cur == "auto":
            return None
        if key in self._ds.get("code_keys", {}):
            return cur, self._ds["code_keys"][key]
        line = self._ds["lines"].get(key)
        if "ev" in self._ds:
            return cur, [self._ds["ev"]]
        return cur, [f"{self._ds['path']}:{line}" if line else self._ds["path"]]

    def _model(self) -> None:
        params_from_definition(self)
        r, P = self.r, self.r.params
        R = self._resolver
        name: tuple[str, list[str]] | None = None
        # torchtitan: [model] name + flavor
        mn, fl = P.get_path("model.name"), P.get_path("model.flavor")
        if mn is not None and fl is not None and isinstance(mn.value, str) and "." in mn.key:
            name = (f"{mn.value}-{fl.value}".lower(), mn.where + fl.where)
        # big_vision-style: model_name 'vit' + model.variant 'S/16' -> vit_s_16
        mv, var = P.get("model_name"), P.get_path("model.variant") or P.get("variant")
        if name is None and mv is not None and var is not None and isinstance(mv.value, str) \
                and isinstance(var.value, str):
            # `vit` + `S/16`, or `vit_multilabel_classification` + `B/16` (the family is the first word)
            for base in (mv.value, re.split(r"[_-]", mv.value)[0]):
                cand = f"{base}_{var.value}".replace("/", "_").lower()
                if known.lookup_model(cand) or base != mv.value:
                    name = (cand, mv.where + var.where)
                    break
        if name is None:  # a model built by a config's factory: `model: {_component_: ....llama3_1_8b}`
            for key, pv in P.items():
                leaf = key.rsplit(".", 1)[-1]
                owner = key.rsplit(".", 2)[-2] if key.count(".") >= 1 else ""
                if leaf in {"_component_", "_target_", "class_path"} and owner in {"model", "net", "network"} \
                        and isinstance(pv.value, str) and known.lookup_model(pv.value.rsplit(".", 1)[-1]):
                    name = (pv.value.rsplit(".", 1)[-1], pv.where)
                    break
        if name is None:  # a detector class of the job's own completed by a `--backbone` option's depth
            name = name_from_backbone_option(P, {c["name"] for s in self.r.py.values() for c in s["classes"]})
        # sentence-transformers' model classes take the hub name as their first argument
        for rel, c in self._find_calls("from_pretrained", "create_model", "from_config", *_HUB_NAME_CLASSES):
            if name:
                break
            if c["args"] and not re.search(r"tokenizer|Tokenizer|processor|Processor", c["func"]) \
                    and not _AUX_MODEL.search(c["args"][0]):
                ok, v, ev = R.eval(c["args"][0])
                if ok and rel != self.r.entry and not ev:
                    continue  # a literal inside a library module of the job loads a component, not the model
                if ok and isinstance(v, str) and not v.startswith(("/", ".")) \
                        and not re.search(r"\.(py|ya?ml|json|toml|gin|cfg)(:|$)", v):  # a config file, not a model
                    name = (v, [f"{rel}:{c['line']}", *ev])
        if name is None:
            # a class the job defines itself is its own architecture, whatever it is called (a two-layer
            # `YOLOv3` stand-in is not the published YOLOv3)
            local_classes = {c["name"] for s in self.r.py.values() for c in s["classes"]}
            for rel, c in self.calls:
                tail = c["func"].rsplit(".", 1)[-1]
                if c["func"] == tail and tail in local_classes or runs_only_as_program(c, rel, self.r.entry):
                    continue
                if known.lookup_model(tail) and (
                    c["func"].startswith(
                        (
                            "models.",
                            "torchvision",
                            "tv.",
                            "timm",
                            "tf.keras.applications",
                            "keras.applications",
                            "applications.",
                        )
                    )
                    or c["func"] == tail
                ):
                    active = self._active(c)
                    if active is True or active is None and not one_branch_of_a_name_choice(c):
                        name = (tail, [f"{rel}:{c['line']}"])
                        break
        if name is None:
            name = self._name_from_model_dict() or name_from_model_section(P)  # a family + its section's depth
        if name is None:  # HRNet NAME + its stage-2 width; a GeneralizedRCNN's CONV_BODY and heads
            name = name_from_hrnet_width(P) or name_from_conv_body(P) or name_from_backbone_builder(P) \
                or name_from_compound_coef(P, self.calls)  # `--phi 1` + an EfficientDet builder
        if name is None:  # `config = ViTMAEConfig()`: the library's reference model
            name = name_from_default_config(self)
        if name is None:  # an experiment or run named after its model (`-n yolox-s`, `run_name: llama-7b-sft`)
            for k in ("name", "exp_name", "experiment_name", "run_name", "model_tag"):
                pv = P.get(k)
                if pv is not None and isinstance(pv.value, str) and pv.layer >= CONFIG \
                        and (hit := known.lookup_model(pv.value)) and hit[1]:
                    name = (pv.value, pv.where)
                    break
        if name is None:
            name = self._name_from_scale_factors()
        for lib in self._libraries:  # the model a library's config describes (detectron2's architecture)
            if name is None and lib.model_name is not None and (got := lib.model_name(P)) is not None:
                arch = P.get_path("model.meta_architecture")
                name = (got, arch.where if arch is not None else [f"{lib.name} config"])
        if name is None:
            for rel, c in self._find_calls("getattr"):
                if len(c["args"]) >= 2 and c["args"][0] in {"models", "torchvision.models", "tv.models"}:
                    ok, v, ev = R.eval(c["args"][1])
                    if ok and isinstance(v, str):
                        name = (v, [f"{rel}:{c['line']}", *ev])
        if name is None:
            for k in MODEL_NAME:
                pv = None if backbone_is_a_part(P, k) else P.get(k)
                if pv is not None and isinstance(pv.value, str) and (stem := definition_stem(pv.value)):
                    name = (stem, pv.where)  # `--model config/yolov3.cfg`: the definition file names the model
                    break
                if (
                    pv is not None
                    and isinstance(pv.value, str)
                    and (known.lookup_model(pv.value) or known.family_of(pv.value))
                ):
                    name = (pv.value, pv.where)
                    break
                if pv is not None and isinstance(pv.value, str) and (hit := known.lookup_in_path(pv.value)):
                    name = (hit[0], pv.where)  # `/path/to/llama-7B/hf`: the directory names the model
                    break
        if name is None:  # a detector named by its family and its backbone's depth (`detr` + 50 -> detr-r50)
            depth = next((pv for k in ("backbone_num_layers", "backbone_depth", "resnet_depth")
                          if (pv := P.get(k)) is not None and isinstance(pv.value, int)), None)
            fam = next((pv for k in ("model_name", "arch", "model") if (pv := P.get(k)) is not None
                        and isinstance(pv.value, str) and re.fullmatch(r"[A-Za-z][\w-]*", pv.value)), None)
            if depth is not None and fam is not None and known.lookup_model(f"{fam.value}-r{depth.value}"):
                name = (f"{fam.value}-r{depth.value}", fam.where + depth.where)
        if name is None:  # `--cfg configs/yolov6s_finetune.py`: the config file's stem names the model
            name = name_from_config_stem(P, self._positional, list(self.r.launch.args_where) if self.r.launch else [])
        if name is None and self.r.launch is not None:  # a model id among positional arguments
            for arg in self._positional:
                if re.fullmatch(r"[\w.-]+/[\w.-]+", arg) and (hit := known.lookup_model(arg)) and hit[1]:
                    name = (arg, list(self.r.launch.args_where))
                    break
        if name is None:  # a launcher script named after its model: `bash scripts/run_sft_Yi_34b.sh`
            name = name_from_launcher(self)
        if name is None:  # a size named on its own: `--load_llama_config=7b`, `model_size: 1.3B`
            for key, pv in P.items():
                if isinstance(pv.value, str) and re.fullmatch(r"\d+(\.\d+)?[bBmM]", pv.value.strip()) \
                        and re.search(r"model|config|size|flavor|variant|arch", key) and pv.layer >= CONFIG:
                    name = (pv.value.strip().lower(), pv.where)
                    break
        if name is not None:
            hit = known.lookup_model(name[0])
            r.put("model_name", hit[0] if hit else known.normalise_name(name[0]), name[1])
            fam = known.family_of(name[0])
            if fam:
                r.put("model_family", fam, name[1])
        if r.val("model_family") is None:
            # a model config in Llama's vocabulary (RMSNorm, RoPE, grouped KV heads) is a gated-MLP decoder
            llama_keys = [P.get(k) for k in ("rms_norm_eps", "rope_theta", "num_key_value_heads")]
            hit = next((pv for pv in llama_keys if pv is not None and pv.layer >= CONFIG), None)
            if hit is not None and P.get("intermediate_size") is not None:
                r.put("model_family", "llama", hit.where, note="Llama-style model config keys")
        if r.val("model_family") is None:
            fam = self._family_from_code()
            if fam:
                r.put("model_family", fam[0], fam[1])
        if r.val("model_family") is None:
            # a transformer language model's config (GPT-NeoX/Megatron style): layers, width, heads and a
            # sequence length, nothing of images
            lm = [P.get(k) for k in ("num_attention_heads", "seq_length", "max_position_embeddings")]
            if all(P.get(k) is not None for k in ("num_layers", "hidden_size")) and lm[0] is not None \
                    and (lm[1] or lm[2]) and P.get("patch_size", "image_size", "img_size") is None \
                    and lm[0].layer >= CONFIG:
                r.put("model_family", "gpt", lm[0].where, note="transformer language-model config keys")

    _MODEL_TYPES = {"visiontransformer": "vit", "vit": "vit", "swintransformer": "swin", "convnext": "convnext",
                    "resnet": "resnet", "resnetv1c": "resnet", "resnetv1d": "resnet", "resnext": "resnext",
                    "deit": "deit", "efficientnet": "efficientnet", "maevit": "mae-vit", "beitvit": "beit",
                    "sotresnet": "resnet", "levit": "levit", "poolformer": "poolformer", "repvgg": "repvgg",
                    "swintransformerv2": "swinv2", "swintransformer3d": "swin",
                    "resnet3dslowfast": "slowfast-r"}

    def _name_from_model_dict(self) -> tuple[str, list[str]] | None:
        """OpenMMLab-style model dicts: `backbone=dict(type='ResNet', depth=50)` -> resnet50,
        `dict(type='VisionTransformer', arch='b')` -> vit-b (only when the name is a known model)."""
        P = self.r.params
        items = P.items()
        for key, pv in items:
            leaf = key.rsplit(".", 1)[-1]
            if leaf not in {"type", "name"} or "." not in key or not isinstance(pv.value, str):
                continue
            base = self._MODEL_TYPES.get(pv.value.lower())
            if base is None:
                continue
            prefix = key[: -len(leaf) - 1]
            # the depth or arch beside the type, or nested under the same model entry (vissl's
            # `TRUNK: {NAME: resnet, TRUNK_PARAMS: {RESNETS: {DEPTH: 50, WIDTH_MULTIPLIER: 2}}}`)
            under = [(k, v) for k, v in items if k.startswith(prefix + ".")]
            for attr, sep in (("depth", ""), ("arch", "-")):
                got = next((v for k, v in under if k.rsplit(".", 1)[-1] == attr
                            and isinstance(v.value, (int, str))), None)
                if got is None:
                    continue
                width = next((v for k, v in under if k.rsplit(".", 1)[-1] in {"width_multiplier", "width_factor"}
                              and isinstance(v.value, int) and v.value > 1), None)
                cand = f"{base}{sep}{got.value}".lower() + (f"w{width.value}" if width else "")
                if known.lookup_model(cand):
                    return cand, pv.where + got.where + (width.where if width else [])
            size = self._size_from_shape(base, under)
            if size is not None:
                return size[0], pv.where + size[1]
        return None

    # published shapes: (width, depths) of Swin, (width, layers) of ViT -> size word
    _SWIN_SHAPES = {(96, (2, 2, 6, 2)): "tiny", (96, (2, 2, 18, 2)): "small", (128, (2, 2, 18, 2)): "base",
                    (192, (2, 2, 18, 2)): "large"}
    _VIT_SHAPES = {(192, 12): "tiny", (384, 12): "small", (768, 12): "base", (1024, 24): "large", (1280, 32): "huge"}

    def _size_from_shape(self, base: str, under: list[tuple[str, Any]]) -> tuple[str, list[str]] | None:
        """A Swin or ViT backbone given by its width and depths instead of an arch name (`type='SwinTransformer',
        embed_dims=96, depths=[2, 2, 6, 2]` is Swin-T; also the video Swin of mmaction-style configs)."""
        def leaf(*names: str) -> Any:
            return next((v for k, v in under if k.rsplit(".", 1)[-1] in names), None)

        width = leaf("embed_dim", "embed_dims")
        if width is None or not isinstance(width.value, int):
            return None
        heads = ("decode_head", "roi_head", "bbox_head", "rpn_head", "mask_head", "panoptic_head", "auxiliary_head")
        if any(f".{h}." in f".{k}." for k, _ in self.r.params.items() for h in heads):
            return None  # a detector's or segmentor's heads are large: the backbone is not the whole model
        if base in {"swin", "swinv2"}:
            depths = leaf("depths")
            if depths is None or not isinstance(depths.value, list | tuple):
                return None
            word = self._SWIN_SHAPES.get((width.value, tuple(depths.value)))
            return (f"{base}-{word}", width.where + depths.where) if word else None
        if base == "vit":
            layers = leaf("num_layers", "depth")
            word = self._VIT_SHAPES.get((width.value, layers.value)) if layers is not None else None
            return (f"vit-{word}", width.where + layers.where) if word and layers is not None else None
        return None

    _FACTORS = (("depth_multiple", "width_multiple"), ("deepen_factor", "widen_factor"), ("depth", "width"))

    def _name_from_scale_factors(self) -> tuple[str, list[str]] | None:
        """A YOLO-style detector's size from its (depth, width) multipliers: YOLOX `depth 0.33, width 0.5` is
        YOLOX-s. The family comes from the config files', entry's and model types' names."""
        P = self.r.params
        text = " ".join([*self.r.configs, *self.r.py,
                         *(str(pv.value) for k, pv in P.items() if k.endswith(".type"))]).lower()
        family = next((f for f in ("yolox", "rtmdet", "yolov8", "yolov5") if f in text), None)
        if family is None:
            return None
        for d_key, w_key in self._FACTORS:
            d, w = P.get(d_key), P.get(w_key)
            if d is None or w is None or not all(isinstance(x.value, (int, float)) for x in (d, w)):
                continue
            scale = next((s for (dd, ww), s in known.SCALES[family].items()
                          if abs(dd - d.value) < 0.01 and abs(ww - w.value) < 0.01), None)
            if scale and known.lookup_model(family + scale):
                return family + scale, d.where + w.where
        return None

    def _family_from_code(self) -> tuple[str, list[str]] | None:
        """Model classes the job defines (`class GPT(nn.Module)`), or Megatron's pretrain_<family>.py."""
        for rel, s in self.r.py.items():
            names = {c["name"] for c in s["classes"]}
            if any(n.endswith("Generator") for n in names) and any(
                n.endswith("Discriminator") for n in names
            ):
                c = next(c for c in s["classes"] if c["name"].endswith("Discriminator"))
                return "gan", [f"{rel}:{c['line']}"]
        for rel, s in self.r.py.items():
            for c in s["classes"]:
                if any(
                    b.endswith(("Module", "LightningModule", "Model", "PreTrainedModel", "keras.Model"))
                    for b in c["bases"]
                ):
                    fam = known.family_of(c["name"])
                    if fam:
                        return fam, [f"{rel}:{c['line']}"]
        for rel, c in self.calls:  # library model classes: BertForMaskedLM(config), UNet2DModel(...)
            tail = c["func"].rsplit(".", 1)[-1]
            if re.match(r"^[A-Z]\w*(Model|LMHeadModel|For[A-Z]\w+)$", tail) and self._active(c) is not False:
                fam = known.family_of(tail)
                if fam:
                    return fam, [f"{rel}:{c['line']}"]
        if self.r.entry:
            stem = PurePosixPath(self.r.entry).stem
            m = re.match(r"pretrain_(\w+)", stem)
            if m and known.family_of(m.group(1)):
                return known.family_of(m.group(1)), list(self.r.launch.args_where)  # type: ignore[union-attr,return-value]
        return family_from_layers(self.r.py, self.r.entry)

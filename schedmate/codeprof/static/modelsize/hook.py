"""Where the static pass asks for a model's size from its definition: the job's own classes (counted), or a
definition file named after a well-known model."""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof import known
from schedmate.codeprof.known_models import KNOWN_MODELS
from schedmate.codeprof.params import CODE_DEFAULT, CONFIG
from schedmate.codeprof.static.darknet_batch import params_from_darknet_cfg
from schedmate.codeprof.static.modelsize import count_config_model, count_entry_model
from schedmate.codeprof.static.modelsize.embedding_tables import params_from_embedding_tables
from schedmate.codeprof.static.modelsize.family_knobs import HEADS as _HEADS
from schedmate.codeprof.static.modelsize.family_knobs import NAME_KEYS, cnn_from_knobs, family_of_word
from schedmate.codeprof.static.modelsize.hf_config import params_from_local_hf_config
from schedmate.codeprof.static.modelsize.loaded_json import params_from_loaded_json
from schedmate.codeprof.static.modelsize.knobs import params_from_knobs
from schedmate.codeprof.static.modelsize.rl_policies import (
    ALGO_WORD,
    atari_game,
    atari_policy_params,
    env_dims,
    mlp_policy_params,
)
from schedmate.codeprof.static.modelsize.seq2seq_knobs import params_from_seq2seq_knobs
from schedmate.codeprof.static.modelsize.tf_graph import count_tf_graph
from schedmate.codeprof.static.modelsize.stax_layers import count_stax
from schedmate.codeprof.static.modelsize.tf_variables import count_tf_variables
from schedmate.codeprof.static.names import HIDDEN, LAYERS, VOCAB

# files that define a model's architecture (Darknet .cfg, Caffe .prototxt, a YAML/JSON model spec)
_DEFINITION_FILE = re.compile(r"(?:^|/)([\w.-]+)\.(cfg|prototxt|ya?ml|json)$", re.IGNORECASE)


def definition_stem(value: str) -> str | None:
    """The model a definition file is named after (`cfg/yolov3-spp.cfg` -> yolov3-spp), only when the stem is a
    row of the well-known table (a size token alone in a file name is no evidence of the architecture)."""
    m = _DEFINITION_FILE.search(value.strip())
    if m is None:
        return None
    stem = m.group(1).lower()
    return stem if any(re.search(pat, stem) for pat, *_ in KNOWN_MODELS) else None


def _config_gives_dims(sp: Any, kinds: tuple[tuple[str, ...], ...] = (LAYERS, HIDDEN, VOCAB)) -> bool:
    """A language-model config with a depth, a width and a vocabulary (`n_layer`, `n_embd`, `vocab_size`): the
    transformer formula of derive.py reads it with the family's conventions (tied embeddings), as for any
    config-described model (an RNN's `hidden_size` and `num_layers` alone are not that)."""
    for names in kinds:
        got = sp._first(names, min_layer=CODE_DEFAULT)
        if got is None or isinstance(got[0], bool) or not isinstance(got[0], int) or got[0] <= 0:
            return False
    return True


def params_from_definition(sp: Any) -> None:
    """Parameters counted from the `nn.Module` classes the entry script (or its config) builds: the job's own
    definition beats any name it carries (a CIFAR `vgg16_bn` is not ImageNet's); a config's transformer dims
    keep their own formula."""
    entry = sp.r.entry
    if entry and entry.endswith(".py") and not _config_gives_dims(sp):
        _params_from_classes(sp, entry)
    if sp.r.val("params") is None and entry and entry.endswith(".py") and not _config_gives_dims(sp):
        got = count_tf_graph(sp.wd.read_text, sp._import_file, sp._resolver.eval, entry)
        if got is not None:
            sp.r.put("params", got[0], got[1], note="TF1 graph the entry script's builders create, by layer widths")
    if sp.r.val("params") is None:
        params_from_knobs(sp, _config_gives_dims(sp))
    if sp.r.val("params") is None:
        params_from_family_knobs(sp)
    if sp.r.val("params") is None:
        params_from_rl_env(sp)
    if sp.r.val("params") is None:
        params_from_seq2seq_knobs(sp)
    if sp.r.val("params") is None:
        params_from_embedding_tables(sp)
    if sp.r.val("params") is None:
        params_from_local_hf_config(sp)
    if sp.r.val("params") is None:
        params_from_loaded_json(sp)
    if sp.r.val("params") is None and entry and entry.endswith(".py"):
        got = count_tf_variables(sp.wd.read_text, sp._import_file, sp._resolver.eval, entry)
        if got is not None:
            sp.r.put("params", got[0], got[1], note="TF1 variables the entry script creates, by their shapes")
    if sp.r.val("params") is None and entry and entry.endswith(".py"):
        got = count_stax(sp.wd.read_text, sp._import_file, sp._resolver.eval, entry)
        if got is not None:
            sp.r.put("params", got[0], got[1], note="JAX stax model the entry script builds, from its init shape")
    if sp.r.val("params") is None:
        params_from_darknet_cfg(sp)  # a Darknet .cfg the job names: its layer list (static/darknet_batch.py)


_SMALL_IMAGES = re.compile(r"cifar|svhn|mnist|stl_?10|tiny_?imagenet", re.IGNORECASE)
_FAMILY_CLASS = re.compile(r"(?:^|\.)((?:Pre[Aa]ct)?(?:Wide_?)?Res(?:Net|NeXt)\w*|WRN|DenseNet\w*|VGG|ConvNeXt|"
                           r"SwinTransformer|MobileNetV2|EfficientNet)$")


def _image_context(sp: Any) -> tuple[bool, int | None]:
    """(32 px images?, the configured class count): a `cifar` model type, a small-image dataset named in the
    configs or on the command line, or an image size of at most 64; classes from `num_classes`-style keys."""
    P = sp.r.params
    cifar = bool(_SMALL_IMAGES.search(sp.command))
    classes = None
    for key, pv in P.items():
        leaf = key.rsplit(".", 1)[-1]
        if isinstance(pv.value, str) and leaf in {"type", "name", "dataset", "dataset_name", "data", "data_name"} \
                and _SMALL_IMAGES.search(pv.value):
            cifar = True
            classes = classes or (100 if "100" in pv.value else None)
        if leaf in {"image_size", "img_size", "input_size", "resolution"} and isinstance(pv.value, int) \
                and not isinstance(pv.value, bool) and 0 < pv.value <= 64:
            cifar = True
        if leaf in {"num_classes", "n_classes", "nb_classes"} and isinstance(pv.value, int) and pv.value > 0:
            classes = pv.value
    return cifar, classes


_PUBLISHED_SWIN = {(96, (2, 2, 6, 2)), (96, (2, 2, 18, 2)), (128, (2, 2, 18, 2)), (192, (2, 2, 18, 2))}


def _published(word: str, fam: str, values: dict[str, Any]) -> bool:
    """Whether a config section describes a published model the name table holds (`type='ResNet', depth=50` is
    resnet50; Swin-T/S/B/L by width and depths)."""
    depth = values.get("depth")
    if isinstance(depth, int) and not isinstance(depth, bool) and known.lookup_model(f"{word}{depth}".lower()):
        return True
    depths = values.get("depths")
    width = values.get("embed_dims", values.get("embed_dim"))
    return fam == "swin" and isinstance(depths, (list, tuple)) and (width, tuple(depths)) in _PUBLISHED_SWIN


def params_from_family_knobs(sp: Any) -> None:
    """A convolutional family named by a bare word in a config section or flag, or built by a call in the entry
    script, with the knobs that size it (depth, widening factor, growth rate, stage depths and widths): see family_knobs.py.
    Only one distinct size may result; a backbone beside detector heads is not the whole model."""
    P = sp.r.params
    items = P.items()
    if any(_HEADS.search(k) for k, _ in items):
        return
    cifar, classes = _image_context(sp)
    found: dict[int, list[str]] = {}
    for key, pv in items:
        section, _, leaf = key.rpartition(".")
        fam = family_of_word(pv.value) if leaf in NAME_KEYS else None
        if fam is None:
            continue
        pre = f"{section}." if section else ""
        values: dict[str, Any] = {}
        wheres: dict[str, list[str]] = {}
        for sub in (pre, f"{pre}{str(pv.value).lower()}.", f"{pre}{fam}."):
            for k, v in items:
                rest = k[len(sub):] if k.startswith(sub) else None
                if rest and "." not in rest and rest not in values:
                    values[rest], wheres[rest] = v.value, v.where
            if sub == pre and _published(str(pv.value), fam, values):
                break  # a published model dict (`type='ResNet', depth=50`) keeps its size from the name table
        else:
            got = cnn_from_knobs(fam, values, cifar, classes)
            if got is not None:
                found.setdefault(got[0], [*pv.where, *(w for u in got[1] for w in wheres.get(u, []))])
    if not found:
        for rel, c in sp.calls:
            if rel != sp.r.entry:
                continue  # a family class built inside another model's code is a part of it (a backbone)
            m = _FAMILY_CLASS.search(c["func"])
            fam = family_of_word(m.group(1)) if m else None
            if fam is None or not c.get("kwargs") or sp._active(c) is False:
                continue
            values = {}
            for name, expr in c["kwargs"].items():
                ok, v, _ = sp._resolver.eval(expr)
                if ok:
                    values[name] = v
            got = cnn_from_knobs(fam, values, cifar, classes)
            if got is not None:
                found.setdefault(got[0], [f"{rel}:{c['line']}"])
    if len(found) == 1:
        n, where = next(iter(found.items()))
        sp.r.put("params", n, list(dict.fromkeys(where)), note="from the family's knobs (depth, width, growth, stages)")


def _params_from_classes(sp: Any, entry: str) -> None:
    got = count_entry_model(sp.wd.read_text, sp._import_file, sp._resolver.eval, entry, rl_input_widths(sp),
                            sp.wd.list_files)
    if got is not None:
        sp.r.put("params", got[0], got[1], note="counted from the model classes the entry script builds")
        return
    items = [(k, pv.value) for k, pv in sp.r.params.items() if pv.layer >= CONFIG]
    found = count_config_model(sp.wd.read_text, sp._import_file, sp._resolver.eval, items)
    if found is not None:
        pv = sp.r.params.get(found[2])
        where = list(pv.where) if pv is not None else []
        sp.r.put("params", found[0], [*where, *found[1]], note="counted from the model class a config builds")


_LAUNCHER_FILE = re.compile(r"(?:^|[\s/])([\w.-]+)\.(sh|bash|slurm|sbatch)(?=\s|$)")


def name_from_launcher(sp: Any) -> tuple[str, list[str]] | None:
    """A model named by the launcher script the command runs (`run_sft_Yi_34b.sh` -> yi-34b): only a file name
    that carries both a family keyword and a size token (`train_7b.sh` alone names no architecture), and only
    when no config gives the model's depth and width (those describe it better than a file name)."""
    if _config_gives_dims(sp, (LAYERS, HIDDEN)):
        return None
    for m in _LAUNCHER_FILE.finditer(sp.command):
        words = re.sub(r"[_\s]+", "-", m.group(1).lower())
        size = known.size_from_name(words)
        fam = known.family_keyword(words)
        if size is None or fam is None:
            continue
        tok = next((t for t in re.findall(r"(?:\d+x)?\d+(?:\.\d+)?[bm](?=-|$)", words)), None)
        kw = next((kw for kw, f in known.FAMILY_KEYWORDS if f == fam and kw.strip("-") in words), fam)
        return f"{kw.strip('-')}-{tok}", [f"{m.group(1)}.{m.group(2)}"]
    return None


# a transformers config class built with no arguments is its family's reference model (the library's defaults)
_DEFAULT_CONFIGS = {"ViTMAEConfig": "mae-vit-base", "BertConfig": "bert-base-uncased", "GPT2Config": "gpt2",
                    "ViTConfig": "vit-base-patch16-224", "LlamaConfig": "llama-7b", "MistralConfig": "mistral-7b",
                    "MixtralConfig": "mixtral-8x7b", "RobertaConfig": "roberta-base", "T5Config": "t5-small",
                    "OPTConfig": "opt-125m", "SwinConfig": "swin-tiny", "DeiTConfig": "deit-base"}


def name_from_default_config(sp: Any) -> tuple[str, list[str]] | None:
    """`config = ViTMAEConfig()` on the path the run takes (no config or model name given): the family's
    reference model, whose size the well-known table has."""
    hits = []
    for rel, c in sp.calls:
        tail = c["func"].rsplit(".", 1)[-1]
        if tail in _DEFAULT_CONFIGS and not c["args"] and not c["kwargs"] and sp._active(c) is True:
            hits.append((_DEFAULT_CONFIGS[tail], [f"{rel}:{c['line']}"]))
    return hits[0] if len({h[0] for h in hits}) == 1 else None


_OWN_LAYERS = re.compile(r"\b(?:Linear|Dense)\(")
_ENV_KEYS = {"env", "env_id", "env_name", "environment", "game", "task", "task_name", "gym_id", "domain_task"}
_ENV_CALLS = {"make", "make_env", "make_atari", "make_vec_env", "make_atari_env", "get_atari", "get_atari_transitions"}
_HIDDEN_LISTS = ("hidden_sizes", "net_arch", "hidden_dims", "hiddens", "actor_fc_layers", "fc_layer_params",
                 "hidden_layers", "layer_sizes", "hidden_layer_sizes")


_KWARGS_LIST = re.compile(r"\b(?:" + "|".join(_HIDDEN_LISTS) + r")\s*=\s*[\[(]\s*(\d+(?:\s*,\s*\d+)*)\s*,?\s*[\])]")


def _hidden_sizes(P: Any) -> tuple[list[int] | None, list[str]]:
    """The policy's hidden widths when the job states them: a list, a width times a depth, or a list inside a
    keyword-argument string (`policy_kwargs: "dict(net_arch=[400, 300])"`)."""
    for pv in [v for _, v in P.items()]:
        if isinstance(pv.value, str) and (m := _KWARGS_LIST.search(pv.value)):
            return [int(x) for x in re.split(r"\s*,\s*", m.group(1))], list(pv.where)
    for k in _HIDDEN_LISTS:
        pv = P.get(k)
        v = pv.value if pv is not None else None
        if isinstance(v, dict):
            v = v.get("pi") or v.get("actor")
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, int) and not isinstance(x, bool) and x > 0
                                                      for x in v):
            return list(v), list(pv.where)  # type: ignore[union-attr]
    width = next((pv for k in ("hidden_dim", "hid", "hidden_size", "hidden_units") if (pv := P.get(k)) is not None
                  and isinstance(pv.value, int) and not isinstance(pv.value, bool) and pv.value > 0), None)
    if width is None:
        return None, []
    depth = next((pv for k in ("hidden_depth", "n_hidden", "l", "num_hidden_layers", "n_layers") if (pv := P.get(k))
                  is not None and isinstance(pv.value, int) and not isinstance(pv.value, bool) and pv.value > 0), None)
    return [width.value] * (depth.value if depth else 2), [*width.where, *(depth.where if depth else [])]


def _hidden_sizes_of_calls(sp: Any) -> tuple[list[int] | None, list[str]]:
    """The hidden widths a network factory is called with on the run's path (`make_networks(spec,
    hidden_layer_sizes=(256, 256))`), when every such call agrees."""
    found: dict[tuple[int, ...], list[str]] = {}
    for rel, c in sp.calls:
        for k, expr in (c.get("kwargs") or {}).items():
            if k not in _HIDDEN_LISTS or sp._active(c) is False:
                continue
            ok, v, ev = sp._resolver.eval(expr)
            if ok and isinstance(v, (list, tuple)) and v and all(
                    isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v):
                found.setdefault(tuple(v), [f"{rel}:{c['line']}", *ev])
    if len(found) != 1:
        return None, []
    sizes, where = next(iter(found.items()))
    return list(sizes), where


def _default_config_files(sp: Any) -> list[str]:
    """The config file an absl entry script loads unless told otherwise (`config_flags.DEFINE_config_file('config',
    'configs/sac_default.py')`): its path often names the algorithm."""
    out = []
    for _, c in sp.calls:
        if c["func"].rsplit(".", 1)[-1] == "DEFINE_config_file" and sp._active(c) is not False:
            expr = c["args"][1] if len(c["args"]) > 1 else (c.get("kwargs") or {}).get("default")
            ok, v, _ = sp._resolver.eval(expr) if expr else (False, None, [])
            if ok and isinstance(v, str):
                out.append(v)
    return out


def _job_envs(sp: Any) -> tuple[dict[str, list[str]], bool]:
    """The environments the job names (config keys and `make(...)` calls), and whether Atari is in sight."""
    envs: dict[str, list[str]] = {}
    for key, pv in sp.r.params.items():
        if key.rsplit(".", 1)[-1] in _ENV_KEYS and isinstance(pv.value, str) and pv.value.strip():
            envs.setdefault(pv.value.strip(), list(pv.where))
    atari_ctx = "atari" in sp.command.lower()
    for rel, c in sp.calls:
        tail = c["func"].rsplit(".", 1)[-1]
        atari_ctx = atari_ctx or "atari" in c["func"].lower()
        if tail in _ENV_CALLS and c["args"] and sp._active(c) is not False:
            ok, v, ev = sp._resolver.eval(c["args"][0])
            if ok and isinstance(v, str) and v.strip():
                envs.setdefault(v.strip(), [f"{rel}:{c['line']}", *ev])
    return envs, atari_ctx


def rl_input_widths(sp: Any) -> tuple[int, ...] | None:
    """(observations, actions) of the one well-known environment the job names: the input widths of a policy or
    critic whose `__call__(obs[, action])` the definition leaves open (flax_modules.py)."""
    dims = {d for e in _job_envs(sp)[0] if (d := env_dims(e))}
    if len(dims) != 1:
        return None
    obs, act, _ = next(iter(dims))
    return (obs, act)


def params_from_rl_env(sp: Any) -> None:
    """An RL job's networks from its environment (see rl_policies.py): the Nature CNN for an Atari game unless the
    job defines its own convolutional network, MLPs for a well-known vector-observation environment with the
    algorithm named by the command, the entry script or an `algo` key."""
    P = sp.r.params
    envs, atari_ctx = _job_envs(sp)
    words = " ".join([sp.command, sp.r.entry or "", *(str(pv.value) for k, pv in P.items()
                                                      if k.rsplit(".", 1)[-1] in {"algo", "algorithm", "agent"}),
                      *_default_config_files(sp)])
    algo = next(iter(ALGO_WORD.findall(words.lower())), None)
    games = {g: w for e, w in envs.items() if (g := atari_game(e, atari_ctx))}
    if games:
        own_cnn = any("nn.Conv2d(" in (sp.wd.read_text(rel) or "") for rel in sp.r.py)
        if len(games) == 1 and not own_cnn:
            game, where = next(iter(games.items()))
            sp.r.put("params", atari_policy_params(game, algo in {"ppo", "a2c", "trpo"}), where,
                     note="the Nature CNN an Atari policy uses by default")
        return
    dims = {d: w for e, w in envs.items() if (d := env_dims(e))}
    if len(dims) != 1 or algo is None:
        return
    (obs, act, discrete), where = next(iter(dims.items()))
    hidden, hw = _hidden_sizes(P)
    if hidden is None:
        hidden, hw = _hidden_sizes_of_calls(sp)
    entry_text = (sp.wd.read_text(sp.r.entry) or "") if sp.r.entry else ""
    if hidden is None and _OWN_LAYERS.search(entry_text):
        return  # the entry script writes its own network: the algorithm's default widths are not its
    sp.r.put("params", mlp_policy_params(obs, act, discrete, algo, hidden), [*where, *hw],
             note=f"{algo} MLP networks for the environment's observation and action sizes")

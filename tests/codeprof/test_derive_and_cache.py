"""Derivation is consistent with the workload catalogue; the version cache reuses unchanged work."""

from __future__ import annotations

import pytest

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.cache import VersionCache
from schedmate.codeprof.derive import derive, params_from_dims
from schedmate.codeprof.facts import Fact
from schedmate.records import sensitivity_from_slowdown

from .codeprof_support import DATASET, make_job


def _facts(**kw):
    return {k.replace("__", "."): Fact(value=v, source="static", evidence=["cmd"]) for k, v in kw.items()}


@pytest.mark.parametrize(
    "family,name,slowdown",
    [
        ("resnet", "resnet50", 1.05),
        ("resnet", "resnet18", 1.33),
        ("bert", "bert-base", 3.0),
        ("gpt", "gpt2", 4.0),
        ("llama", "llama-7b", 4.0),
        ("t5", "t5-base", 2.0),
        ("dlrm", None, 1.8),
    ],
)
def test_a_multi_gpu_job_gets_the_published_slowdown_of_its_family(family, name, slowdown):
    facts = _facts(framework="pytorch", model_family=family, model_name=name, num_gpus=16, gpus_per_node=8)
    extras = derive(facts)
    assert extras["spread_slowdown"] == slowdown
    assert facts["network_sensitivity"].value == pytest.approx(sensitivity_from_slowdown(slowdown), abs=1e-3)
    assert facts["comm_heavy"].value is (sensitivity_from_slowdown(slowdown) >= 0.5)
    assert facts["network_sensitivity"].source == "derived"


def test_a_single_gpu_job_is_never_network_sensitive_whatever_its_model():
    facts = _facts(framework="pytorch", model_family="gpt", num_gpus=1)
    derive(facts)
    assert facts["network_sensitivity"].value == 0.0 and facts["comm_heavy"].value is False


def test_transformer_parameters_follow_twelve_l_d_squared_plus_embeddings():
    p, _ = params_from_dims(
        {"layers": (12, ["a:1"]), "hidden": (768, ["a:2"]), "vocab": (50304, ["a:3"])}, "gpt"
    )
    assert p == 12 * 12 * 768**2 + 50304 * 768


def test_global_batch_and_accumulation_are_derived_from_each_other_over_the_data_parallel_size():
    facts = _facts(
        framework="megatron",
        num_gpus=64,
        parallelism__tensor=8,
        parallelism__pipeline=4,
        micro_batch_size=1,
        global_batch_size=512,
    )
    derive(facts)
    assert facts["grad_accum_steps"].value == 256
    facts = _facts(framework="pytorch", num_gpus=16, micro_batch_size=4, grad_accum_steps=8)
    derive(facts)
    assert facts["global_batch_size"].value == 4 * 8 * 16


def test_a_static_fact_is_never_replaced_by_a_derived_one():
    facts = _facts(framework="pytorch", model_name="gpt2", params=1.0e9, num_gpus=8)
    derive(facts)
    assert facts["params"].value == 1.0e9 and facts["params"].source == "static"


def test_a_resubmitted_job_is_answered_from_the_cache_without_parsing_anything(tmp_path):
    cache = VersionCache(tmp_path / "cp.sqlite")
    job = DATASET / "jobs" / "nanogpt_gpt2_ddp_one_node"
    first = analyze_code(job, use_llm=False, cache=cache)
    parsed = cache.parsed
    again = analyze_code(job, use_llm=False, cache=cache)
    assert first.extras["cache"] == "miss" and again.extras["cache"] == "hit"
    assert cache.parsed == parsed
    assert again.to_contract()["global_batch_size"] == first.to_contract()["global_batch_size"] == 480


def test_an_edited_job_re_reads_only_the_changed_file_and_recomputes_the_fields_it_touched(tmp_path):
    cache = VersionCache(tmp_path / "cp.sqlite")
    job = make_job(
        tmp_path / "job",
        {
            "train.py": "import torch\nfrom model import Net\nimport argparse\n"
            "p = argparse.ArgumentParser()\n"
            "p.add_argument('--epochs', type=int, default=3)\np.add_argument('--bs', type=int, default=8)\n"
            "args = p.parse_args()\nloader = torch.utils.data.DataLoader(ds, batch_size=args.bs)\n"
            "model = Net().cuda()\n",
            "model.py": "import torch.nn as nn\nclass Net(nn.Module):\n    pass\n",
        },
        command="python train.py",
    )
    analyze_code(job, use_llm=False, cache=cache)
    assert cache.parsed == 2
    (job / "train.py").write_text((job / "train.py").read_text().replace("default=3", "default=5"))
    prof = analyze_code(job, use_llm=False, cache=cache)
    assert prof.extras["cache"] == "partial" and prof.extras["changed_files"] == ["train.py"]
    assert cache.parsed == 3 and cache.parse_hits == 1  # model.py came from the parse cache
    assert prof.value("epochs") == 5 and "epochs" in prof.extras["recomputed_fields"]

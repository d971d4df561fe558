"""Training frameworks' own entry points: recipes, configs named without a path, workers under srun."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

CONFIG = """\
model:
  _component_: torchtune.models.llama3_1.llama3_1_8b
tensor_parallel_dim: {tp}
batch_size: 2
epochs: 1
max_steps_per_epoch: {cap}
gradient_accumulation_steps: 4
"""


def tune_repo(tmp_path: Path, tp: int = 1, cap: str = "null") -> Path:
    (tmp_path / "recipes" / "configs" / "llama3_1").mkdir(parents=True)
    (tmp_path / "recipes" / "full_finetune_distributed.py").write_text("import torch\n")
    (tmp_path / "recipes" / "configs" / "llama3_1" / "8B_full.yaml").write_text(CONFIG.format(tp=tp, cap=cap))
    return tmp_path


def test_a_recipe_and_a_config_named_without_its_directory_are_found_and_read(tmp_path):
    wd = tune_repo(tmp_path)
    p = analyze_code(wd, "tune run --nproc_per_node 4 full_finetune_distributed --config llama3_1/8B_full",
                     use_llm=False)
    f = p.facts
    assert p.extras["entry_script"] == "recipes/full_finetune_distributed.py"
    assert f["num_gpus"].value == 4
    assert f["micro_batch_size"].value == 2 and f["global_batch_size"].value == 2 * 4 * 4
    assert f["epochs"].value == 1 and f.get("train_steps") is None
    assert f["model_name"].value == "llama3_1_8b" and f["params"].value == 8e9  # the config's model factory


def test_workers_a_framework_entry_point_starts_under_srun_are_counted_per_node(tmp_path):
    wd = tune_repo(tmp_path, tp=8)
    (wd / "run.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks=2\n#SBATCH --gpus-per-task=8\n"
        "srun tune run --nnodes 2 --nproc_per_node 8 --rdzv_id 101 full_finetune_distributed "
        "--config llama3_1/8B_full output_dir=/tmp/x\n"
    )
    f = analyze_code(wd, "sbatch run.sbatch", use_llm=False).facts
    assert f["num_gpus"].value == 16
    assert f["global_batch_size"].value == 2 * 4 * (16 // 8)  # tensor-parallel groups of 8: 2 replicas


def test_a_cap_of_steps_per_epoch_makes_the_run_length_steps(tmp_path):
    wd = tune_repo(tmp_path, cap="1000")
    f = analyze_code(wd, "tune run full_finetune_distributed --config llama3_1/8B_full", use_llm=False).facts
    assert f["train_steps"].value == 1000 and f.get("epochs") is None
    assert f["num_gpus"].value == 1  # the single-process default of `tune run`


def test_an_ambiguous_config_name_is_said_and_not_read(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d / "configs").mkdir(parents=True)
        (tmp_path / d / "configs" / "run.yaml").write_text("epochs: 3\n")
    (tmp_path / "train.py").write_text("import argparse\np = argparse.ArgumentParser()\np.add_argument('--config')\n")
    p = analyze_code(tmp_path, "python train.py --config configs/run", use_llm=False)
    assert p.facts.get("epochs") is None
    assert any("ambiguous" in w for w in p.warnings)

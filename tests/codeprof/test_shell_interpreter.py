"""The launcher interpreter evaluates job scripts the way bash would, without running them."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.codeprof.launch import LaunchError, parse_launch
from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.shell import interpret_command, unknown_names


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


SBATCH_JOB = {
    "env.sh": "export NGPUS=4\nMICRO=2\n",
    "run.sh": """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
source ./env.sh
NNODES=${NNODES:-$SLURM_NNODES}
STEPS=$(( 1000 * 2 ))
ARGS=(--micro $MICRO --steps $STEPS)
if [ "$1" == "debug" ]; then
  STEPS=10
fi
srun torchrun --nnodes=$NNODES --nproc_per_node=$NGPUS train.py "${ARGS[@]}"
""",
    "train.py": "print('train')\n",
}


def the_launch(execs):
    return next(e for e in execs if "torchrun" in e.argv)


def test_sourced_files_defaults_arithmetic_and_arrays_expand_as_bash_would(tmp_path):
    run = interpret_command("sbatch run.sh prod", Workdir(write(tmp_path, SBATCH_JOB)))
    ex = the_launch(run.execs)
    assert ex.argv == ["srun", "torchrun", "--nnodes=2", "--nproc_per_node=4", "train.py", "--micro", "2", "--steps",
                       "2000"]
    assert "env.sh:1" in ex.evidence and "run.sh:5" in ex.evidence  # NGPUS and NNODES assignments
    assert ex.sbatch["nodes"] == ("2", "run.sh:2")


def test_a_positional_parameter_decides_a_branch(tmp_path):
    files = {"run.sh": 'STEPS=2000\nif [ "$1" == "debug" ]; then\n  STEPS=10\nfi\npython train.py --steps $STEPS\n'}
    wd = Workdir(write(tmp_path, files))
    assert interpret_command("bash run.sh debug", wd).execs[-1].argv[-1] == "10"
    assert interpret_command("bash run.sh prod", wd).execs[-1].argv[-1] == "2000"


def test_a_branch_on_an_unknown_value_is_not_guessed(tmp_path):
    files = {"run.sh": 'if [ "$MODE" = small ]; then N=2; else N=8; fi\ntorchrun --nproc_per_node=$N train.py\n',
             "train.py": ""}
    run = interpret_command("bash run.sh", Workdir(write(tmp_path, files)))
    launches = [e for e in run.execs if "torchrun" in e.argv]
    values = {e.argv[1] for e in launches}
    # either both branches are reported, or the value is marked unknown: never one of them picked silently
    assert values == {"--nproc_per_node=2", "--nproc_per_node=8"} or any(unknown_names(v) for v in values)


def test_sbatch_headers_give_the_gpus_of_the_job(tmp_path):
    L = parse_launch("sbatch run.sh prod", Workdir(write(tmp_path, SBATCH_JOB)))
    assert L.chain == ["sh:run.sh", "sbatch", "srun", "torchrun"]
    assert L.get("num_nodes") == 2 and L.get("procs_per_node") == 4 and L.get("num_procs") == 8


def test_an_unset_variable_without_default_stays_unknown_with_its_name(tmp_path):
    L = parse_launch("torchrun --nproc_per_node=$NGPU train.py", Workdir(write(tmp_path, {"train.py": ""})))
    assert "procs_per_node" not in L.settings
    assert L.unknown["procs_per_node"] == ["NGPU"]


def test_the_job_environment_fills_a_variable(tmp_path):
    L = parse_launch("torchrun --nproc_per_node=$NGPU train.py", Workdir(write(tmp_path, {"train.py": ""})),
                     env={"NGPU": "8"})
    assert L.get("procs_per_node") == 8


def test_an_endless_loop_is_cut_and_said(tmp_path):
    files = {"run.sh": "i=0\nwhile true; do i=$((i+1)); done\npython train.py --steps $i\n", "train.py": ""}
    run = interpret_command("bash run.sh", Workdir(write(tmp_path, files)))
    assert any("loop stopped" in n for n in run.notes)
    assert any("train.py" in e.argv for e in run.execs)


def test_a_config_written_by_a_here_document_is_readable_as_a_file(tmp_path):
    files = {"run.sh": "STEPS=300\ncat > gen.yaml <<EOF\nmax_steps: $STEPS\nEOF\npython train.py gen.yaml\n",
             "train.py": ""}
    wd = Workdir(write(tmp_path, files))
    interpret_command("bash run.sh", wd)
    assert "max_steps: 300" in (wd.read_text("gen.yaml") or "")
    assert not (tmp_path / "gen.yaml").exists()  # nothing is written to disk


def test_a_command_given_from_the_repository_root_with_cd_reads_the_subdirectory(tmp_path):
    files = {f"recipes/llm/{k}": v for k, v in SBATCH_JOB.items()}
    L = parse_launch("cd recipes/llm && bash run.sh", Workdir(write(tmp_path, files)))
    assert L.script == "recipes/llm/train.py"
    assert L.get("procs_per_node") == 4


def test_functions_and_case_statements_are_followed(tmp_path):
    files = {"run.sh": """launch() {
  torchrun --nproc_per_node=$1 train.py
}
case "$SIZE" in
  big) G=8 ;;
  *) G=2 ;;
esac
launch $G
""", "train.py": ""}
    L = parse_launch("SIZE=big bash run.sh", Workdir(write(tmp_path, files)))
    assert L.get("procs_per_node") == 8


def test_a_script_that_is_not_valid_shell_is_reported_not_guessed(tmp_path):
    files = {"run.sh": "if then fi (((\n"}
    with pytest.raises(LaunchError):
        parse_launch("bash run.sh", Workdir(write(tmp_path, files)))


def test_command_substitution_of_unknown_programs_is_unknown(tmp_path):
    files = {"run.sh": "N=$(nvidia-smi -L | wc -l)\ntorchrun --nproc_per_node=$N train.py\n", "train.py": ""}
    L = parse_launch("bash run.sh", Workdir(write(tmp_path, files)))
    assert "procs_per_node" not in L.settings


def test_a_batch_script_given_to_sbatch_as_a_here_document_is_followed_with_its_options(tmp_path):
    files = {
        "submit.sh": 'EPOCHS=2\nsbatch -N 2 --ntasks-per-node 4 --gres=gpu:4 <<EOF\n#!/bin/bash\n'
                     'srun --wait 0 python train.py --epochs $EPOCHS\nEOF\n',
        "train.py": "",
    }
    L = parse_launch("bash submit.sh", Workdir(write(tmp_path, files)))
    assert L.script == "train.py" and L.args == ["--epochs", "2"]  # the outer shell expands the document
    assert L.get("num_nodes") == 2 and L.get("num_procs") == 8  # `--wait 0` is srun's option, not a program


def test_a_path_into_the_authors_own_clone_is_read_from_the_workdir(tmp_path):
    files = {
        "scripts/run.sh": "PROJ=/scratch/alice/myrepo\nbash $PROJ/scripts/inner.sh\n",
        "scripts/inner.sh": "python $UNSET_ROOT/myrepo/src/train.py --lr 1\n",
        "src/train.py": "",
    }
    wd = Workdir(write(tmp_path, files))
    L = parse_launch("bash scripts/run.sh", wd)
    assert "sh:scripts/inner.sh" in L.chain and L.script == "src/train.py"
    assert wd.rel("/etc/passwd") is None and wd.rel("/usr/lib/python3/site-packages/src/train.py") is None


def test_node_and_gpu_counting_pipelines_take_the_allocation_values(tmp_path):
    files = {
        "run.sh": "#!/bin/bash\n#SBATCH --nodes=3\n#SBATCH --gpus-per-node=4\n"
                  'NN=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | wc -l)\nNG=$(nvidia-smi -L | wc -l)\n'
                  "torchrun --nnodes $NN --nproc_per_node $NG train.py\n",
        "train.py": "",
    }
    L = parse_launch("sbatch run.sh", Workdir(write(tmp_path, files)))
    assert L.get("num_nodes") == 3 and L.get("procs_per_node") == 4
    # outside a Slurm allocation the same pipelines stay unknown
    (tmp_path / "local.sh").write_text("NG=$(nvidia-smi -L | wc -l)\ntorchrun --nproc_per_node $NG train.py\n")
    L2 = parse_launch("bash local.sh", Workdir(tmp_path))
    assert L2.get("procs_per_node") is None and "procs_per_node" in L2.unknown


def test_process_substitution_is_a_word_for_a_pipe_that_is_never_run(tmp_path):
    files = {"run.sh": 'paste -d " " <(cut -f 1 a.txt) \\\n  <(cut -f 2- a.txt | tr -d " ") > b.txt\n'
                       "python train.py --epochs 3\n", "train.py": ""}
    L = parse_launch("bash run.sh", Workdir(write(tmp_path, files)))
    assert L.script == "train.py" and L.args == ["--epochs", "3"]


def test_the_script_directory_idiom_with_end_of_options_and_silenced_output_resolves(tmp_path):
    files = {"training/run.sh": 'DIR=$(cd -- "$( dirname -- "${BASH_SOURCE[0]}" )" &> /dev/null && pwd)\n'
                                "python ${DIR}/train.py --lr 1\n",
             "training/train.py": ""}
    L = parse_launch("bash training/run.sh", Workdir(write(tmp_path, files)))
    assert L.script == "training/train.py"


def test_copies_of_one_program_started_side_by_side_are_one_job_of_that_many_processes(tmp_path):
    ranks = " \\\n  & ".join(f"python train.py --rank {r} --cuda-id {r}" for r in range(4))
    files = {"run.sh": f"(trap 'kill 0' SIGINT; {ranks} & wait)\n", "train.py": "import torch\n"}
    L = parse_launch("bash run.sh", Workdir(write(tmp_path, files)))
    assert L.get("procs_per_node") == 4 and L.get("num_procs") == 4
    # the same program run one after the other (a sweep over seeds) is not parallel
    files = {"seq.sh": "python train.py --seed 1\npython train.py --seed 2\n"}
    L2 = parse_launch("bash seq.sh", Workdir(write(tmp_path, files)))
    assert L2.get("procs_per_node") == 1


def test_a_script_reading_its_own_config_with_grep_and_awk_gets_the_values_grep_would_print(tmp_path):
    files = {
        "cfg.yaml": "model: llama\ngradient_accumulation_steps: 4\nuse_vllm: false\n",
        "run.sh": "GA=$(grep 'gradient_accumulation_steps' cfg.yaml | awk '{print $2}')\n"
                  "N=8\nif grep -qE '^\\s*use_vllm:\\s*true' cfg.yaml; then N=7; fi\n"
                  "torchrun --nproc_per_node $N train.py --gradient_accumulation_steps $GA\n",
        "train.py": "",
    }
    L = parse_launch("bash run.sh", Workdir(write(tmp_path, files)))
    assert L.get("procs_per_node") == 8 and L.args == ["--gradient_accumulation_steps", "4"]


def test_text_pipelines_run_only_the_utilities_they_model():
    from schedmate.codeprof.shell.textutils import run_pipeline

    text = {"a.txt": "x: 1\ny: 2\nx: 3\n"}
    assert run_pipeline("grep x a.txt | awk '{print $2}' | head -n 1", text.get) == ("1", True)
    assert run_pipeline("grep -c x a.txt", text.get) == ("2", True)
    assert run_pipeline("grep -q z a.txt", text.get) == ("", False)
    assert run_pipeline("grep x a.txt | sh", text.get) is None  # anything else: unknown, never run
    assert run_pipeline("grep x /etc/missing", text.get) is None


def test_an_option_after_the_script_belongs_to_the_script_not_the_interpreter(tmp_path):
    L = parse_launch("python train.py -c config.json -m 3", Workdir(write(tmp_path, {"train.py": ""})))
    assert L.script == "train.py" and L.args == ["-c", "config.json", "-m", "3"]
    with pytest.raises(LaunchError):
        parse_launch("python -c 'print(1)'", Workdir(tmp_path))


def test_an_unknown_command_substitution_stays_one_word_and_cd_into_the_authors_clone_is_the_workdir(tmp_path):
    root = tmp_path / "myrepo"
    files = {"run.sh": "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=4\ncd /fsx/alice/myrepo\n"
                       "export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)\n"
                       "srun torchrun --nproc_per_node=$SLURM_GPUS_PER_NODE --nnodes=$SLURM_NNODES "
                       "--rdzv_endpoint=$MASTER_ADDR:29500 train.py\n",
             "train.py": ""}
    L = parse_launch("sbatch run.sh", Workdir(write(root, files)))
    assert L.script == "train.py" and L.get("num_procs") == 8

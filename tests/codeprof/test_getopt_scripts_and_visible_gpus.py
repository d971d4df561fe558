"""Shell idioms of recipe scripts (`run.sh --stage 2 --name x`): GNU `getopt` normalising the arguments for
an `eval set --` and a `while true; case $1 in` loop, nested unquoted command substitutions that climb to the
repository root (`$(dirname $(dirname $exp_dir))`), and `accelerate launch` under a `CUDA_VISIBLE_DEVICES`
that shows it a single GPU."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.shell.getopt import normalise
from tests.codeprof.codeprof_support import make_job

TRAIN = """
    import argparse
    import torch
    p = argparse.ArgumentParser()
    p.add_argument('--epochs', type=int, default=1)
    p.add_argument('--tag')
    p.add_argument('--bs', type=int, default=6)
    a = p.parse_args()
    loader = torch.utils.data.DataLoader(make_set(), batch_size=a.bs)
    net = build().cuda()
    for epoch in range(a.epochs):
        for batch in loader:
            opt.step()
"""


def val(facts, field):
    return facts[field].value if field in facts else None


def test_getopt_output_puts_each_option_and_value_apart_and_operands_last():
    got = normalise(["-o", "c:n:v", "--long", "device:,config:,tag:,verbose", "--",
                     "--tag=run 1", "-vc", "a.json", "extra", "--dev", "2"])
    assert got == "--tag 'run 1' -v -c a.json --device 2 -- extra"
    assert normalise(["-o", "a", "--long", "tag:", "--", "--nope"]) is None  # getopt would reject it
    assert normalise(["-o", "a", "--long", "tag:", "--", "--tag"]) is None  # a missing value too


def test_a_recipe_parsed_with_getopt_and_a_case_loop_gets_its_stage_and_name(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN, "recipes/tts/run.sh": """
        opts=$(getopt -o s:n: --long stage:,name:,epochs: -- "$@")
        eval set -- "$opts"
        while true; do
          case $1 in
            -s | --stage) shift; stage=$1; shift ;;
            -n | --name) shift; name=$1; shift ;;
            --epochs) shift; n_ep=$1; shift ;;
            --) shift; break ;;
          esac
        done
        if [ $stage -eq 1 ]; then
          python prepare.py
        fi
        if [ $stage -eq 2 ]; then
          python train.py --tag $name --epochs $n_ep
        fi
    """})
    f = analyze_code(tmp_path, "bash recipes/tts/run.sh --stage 2 --name demo --epochs 9", use_llm=False).facts
    assert val(f, "epochs") == 9 and val(f, "micro_batch_size") == 6


def test_nested_unquoted_command_substitutions_climb_to_the_repository_root(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN, "recipes/tts/demo/run.sh": """
        exp_dir=$(cd `dirname $0`; pwd)
        work_dir=$(dirname $(dirname $(dirname $exp_dir)))
        cd $work_dir
        python "${work_dir}"/train.py --epochs 4
    """})
    f = analyze_code(tmp_path, "bash recipes/tts/demo/run.sh", use_llm=False).facts
    assert val(f, "epochs") == 4 and val(f, "micro_batch_size") == 6  # train.py at the root was read


def test_accelerate_launch_shown_one_gpu_runs_one_process_on_it(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN, "run.sh": """
        gpu=${GPU_ID:-3}
        CUDA_VISIBLE_DEVICES=$gpu accelerate launch train.py --epochs 2
    """})
    f = analyze_code(tmp_path, "bash run.sh", use_llm=False).facts
    assert val(f, "num_gpus") == 1 and val(f, "global_batch_size") == 6


def test_accelerate_launch_shown_several_gpus_leaves_the_count_to_the_machine_config(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN, "run.sh": """
        CUDA_VISIBLE_DEVICES=0,1 accelerate launch train.py --epochs 2
    """})
    f = analyze_code(tmp_path, "bash run.sh", use_llm=False).facts
    assert val(f, "num_gpus") is None  # the default accelerate config on the machine decides

"""Kaldi-style recipes (ESPnet, icefall, asteroid, vocoder recipes): `. utils/parse_options.sh` turns
`--name value` arguments into the script's variables, and job runners (`run.pl`, `queue.pl`) run the command
after their options and log file."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

RUN = """
#!/bin/bash
. ./cmd.sh || exit 1
stage=0
stop_stage=100
n_gpus=1
conf=conf/small.yaml

. utils/parse_options.sh || exit 1

if [ "${stage}" -le 0 ] && [ "${stop_stage}" -ge 0 ]; then
    python local/make_lists.py --out data
fi
if [ "${stage}" -le 1 ] && [ "${stop_stage}" -ge 1 ]; then
    if [ "${n_gpus}" -gt 1 ]; then
        train="python -m torch.distributed.launch --nproc_per_node ${n_gpus} -m voc.bin.train"
    else
        train="voc-train"
    fi
    ${cuda_cmd} --gpu "${n_gpus}" exp/train.log \\
        ${train} --config "${conf}" --outdir exp
fi
"""
OPTS = """
# a simplified stand-in for Kaldi's option parser (the real one uses eval and indirect expansion)
while true; do
  [ -z "${1:-}" ] && break
  case "$1" in
    --*) name=`echo "$1" | sed s/^--// | sed s/-/_/g`; eval $name=\\"$2\\"; shift 2 ;;
    *) break ;;
  esac
done
"""
FILES = {
    "setup.py": "from setuptools import setup\nsetup(name='voc', entry_points={'console_scripts': "
                "['voc-train=voc.bin.train:main']})\n",
    "voc/__init__.py": "",
    "voc/bin/__init__.py": "",
    "voc/bin/train.py": """
        import argparse
        import yaml
        import torch

        def main():
            p = argparse.ArgumentParser()
            p.add_argument("--config", type=str, required=True)
            p.add_argument("--outdir", type=str)
            args = p.parse_args()
            config = yaml.safe_load(open(args.config))
            loader = torch.utils.data.DataLoader(ds, batch_size=config["batch_size"])
            model = Net().cuda()
            while step < config["train_max_steps"]:
                step += 1
    """,
    "egs/demo/run.sh": RUN,
    "egs/demo/cmd.sh": 'export train_cmd="utils/run.pl"\nexport cuda_cmd="utils/run.pl"\n',
    "egs/demo/utils/parse_options.sh": OPTS,
    "egs/demo/conf/small.yaml": "batch_size: 6\ntrain_max_steps: 1000\n",
    "egs/demo/conf/big.yaml": "batch_size: 12\ntrain_max_steps: 5000\n",
}


def test_parse_options_arguments_set_the_recipes_variables_and_the_job_runner_runs_the_training(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "cd egs/demo && ./run.sh --stage 1 --stop-stage 1 --conf conf/big.yaml",
                     use_llm=False).facts
    assert f["micro_batch_size"].value == 12  # --conf replaced the recipe's default config
    assert f["train_steps"].value == 5000
    assert f["num_gpus"].value == 1



def test_an_option_the_recipe_does_not_define_stops_the_parsing(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "cd egs/demo && ./run.sh --stage 1 --no_such_knob 3 --conf conf/big.yaml",
                     use_llm=False).facts
    assert f["micro_batch_size"].value == 6  # the recipe would stop; the later --conf is never applied

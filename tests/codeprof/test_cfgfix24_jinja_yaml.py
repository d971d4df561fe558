"""YAML configs written as Jinja templates: the placeholders stay open (or take the command line's value when the
job visibly renders them from it) and every other setting of the file is read."""

from __future__ import annotations

import pytest

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.configs import ConfigError, parse_config

from .codeprof_support import make_job

CONFIG = """
    out_root: ~/runs/{{ run_name }}
    data:
      name: "{{ corpus }}"
      path: /data/{{ corpus }}/shards
    solver:
      devices: {{ gpus }}
      batch_size: 6
      workers: 3
    schedule:
      epochs: 75
      milestones: [20, {{ late }}]
"""

TRAIN = """
    import argparse
    import torch
    from helpers import read_cfg, cli

    def main():
        args, extra = cli()
        cfg = read_cfg(args.config, extra)
        loader = torch.utils.data.DataLoader(build_set(cfg), batch_size=cfg.solver.batch_size,
                                             sampler=torch.utils.data.distributed.DistributedSampler(build_set(cfg)))
        for epoch in range(cfg.schedule.epochs):
            for batch in loader:
                step(batch)

    if __name__ == "__main__":
        main()
"""

HELPERS = """
    import argparse
    import jinja2
    import yaml
    from jinja2 import meta

    def placeholders(path):
        return meta.find_undeclared_variables(jinja2.Environment().parse(open(path).read()))

    def read_cfg(path, values):
        return yaml.safe_load(jinja2.Template(open(path).read()).render(values))

    def cli():
        p = argparse.ArgumentParser()
        p.add_argument("-c", "--config", required=True)
        args, rest = p.parse_known_args()
        q = argparse.ArgumentParser()
        for name in placeholders(args.config):
            q.add_argument("--%s" % name, default="null")
        return args, vars(q.parse_known_args(rest)[0])
"""


def test_a_templated_yaml_keeps_every_setting_that_is_not_a_placeholder():
    from textwrap import dedent

    data = parse_config("cfg.yaml", dedent(CONFIG))
    assert data["solver"] == {"batch_size": 6, "workers": 3}
    assert data["schedule"] == {"epochs": 75}  # a list with an open element is open as a whole
    assert data["data"] == {"name": "{{ corpus }}"}  # quoted: a plain YAML string, as before
    assert "out_root" not in data


def test_a_placeholder_takes_the_value_the_context_gives():
    from textwrap import dedent

    data = parse_config("cfg.yaml", dedent(CONFIG), {"gpus": "[0,1,2]", "late": "oops not a literal"})
    assert data["solver"]["devices"] == [0, 1, 2]
    assert "milestones" not in data["schedule"]


def test_a_template_with_statements_is_not_read():
    with pytest.raises(ConfigError):
        parse_config("cfg.yaml", "{% if big %}\nwidth: 1024\n{% endif %}\nlr: {{ lr }}\n")


def test_the_batch_and_epochs_of_a_templated_config_are_read_in_a_job(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN, "helpers.py": HELPERS, "cfg.yaml": CONFIG})
    cmd = "python -m torch.distributed.launch --nproc_per_node=2 train.py -c cfg.yaml --gpus [0,1]"
    res = analyze_code(tmp_path, cmd, use_llm=False)
    assert res.facts["micro_batch_size"].value == 6
    assert res.facts["global_batch_size"].value == 12
    assert res.facts["epochs"].value == 75
    assert res.facts["num_gpus"].value == 2


def test_the_command_line_fills_placeholders_only_when_the_job_visibly_renders_them_from_it():
    from textwrap import dedent

    from schedmate.codeprof import jinja_yaml

    assert jinja_yaml.renders_from_command_line([dedent(TRAIN), dedent(HELPERS)])
    assert not jinja_yaml.renders_from_command_line([dedent(TRAIN)])
    assert jinja_yaml.command_context(["-c", "cfg.yaml", "--gpus", "[0,1]", "--late=30", "--flag"]) == {
        "gpus": "[0,1]", "late": "30"}

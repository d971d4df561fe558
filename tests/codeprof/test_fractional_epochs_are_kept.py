"""A run configured for a fractional number of epochs (a hyper-parameter dict's `train_epochs: 8.5`, a
`--epochs 0.5` float flag) trains that fraction of a pass: the epochs are the number as written, not
dropped for not being whole. Fixtures are written for these tests."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

HYP_DICT = """
    import torch

    hyp = {
        'opt': {'lr': 2.0, 'momentum': 0.85},
        'misc': {'train_epochs': 8.5, 'batch_size': 512},
    }

    def main():
        model = Net().cuda()
        opt = torch.optim.SGD(model.parameters(), lr=hyp['opt']['lr'])
        loader = torch.utils.data.DataLoader(train_set, batch_size=hyp['misc']['batch_size'])
        for epoch in range(int(hyp['misc']['train_epochs'] + 1)):
            for x, y in loader:
                loss = model(x.cuda(), y.cuda())
                opt.zero_grad()
                loss.backward()
                opt.step()

    main()
"""

FLOAT_FLAG = """
    import argparse
    import torch

    p = argparse.ArgumentParser()
    p.add_argument('--batch_size', type=int, default=32)
    p.add_argument('--epochs', type=float, default=3.0)
    args = p.parse_args()
    model = Net().cuda()
    opt = torch.optim.Adam(model.parameters())
    steps = int(args.epochs * len(train_loader))
    for step in range(steps):
        loss = model(next(batches)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_fractional_epoch_count_in_a_hyper_parameter_dict_is_kept(tmp_path):
    make_job(tmp_path, {"train.py": HYP_DICT})
    assert analyze_code(tmp_path, "python train.py", use_llm=False).value("epochs") == 8.5


def test_a_fractional_epochs_flag_on_the_command_line_is_kept(tmp_path):
    make_job(tmp_path, {"train.py": FLOAT_FLAG})
    assert analyze_code(tmp_path, "python train.py --epochs 0.5", use_llm=False).value("epochs") == 0.5


def test_a_whole_float_epoch_count_reads_as_a_whole_number(tmp_path):
    make_job(tmp_path, {"train.py": FLOAT_FLAG})
    assert analyze_code(tmp_path, "python train.py --epochs 4.0", use_llm=False).value("epochs") == 4

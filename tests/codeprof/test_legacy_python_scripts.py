"""Old PyTorch scripts (`.cuda(async=True)`, Python 2 prints) are read, not skipped."""

from __future__ import annotations

import ast
from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.legacy_python import MAX_DROPPED_LINES, repair_legacy
from tests.codeprof.codeprof_support import make_job

OLD_SCRIPT = """\
import argparse
import torch
from torch.autograd import Variable

parser = argparse.ArgumentParser("cifar")
parser.add_argument('--batch_size', type=int, default=48, help='batch size')
parser.add_argument('--epochs', type=int, default=300, help='epochs')
parser.add_argument('--gpu', type=int, default=0)
args = parser.parse_args()


def train(queue, model, optimizer):
  for step, (x, y) in enumerate(queue):
    x = Variable(x).cuda()
    y = Variable(y).cuda(async=True)
    print "step", step
    optimizer.zero_grad()


def main():
  torch.cuda.set_device(args.gpu)
  model = torch.nn.Linear(8, 2).cuda()
  queue = torch.utils.data.DataLoader(None, batch_size=args.batch_size, shuffle=True)
  for epoch in range(args.epochs):
    train(queue, model, None)


if __name__ == '__main__':
  main()
"""


def test_an_old_pytorch_script_still_gives_its_argparse_batch_and_epochs(tmp_path: Path):
    wd = make_job(tmp_path, {"train.py": OLD_SCRIPT})
    prof = analyze_code(wd, "python train.py --epochs 120", use_llm=False)
    f = prof.facts
    assert f["micro_batch_size"].value == 48
    assert f["epochs"].value == 120
    assert any("legacy Python" in n for n in prof.warnings)


def test_the_async_keyword_is_renamed_and_a_print_statement_is_dropped_in_place():
    got = repair_legacy(OLD_SCRIPT)
    assert got is not None
    text, dropped = got
    ast.parse(text)
    lines = text.split("\n")
    assert "non_blocking=True" in lines[14] and dropped == [16]
    assert lines[15] == "    pass"


def test_valid_code_is_left_alone_and_hopeless_text_is_given_up():
    assert repair_legacy("x = 1\n") is None
    garbage = "\n".join(f"print 'line {i}'" for i in range(MAX_DROPPED_LINES + 3))
    assert repair_legacy(garbage) is None


def test_a_rejected_block_header_keeps_its_block():
    text = "try:\n    x = 1\nexcept ValueError, e:\n    x = 2\ny = 3\n"
    got = repair_legacy(text)
    assert got is not None
    tree = ast.parse(got[0])
    assert isinstance(tree.body[-1], ast.Assign)

"""Progress parsing for each framework's own output style (snippets written for these tests)."""

from __future__ import annotations

import pytest

from schedmate.logmon.monitor import analyze_text

CASES = {
    "hf_trainer": (
        ("***** Running training *****\n"
        "  Num Epochs = 3\n"
        "  Total optimization steps = 4,000\n"
        "\r  3%|▎         | 110/4000 [00:57<33:10,  1.95it/s]\r  3%|▎         | 120/4000 [01:02<33:10,  1.95it/s]\n"
        "{'loss': 2.3141, 'grad_norm': 1.52, 'learning_rate': 4.99e-05, 'epoch': 0.09}\n"
        "\r  3%|▎         | 130/4000 [01:07<33:09,  1.96it/s]\n"),
        dict(current_step=130, total_steps=4000, total_epochs=3, last_loss=2.3141, epoch=0.09),
        1 / 1.955,
    ),
    "lightning": (
        ("hparams: {'lr': 0.001, 'max_epochs': 10}\n"
        "\rEpoch 3:  44%|████▍     | 440/1000 [02:07<02:42,  3.45it/s, v_num=1, train_loss=0.530]"
        "\rEpoch 3:  45%|████▌     | 450/1000 [02:10<02:39,  3.45it/s, v_num=1, train_loss=0.520]\n"),
        dict(current_step=450, total_steps=1000, epoch=3, total_epochs=10, last_loss=0.52),
        1 / 3.45,
    ),
    "megatron": (
        ("[2024-05-01 10:00:00] iteration      100/  500000 | consumed samples:        51200 | elapsed time per "
        "iteration (ms): 512.3 | learning rate: 2.999E-04 | global batch size:   512 | lm loss: 7.107422E+00 | "
        "loss scale: 1.0 | number of skipped iterations:   0 | number of nan iterations:   0 |\n"),
        dict(current_step=100, total_steps=500000, last_loss=7.107422),
        0.5123,
    ),
    "deepspeed": (
        ("[2024-05-01 10:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=100, skipped=2, lr=[0.0001], "
        "mom=[(0.9, 0.999)]\n"
        "[Rank 0] epoch=0/micro_step=100/global_step=100, RunningAvgSamplesPerSec=412.5, CurrSamplesPerSec=410.1\n"),
        dict(current_step=100, samples_per_s=412.5),
        None,
    ),
    "mmengine": (
        ("2024/05/01 10:00:00 - mmengine - INFO - Epoch(train) [3][ 200/1250]  lr: 1.0000e-02  eta: 0:35:12  "
        "time: 0.4512  data_time: 0.0123  memory: 3001  loss: 0.8100  loss_cls: 0.4\n"),
        dict(current_step=200, total_steps=1250, epoch=3, last_loss=0.81),
        0.4512,
    ),
    "fairseq": (
        ("2024-05-01 10:00:00 | INFO | train_inner | epoch 001:    100 / 1563 loss=9.12, nll_loss=8.9, ppl=556.4, "
        "wps=12345, ups=3.2, wpb=4000, bsz=128, num_updates=100, lr=0.0005, gnorm=1.2, train_wall=30, wall=60\n"
        "epoch 001 | loss 9.02 | nll_loss 8.8 | ppl 512.1 | wps 12001 | ups 3.1 | num_updates 120 | lr 0.0005\n"),
        dict(current_step=120, epoch=1, last_loss=9.02, tokens_per_s=12001),
        1 / 3.1,
    ),
    "timm": (
        ("Scheduled epochs: 300\n"
        "Train: 3 [ 200/1251 ( 16%)]  Loss: 3.21 (3.30)  Time: 0.312s, 820.4/s  (0.315s, 812.6/s)  LR: 1.000e-03  "
        "Data: 0.010 (0.012)\n"),
        dict(current_step=200, total_steps=1251, epoch=3, total_epochs=300, last_loss=3.21, samples_per_s=820.4),
        0.312,
    ),
    "nanogpt": (
        "iter 100: loss 2.9000, time 45.20ms, mfu 30.10%\n",
        dict(current_step=100, last_loss=2.9),
        0.0452,
    ),
    "torchtitan": (
        ("[rank0]:[titan] 2024-05-01 10:00:00,000 - root - INFO - Training starts at step 1, total steps 1000 "
        "(warmup 200)\n"
        "[rank0]:[titan] 2024-05-01 10:00:10,000 - root - INFO - \x1b[31mstep: 10  \x1b[32mloss:  9.8400  "
        "\x1b[33mmemory: 32.12GiB(40.62%)  \x1b[34mtps: 3,412  \x1b[35mtflops: 180.22  mfu: 18.22%\x1b[39m\n"),
        dict(current_step=10, total_steps=1000, last_loss=9.84, tokens_per_s=3412),
        None,
    ),
    "custom_print": (
        "2024-05-01T10:00:00.000Z step 120/4000 | loss 2.3100 | 0.510s/it\n",
        dict(current_step=120, total_steps=4000, last_loss=2.31),
        None,
    ),
}


@pytest.mark.parametrize("framework", sorted(CASES))
def test_each_frameworks_progress_line_is_parsed(framework):
    text, expected, it = CASES[framework]
    rep = analyze_text(text)
    got = rep.progress.model_dump()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value), (key, got)
    if it is not None:
        assert rep.progress.iteration_time_s == pytest.approx(it, rel=0.02)
    assert not rep.failure.failed


def test_timestamps_give_the_iteration_time_and_eval_pauses_are_left_out():
    lines = []
    t = 0
    for step in range(10, 310, 10):
        t += 10 * 0.5
        if step == 150:
            lines.append(f"2024-05-01 10:{t // 60:02.0f}:{t % 60:06.3f} Running evaluation ...")
            t += 120  # a long evaluation
        lines.append(f"2024-05-01 10:{int(t // 60):02d}:{t % 60:06.3f} step {step}/1000 | loss 2.0")
    rep = analyze_text("\n".join(lines) + "\n")
    assert rep.progress.iteration_time_s == pytest.approx(0.5, rel=0.01)
    assert rep.remaining is not None
    assert rep.remaining.p10 <= rep.remaining.p50 <= rep.remaining.p90
    # 700 steps at 0.5 s plus the expected share of evaluation pauses
    assert rep.remaining.p50 > 700 * 0.5


def test_only_the_leading_rank_drives_progress_when_ranks_interleave():
    text = "".join(f"[rank{r}]:iter {s}: loss 2.0, time 100.0ms\n" for s in range(1, 6) for r in (0, 1))
    text += "[rank1]:iter 6: loss 2.0, time 100.0ms\n"
    rep = analyze_text(text)
    assert rep.progress.current_step == 5


@pytest.mark.parametrize("framework, done, left", [
    ("hf_trainer", 130, 4000 - 130),  # one counter over the whole run
    ("lightning", 3 * 1000 + 450, 6 * 1000 + 550),  # the counter restarts every epoch: epochs 0-2 done
    ("timm", 3 * 1251 + 200, (300 - 4) * 1251 + 1051),
    ("nanogpt", 100, None),  # no target in the log
])
def test_steps_done_and_left_cover_the_whole_run_with_epochs_folded_in(framework, done, left):
    text, _, _ = CASES[framework]
    progress = analyze_text(text).progress
    assert (progress.steps_done, progress.steps_left) == (done, left)

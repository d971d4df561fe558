"""Mechanisms added for the sixteenth real-log wave (logs sampled for breadth), each on our own fixture lines
written in the styles of real frameworks with our own names and numbers: a traceback cut before its exception
line takes the category its innermost frame points at (a torch.distributed collective, the DataLoader
machinery), and NCCL's INFO-level error-return trace is a communication failure."""

from __future__ import annotations

from schedmate.logmon.frames import frame_hint
from tests.logmon.logmon_support import report_of


def frames(*pairs: tuple[str, str, str]) -> str:
    return "".join(f'  File "{path}", line {n}, in {fn}\n    {fn}(batch)\n' for path, n, fn in pairs)


SITE = "/home/ana/envs/tr/lib/python3.10/site-packages"

# -- a traceback cut before its exception line ------------------------------------------------------------


def test_a_traceback_cut_inside_a_torch_distributed_collective_is_a_communication_failure():
    text = ("step 40 | loss 2.113\n" "Traceback (most recent call last):\n"
            + frames(("fit_lm.py", 88, "run"), (f"{SITE}/mytrainer/loop.py", 301, "gather_metrics"),
                     (f"{SITE}/torch/distributed/distributed_c10d.py", 2410, "all_gather")))
    f = report_of(text).failure
    assert f.failed and f.category.value == "nccl"


def test_a_traceback_cut_inside_the_dataloader_machinery_is_a_data_loading_failure():
    text = ("epoch 12 started\n" "Traceback (most recent call last):\n"
            + frames(("train_net.py", 51, "main"), (f"{SITE}/torch/utils/data/dataloader.py", 433, "__iter__"),
                     (f"{SITE}/torch/utils/data/dataloader.py", 381, "_get_iterator")))
    f = report_of(text).failure
    assert f.failed and f.category.value == "dataloader"


def test_a_frame_of_the_users_code_after_the_library_frame_takes_the_hint_away():
    # the dataset's own __getitem__ is the innermost frame: the DataLoader only called it
    text = ("Traceback (most recent call last):\n"
            + frames((f"{SITE}/torch/utils/data/dataloader.py", 633, "__next__"),
                     (f"{SITE}/torch/utils/data/_utils/fetch.py", 52, "fetch"), ("my_data/sets.py", 77, "__getitem__")))
    assert report_of(text).failure.category.value == "other"


def test_an_exception_line_still_names_the_failure_of_a_traceback_through_a_collective():
    text = ("Traceback (most recent call last):\n"
            + frames(("fit_lm.py", 88, "run"), (f"{SITE}/torch/distributed/distributed_c10d.py", 2410, "all_reduce"))
            + "TypeError: unsupported operand type(s) for +: 'Tensor' and 'str'\n")
    assert report_of(text).failure.category.value != "nccl"


def test_a_launcher_frame_of_torch_distributed_is_no_hint():
    assert frame_hint(f'  File "{SITE}/torch/distributed/elastic/multiprocessing/api.py", line 9, in wait') is None
    assert frame_hint(f'  File "{SITE}\\torch\\utils\\data\\dataloader.py", line 9, in __iter__') == "dataloader"


# -- NCCL's error-return trace ----------------------------------------------------------------------------


def nccl_info(rank: int, rest: str) -> str:
    return f"gpuhost7:4410:{4500 + rank} [{rank}] NCCL INFO {rest}\n"


def test_an_nccl_error_return_trace_is_a_communication_failure():
    text = (nccl_info(0, "Bootstrap : Using eth0:10.1.2.3<0>") + nccl_info(0, "NET/Socket : Using [0]eth0:10.1.2.3<0>")
            + "NCCL version 2.14.3+cuda11.7\n" + nccl_info(0, "transport/net_socket.cc:208 -> 2")
            + nccl_info(0, "graph/search.cc:577 -> 2") + nccl_info(0, "init.cc:991 -> 2"))
    f = report_of(text).failure
    assert f.failed and f.category.value == "nccl"


def test_ordinary_nccl_info_lines_with_arrows_between_ranks_are_no_failure():
    text = (nccl_info(0, "Channel 00/02 :    0   1") + nccl_info(0, "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC")
            + nccl_info(1, "Channel 00/0 : 1[1] -> 0[0] via P2P/IPC") + nccl_info(0, "Connected all rings")
            + "".join(f"iter {i}/400 loss {3 - i / 100:.3f}\n" for i in range(1, 30)))
    assert not report_of(text).failure.failed


def test_training_that_goes_on_after_an_nccl_return_trace_survived_it():
    text = (nccl_info(0, "net_ib.cc:101 -> 2") + nccl_info(0, "NET/Socket : Using [0]eth0:10.1.2.3<0>")
            + "".join(f"iter {i}/400 loss {3 - i / 100:.3f}\n" for i in range(1, 30)))
    assert not report_of(text).failure.failed


# -- counters the generic readers missed ------------------------------------------------------------------


def test_a_counter_whose_key_names_its_total_is_the_counter_not_the_epoch_beside_it():
    text = "".join(f"Epoch {e}, step/total_step: {s}/40 {100 * s / 40:.2f}% Loss:{2 - s / 50:.4f}\n"
                   for e in (3, 4) for s in range(4, 41, 4))
    text += "Epoch 5, step/total_step: 8/40 20.00% Loss:1.7000\nEpoch 5, step/total_step: 12/40 30.00% Loss:1.6000\n"
    p = report_of(text).progress
    assert (p.current_step, p.total_steps, p.epoch) == (12, 40, 5)


def test_an_iter_over_max_iter_pair_is_read_with_an_equals_sign():
    p = report_of("".join(f"iter/max_iter = {i}/6000, lr = 0.01\n" for i in range(20, 401, 20))).progress
    assert (p.current_step, p.total_steps) == (400, 6000)


def test_a_phase_epoch_and_fraction_in_one_bracket_restart_every_epoch():
    text = "".join(f"[train: {e}, {s} / 600] FPS: 22.4 (21.9)  ,  Loss/total: 0.{900 - s // 2}  ,  Stats/acc: 0.71\n"
                   for e in (7, 8) for s in range(50, 601, 50) if not (e == 8 and s > 250))
    p = report_of(text).progress
    assert (p.current_step, p.total_steps, p.epoch) == (250, 600, 8)


def test_a_validation_phase_in_the_same_bracket_shape_is_not_the_training_counter():
    text = "".join(f"[train: 2, {s} / 300] FPS: 40.0 (40.0)  ,  Loss/total: 0.5\n" for s in range(30, 301, 30))
    text += "".join(f"[val: 2, {s} / 80] FPS: 90.0 (90.0)  ,  Loss/total: 0.6\n" for s in range(10, 81, 10))
    p = report_of(text).progress
    assert (p.current_step, p.total_steps) == (300, 300)


# -- an epoch's time named by its key, with no unit -------------------------------------------------------


def test_a_unitless_time_per_epoch_is_the_epochs_seconds_not_the_gap_that_includes_validation():
    lines = []
    for e in range(40, 52):
        t = (e - 40) * 6  # 6 s between epoch lines: 3.5 s of training, then validation
        lines.append(f"[10:{t // 60:02d}:{t % 60:02d} - fitter - INFO] epoch:  {e}, loss: 0.4{e % 10}, time per epoch:  3.50\n")
        lines.append(f"[10:{(t + 5) // 60:02d}:{(t + 5) % 60:02d} - fitter - INFO] Validation loss: 0.6{e % 10}\n")
    p = report_of("".join(lines)).progress
    assert p.current_step == 51
    assert abs(p.iteration_time_s - 3.5) < 1e-6


def test_an_epoch_time_in_minutes_is_not_read_as_seconds_by_the_unitless_key():
    from schedmate.logmon.shapes import epoch_duration
    assert epoch_duration(", loss 0.3, epoch_time=2.5 min") != 2.5
    assert epoch_duration(", loss 0.3, epoch_time=31.7") == 31.7

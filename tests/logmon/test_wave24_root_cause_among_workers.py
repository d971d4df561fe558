"""Mechanisms added for the twenty-fourth real-log wave (multi-process failure output from issue threads), each
on our own fixture lines written in the styles of real launchers with our own names and numbers: a launcher's
wrapper (mp.spawn's re-raise, a launcher's CalledProcessError) says that a worker failed, not why, so the
worker's own exception decides and a wrapper alone is a failure whose cause is not printed; the signal a spawn
parent names is not a preemption; a cut traceback that ends in the standard library a DataLoader called still
fails in the DataLoader; and with rank prefixes a rank's exception closes the traceback that rank
opened before other ranks' consequences (an NCCL timeout) were printed."""

from __future__ import annotations

from schedmate.logmon.failures import Candidate
from schedmate.logmon.root_cause import attribute_root_cause
from tests.logmon.logmon_support import report_of

SPAWN = "/srv/env/lib/python3.10/site-packages/torch/multiprocessing/spawn.py"


def _spawn_parent(last: str) -> str:
    return ('  File "launch_fit.py", line 88, in <module>\n'
            "    mp.spawn(worker_main, nprocs=4, args=(cfg,))\n"
            f'  File "{SPAWN}", line 241, in spawn\n'
            "    return start_processes(fn, args, nprocs, join, daemon, start_method='spawn')\n"
            f'  File "{SPAWN}", line 158, in join\n'
            "    raise ProcessRaisedException(msg, error_index, failed_process.pid)\n" + last)


# -- launcher wrappers ---------------------------------------------------------------------------------------


def test_a_spawn_wrapper_whose_worker_exception_is_cut_off_is_a_failure_with_no_printed_cause():
    f = report_of(_spawn_parent("torch.multiprocessing.spawn.ProcessRaisedException:\n")).failure
    assert f.failed and f.category.value == "other"


def test_the_worker_exception_after_a_spawn_wrapper_sets_the_category():
    text = _spawn_parent("torch.multiprocessing.spawn.ProcessRaisedException: \n\n"
                         "-- Process 2 terminated with the following error:\n"
                         "Traceback (most recent call last):\n"
                         f'  File "{SPAWN}", line 75, in _wrap\n'
                         "    fn(i, *args)\n"
                         '  File "/home/lab/fit/worker.py", line 140, in worker_main\n'
                         "    out = model(batch)\n"
                         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 2 has a "
                         "total capacity of 23.65 GiB of which 1.10 GiB is free.\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "oom"


def test_a_bare_assertion_reraised_by_spawn_is_a_code_error():
    text = ("torch.multiprocessing.spawn.ProcessRaisedException: \n\n"
            "-- Process 0 terminated with the following error:\n"
            "...\n"
            "AssertionError\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "user_code"


def test_a_worker_that_spawn_reports_terminated_by_sigterm_is_not_read_as_a_preemption():
    text = ('    mp.spawn(train_worker, nprocs=2, args=(opts,))\n'
            f'  File "{SPAWN}", line 150, in join\n'
            "    raise ProcessExitedException(\n"
            "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGTERM\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "other"


def test_the_older_spawn_wording_of_a_killed_worker_is_a_failure():
    text = (f'  File "{SPAWN}", line 107, in join\n'
            "    (error_index, name)\n"
            "Exception: process 5 terminated with signal SIGKILL\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "other"


def test_a_worker_that_spawn_reports_killed_by_sigsegv_is_still_a_segfault():
    text = (f'  File "{SPAWN}", line 150, in join\n'
            "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGSEGV\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "segfault"


def test_a_launcher_calledprocesserror_after_the_childs_oom_keeps_the_oom():
    text = ("step 40/900 | loss 2.114\n"
            "Traceback (most recent call last):\n"
            '  File "tune_lm.py", line 301, in <module>\n'
            "    loss.backward()\n"
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB\n"
            "Traceback (most recent call last):\n"
            '  File "/srv/env/bin/accelerate", line 8, in <module>\n'
            "    sys.exit(main())\n"
            "subprocess.CalledProcessError: Command '['/srv/env/bin/python', 'tune_lm.py']' returned non-zero "
            "exit status 1.\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "oom"


def test_a_launcher_calledprocesserror_alone_is_a_failure_whose_cause_is_not_printed():
    text = ("Traceback (most recent call last):\n"
            '  File "/srv/env/bin/accelerate", line 8, in <module>\n'
            "    sys.exit(main())\n"
            "subprocess.CalledProcessError: Command '['/srv/env/bin/python', 'tune_lm.py']' returned non-zero "
            "exit status 1.\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "other"


# -- interleaved ranks ---------------------------------------------------------------------------------------


def test_a_ranks_exception_closes_the_traceback_it_opened_before_a_peers_nccl_timeout():
    text = ("[rank0]: step 118/5000 loss 1.92\n"
            "[rank1]: step 118/5000 loss 1.95\n"
            "[rank0]: Traceback (most recent call last):\n"
            '[rank0]:   File "/work/pretrain.py", line 410, in <module>\n'
            "[rank0]:     run(cfg)\n"
            "[rank1]: [E ProcessGroupNCCL.cpp:577] [Rank 1] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=9120, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600420 milliseconds\n"
            '[rank0]:   File "/work/pretrain.py", line 377, in run\n'
            "[rank0]:     batch = next(stream)\n"
            "[rank0]: KeyError: 'input_ids'\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "user_code"
    assert f.onset_line == 3


def _cand(category: str, line: int, rank: int | None, weak: bool) -> Candidate:
    return Candidate(category=category, onset_line=line, last_line=line, text="", rank=rank, weak=weak, cause="")


def test_the_root_cause_pass_moves_a_ranks_failure_back_to_its_own_traceback_line_only():
    opener0, peer1, exc0 = _cand("other", 3, 0, True), _cand("nccl", 6, 1, False), _cand("user_code", 9, 0, False)
    other_rank_opener = _cand("other", 4, 2, True)
    cands = [opener0, other_rank_opener, peer1, exc0]
    attribute_root_cause(cands)
    assert exc0.onset_line == 3 and opener0.dismissed
    assert peer1.onset_line == 6 and not other_rank_opener.dismissed
    attribute_root_cause(cands)  # idempotent
    assert exc0.onset_line == 3 and not peer1.dismissed


# -- a traceback printed onto a progress bar, cut inside the DataLoader starting its workers --------------------

DATA = "/srv/env/lib/python3.9/site-packages/torch/utils/data/dataloader.py"


def _bar_then_cut_traceback(innermost: str, epoch_before: bool = True) -> str:
    before = "[3/40] loss_g: 0.0411 loss_d: 0.5123: 100%|██████████| 310/310 [01:12<00:00,  4.28it/s]\n"
    return ((before if epoch_before else "")
            + "  0%|          | 0/310 [00:00<?, ?it/s]Traceback (most recent call last):\n"
            '  File "/home/lab/gan/fit_gan.py", line 77, in <module>\n'
            "    for hr, lr in bar:\n"
            f'  File "{DATA}", line 441, in __iter__\n'
            "    return self._get_iterator()\n"
            f'  File "{DATA}", line 1042, in __init__\n'
            "    w.start()\n" + innermost)


def test_a_traceback_printed_onto_a_progress_bar_and_cut_in_the_dataloader_is_a_failure_and_the_bar_counts():
    r = report_of(_bar_then_cut_traceback(""))
    assert r.failure.failed and r.failure.onset_line == 2
    assert (r.progress.current_step, r.progress.total_steps) == (0, 310)


def test_the_standard_library_a_dataloader_calls_does_not_hide_where_a_cut_traceback_failed():
    innermost = ('  File "/usr/lib/python3.9/multiprocessing/process.py", line 121, in start\n'
                 "    self._popen = self._Popen(self)\n"
                 '  File "/usr/lib/python3.9/multiprocessing/context.py", line 224, in _Popen\n'
                 "    return _default_context.get_context().Process._Popen(process_obj)\n")
    f = report_of(_bar_then_cut_traceback(innermost)).failure
    assert f.failed and f.category.value == "dataloader"


def test_a_users_frame_after_the_dataloader_still_clears_the_hint():
    innermost = ('  File "/home/lab/gan/pairs.py", line 33, in __getitem__\n'
                 "    img = self.decode(path)\n")
    f = report_of(_bar_then_cut_traceback(innermost, epoch_before=False)).failure
    assert f.failed and f.category.value == "other"


def test_a_launcher_calledprocesserror_whose_exit_status_names_a_signal_keeps_that_reading():
    text = ("subprocess.CalledProcessError: Command '['/srv/env/bin/python', 'tune_lm.py']' returned non-zero "
            "exit status 139.\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "segfault"


# -- peers' consequences -------------------------------------------------------------------------------------


def test_horovods_shutdown_notice_alone_is_a_failure_whose_cause_is_not_printed():
    text = ("2022-05-04 09:12:44.101: W tensorflow/core/framework/op_kernel.cc:1651] OP_REQUIRES failed at "
            "mpi_ops.cc:402 : Unknown: Horovod has been shut down. This was caused by an exception on one of the "
            "ranks or an attempt to allreduce after one of the ranks finished execution.\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "other"


def test_a_peers_aborted_communicator_printed_just_before_a_ranks_own_error_yields_to_it():
    text = ("[rank1]:[E ProcessGroupNCCL.cpp:1182] [Rank 1] NCCL communicator was aborted on rank 1.\n"
            "[rank0]: Traceback (most recent call last):\n"
            '[rank0]:   File "/work/pretrain.py", line 52, in <module>\n'
            "[rank0]:     logits = head(features)\n"
            "[rank0]: ValueError: expected 512 features, got 768\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "user_code"


def test_a_peers_timeout_alone_stays_a_communication_failure():
    text = ("[rank1]:[E ProcessGroupNCCL.cpp:577] [Rank 1] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=88, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600100 milliseconds\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "nccl"

"""Mechanisms added for the twenty-third real-log wave (failure output from issue threads), each on our own
fixture lines written in the styles of real frameworks with our own names and numbers: a DataParallel replica's
wrapped exception is the model code's failure unless the replica's own exception after it says more; an MPI or
Horovod launcher's summary of the first failed rank is the failure, and the teardown kills after it are not a
memory kill; a CUDA runtime error in its older wording reads as the newer one does; a checkpoint write cut
short is the file system's failure, not the code's."""

from __future__ import annotations

from tests.logmon.logmon_support import report_of

LIB = "/opt/venv/lib/python3.8/site-packages/torch"

# -- a DataParallel replica's exception ----------------------------------------------------------------------


def _replica_trace(wrapped: str, tail: str = "") -> str:
    return ("Traceback (most recent call last):\n"
            '  File "fit_ranker.py", line 212, in <module>\n'
            "    scores = net(query_ids, doc_ids)\n"
            f'  File "{LIB}/nn/parallel/data_parallel.py", line 171, in forward\n'
            "    outputs = self.parallel_apply(replicas, inputs, kwargs)\n"
            f'  File "{LIB}/_utils.py", line 461, in reraise\n'
            "    raise exception\n"
            f"{wrapped}: Caught {wrapped} in replica 1 on device 1.\n"
            "Original Traceback (most recent call last):\n" + tail)


def test_a_stopiteration_caught_in_a_dataparallel_replica_is_a_code_error():
    f = report_of(_replica_trace("StopIteration")).failure
    assert f.failed and f.category.value == "user_code"


def test_a_replica_wrapper_without_the_traceback_header_is_still_a_code_error():
    text = ("  File \"fit_ranker.py\", line 212, in <module>\n"
            "StopIteration: Caught StopIteration in replica 0 on device 0.\n"
            "Original Traceback (most recent call last):\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "user_code"


def test_the_replicas_own_out_of_memory_error_after_the_wrapper_sets_the_category():
    tail = (f'  File "{LIB}/nn/parallel/parallel_apply.py", line 64, in _worker\n'
            "    output = module(*input, **kwargs)\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 96.00 MiB (GPU 1; 10.76 GiB total capacity)\n")
    f = report_of(_replica_trace("RuntimeError", tail)).failure
    assert f.failed and f.category.value == "oom"


# -- an MPI / Horovod launcher's summary -----------------------------------------------------------------------


def test_mpirun_reporting_a_rank_killed_by_signal_9_is_a_failure_with_its_cause_unprinted():
    text = ("[1,0]<stdout>:epoch 3 batch 410/900 loss 1.204\n"
            "-------------------------------------------------------\n"
            "Primary job  terminated normally, but 1 process returned\n"
            "a non-zero exit code. Per user-direction, the job has been aborted.\n"
            "-------------------------------------------------------\n"
            "mpirun noticed that process rank 2 with PID 5121 on node trn-04 exited on signal 9 (Killed).\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "other"


def test_the_teardown_exit_137_after_a_horovod_summary_is_not_read_as_a_memory_kill():
    text = ("[trial 7] RuntimeError: Horovod detected that one or more processes exited with non-zero status, "
            "thus causing the job to be terminated. The first process to do so was:\n"
            "[trial 7] Exit code: 1\n"
            "[trial 7] Process name: 3\n"
            "[agent] worker container failed with non-zero exit code: (exit code 1)\n"
            "[agent] worker container failed with non-zero exit code: (exit code 137)\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "other"


def test_a_ranks_own_out_of_memory_error_before_the_launcher_summary_is_the_root_cause():
    text = ("[1,1]<stderr>:RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 15.78 GiB total)\n"
            "-------------------------------------------------------\n"
            "Primary job  terminated normally, but 1 process returned\n"
            "a non-zero exit code. Per user-direction, the job has been aborted.\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "oom"


def test_a_rank_killed_by_signal_11_under_mpirun_stays_a_segfault():
    text = "mpirun noticed that process rank 0 with PID 811 on node n3 exited on signal 11 (Segmentation fault).\n"
    f = report_of(text).failure
    assert f.failed and f.category.value == "segfault"


# -- the older wording of CUDA runtime errors, checkpoint writes cut short -------------------------------------


def test_the_legacy_cuda_unknown_error_is_a_gpu_or_driver_failure():
    text = ("step 301200 | reward 14.2 | eps 0.10\n"
            "luajit: cuda runtime error (30) : unknown error at /tmp/rocks/gpu/lib/THC/THCStorage.c:113\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "node"


def test_a_thcudacheck_out_of_memory_is_an_out_of_memory_failure():
    text = ("Epoch: [4][120/800]\tLoss 0.4410\n"
            "THCudaCheck FAIL file=/src/aten/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n"
            "Traceback (most recent call last):\n"
            '  File "train_pose.py", line 90, in <module>\n'
            "RuntimeError: cuda runtime error (2) : out of memory at /src/aten/THC/generic/THCStorage.cu:58\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "oom"


def test_a_checkpoint_write_that_came_up_short_is_a_storage_failure():
    text = ("iter 5400: train loss 1.0931, saving checkpoint to out/lstm_e4.20.t7\n"
            "luajit: /opt/torch/share/lua/5.1/torch/File.lua:141: write error: wrote 1201 blocks instead of 5530 "
            "at /opt/torch/lib/TH/THDiskFile.c:330\n"
            "stack traceback:\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "other"


def test_an_unknown_error_said_in_prose_is_not_a_gpu_failure():
    text = "step 12/400 loss 0.91\nwarning: metrics server returned an unknown error, skipping upload\nstep 13/400 loss 0.90\n"
    f = report_of(text).failure
    assert not f.failed

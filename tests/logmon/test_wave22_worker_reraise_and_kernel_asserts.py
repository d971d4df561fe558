"""Mechanisms added for the twenty-second real-log wave (failure output from issue threads), each on our own
fixture lines written in the styles of real frameworks with our own names and numbers: an exception a
data-loader worker raised and the training loop re-raised is a data-loading failure (its root cause), not the
code error the outer traceback points at, and a CUDA kernel's device-side assertion is a code/data error
whatever wrapper reports it, even when the assertion lines are all the log shows."""

from __future__ import annotations

from tests.logmon.logmon_support import report_of

LIB = "/home/kim/miniconda3/envs/vid/lib/python3.9/site-packages/torch"

# -- an exception re-raised from a DataLoader worker -------------------------------------------------------


def test_an_exception_caught_in_a_dataloader_worker_is_a_data_loading_failure():
    text = ("epoch 2 it 140/610 loss 0.0731\n"
            "Traceback (most recent call last):\n"
            '  File "fit_vsr.py", line 88, in <module>\n'
            "    for it, sample in enumerate(loader):\n"
            f'  File "{LIB}/utils/data/dataloader.py", line 1345, in _next_data\n'
            "    return self._process_data(data)\n"
            f'  File "{LIB}/_utils.py", line 457, in reraise\n'
            "    raise exception\n"
            "ValueError: Caught ValueError in DataLoader worker process 2.\n"
            "Original Traceback (most recent call last):\n"
            f'  File "{LIB}/utils/data/_utils/worker.py", line 308, in _worker_loop\n'
            "    data = fetcher.fetch(index)\n"
            '  File "/home/kim/vid/frames.py", line 41, in __getitem__\n'
            "    clip = decode(self.paths[idx])\n"
            "ValueError: clip /data/v/0093.mp4 has 0 frames\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "dataloader"
    assert f.onset_line == 2  # the outer traceback, where the failure first shows


def test_an_old_style_worker_traceback_carried_in_the_exception_message_is_a_data_loading_failure():
    text = ("Traceback (most recent call last):\n"
            '  File "train_cap.py", line 140, in train\n'
            "    batch = feeder.next_batch('train')\n"
            f'  File "{LIB}/utils/data/dataloader.py", line 288, in _process_next_batch\n'
            "    raise batch.exc_type(batch.exc_msg)\n"
            "IndexError: 'Traceback (most recent call last):\\n  File \"/usr/lib/torch/utils/data/dataloader.py\", "
            "line 55, in _worker_loop\\n    samples = collate_fn([dataset[i] for i in batch_indices])\\n"
            "IndexError: list index out of range\\n'\n")
    assert report_of(text).failure.category.value == "dataloader"


def test_an_ordinary_exception_in_the_training_step_stays_a_code_error():
    text = ("Traceback (most recent call last):\n"
            '  File "fit_vsr.py", line 95, in <module>\n'
            "    loss = crit(pred, target['hr'])\n"
            "KeyError: 'hr'\n")
    assert report_of(text).failure.category.value == "user_code"


def test_an_oom_inside_a_worker_wrapper_is_still_an_oom_when_it_comes_first():
    text = ("RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 10.75 GiB total capacity)\n"
            "Traceback (most recent call last):\n"
            "RuntimeError: Caught RuntimeError in DataLoader worker process 0.\n")
    assert report_of(text).failure.category.value == "oom"


# -- CUDA device-side assertions --------------------------------------------------------------------------

ASSERT = ("/build/aten/src/ATen/native/cuda/NLLLoss2d.cu:{n}: nll_loss2d_forward_out_kernel: block: [3,0,0], "
          "thread: [{t},0,0] Assertion `t >= 0 && t < n_classes` failed.\n")


def test_kernel_assertion_lines_alone_end_the_run_as_a_code_error():
    text = "".join(ASSERT.format(n=103, t=t) for t in (7, 19, 64))
    f = report_of(text).failure
    assert f.failed and f.category.value == "user_code"


def test_a_device_side_assert_reported_by_a_cuda_check_wrapper_is_a_code_error_not_other():
    text = ("THCudaCheck FAIL file=/opt/src/torch/lib/THC/THCCachingHostAllocator.cpp line=211 error=59 : "
            "device-side assert triggered\n"
            "Traceback (most recent call last):\n"
            '  File "evo_train.py", line 73, in fit_round\n'
            "    loss.backward()\n"
            '  File "/opt/envs/py27/lib/python2.7/site-packages/torch/autograd/__init__.py", line 98, in backward\n'
            "    variables, grad_variables, retain_graph)\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "user_code"


def test_the_debugging_hint_about_device_side_assertions_is_not_an_assertion():
    text = ("step 300/5000 loss 2.114\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
            "might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    assert report_of(text).failure.category.value != "user_code"


def test_an_ecc_error_followed_by_the_device_side_assertion_hint_stays_a_node_failure():
    text = ("RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    assert report_of(text).failure.category.value == "node"

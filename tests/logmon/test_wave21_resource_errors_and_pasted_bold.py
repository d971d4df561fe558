"""Mechanisms added for the twenty-first real-log wave (failure output from issue threads), each on our own
fixture lines written in the styles of real frameworks with our own names and numbers: running out of file
descriptors is a data-loading failure, a cuDNN library failure is not a code error, and an exception line
pasted in markdown bold is still read as the exception that ended the run."""

from __future__ import annotations

from schedmate.logmon.ingest import normalize_line
from tests.logmon.logmon_support import report_of

LIB = "/opt/conda/envs/seg/lib/python3.10"

# -- file descriptors exhausted ----------------------------------------------------------------------------


def test_running_out_of_file_descriptors_in_the_loader_feeder_is_a_data_loading_failure():
    text = ("epoch 3 | batch 120/900 | loss 0.4312\n"
            "Traceback (most recent call last):\n"
            f'  File "{LIB}/multiprocessing/queues.py", line 250, in _feed\n'
            f'  File "{LIB}/site-packages/torch/multiprocessing/reductions.py", line 371, in reduce_storage\n'
            f'  File "{LIB}/multiprocessing/resource_sharer.py", line 52, in __init__\n'
            "OSError: [Errno 24] Too many open files\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "dataloader"


def test_a_dataset_that_opens_too_many_files_is_a_data_loading_failure_not_a_code_error():
    text = ("Traceback (most recent call last):\n"
            '  File "prep_and_fit.py", line 61, in <module>\n'
            "    for clip, label in loader:\n"
            "OSError: [Errno 24] Too many open files: '/data/clips/c_00417.wav'\n")
    assert report_of(text).failure.category.value == "dataloader"


def test_an_ordinary_oserror_stays_a_code_error():
    text = ("Traceback (most recent call last):\n"
            '  File "fit.py", line 12, in <module>\n'
            "OSError: [Errno 2] No such file or directory: 'weights/init.pt'\n")
    assert report_of(text).failure.category.value == "user_code"


# -- the cuDNN library failing ------------------------------------------------------------------------------


def test_a_cudnn_internal_error_in_backward_is_a_library_failure_not_a_code_error():
    text = ("iter 40/2000 loss=1.872\n"
            "Traceback (most recent call last):\n"
            '  File "run_gen.py", line 88, in train_step\n'
            "    loss.backward()\n"
            "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "other"


def test_a_tensorflow_cudnn_handle_failure_is_a_library_failure():
    text = ("2024-03-02 10:11:12.000001: E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] "
            "Could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "other"


def test_a_cudnn_bad_parameter_stays_a_code_error():
    text = ("Traceback (most recent call last):\n"
            '  File "net3d.py", line 30, in forward\n'
            "RuntimeError: cuDNN error: CUDNN_STATUS_BAD_PARAM\n")
    assert report_of(text).failure.category.value == "user_code"


# -- a line pasted in markdown bold -------------------------------------------------------------------------


def test_a_line_pasted_in_markdown_bold_is_read_without_its_marks():
    assert normalize_line("**ValueError: labels must be below 12**", 1).text == "ValueError: labels must be below 12"
    assert normalize_line("__KeyError: 'mask'__", 1).text == "KeyError: 'mask'"


def test_bold_marks_on_one_side_only_are_kept():
    assert normalize_line("**note** the loss is fine", 1).text == "**note** the loss is fine"


def test_an_exception_pasted_in_bold_names_the_failure_of_its_traceback():
    text = ("Traceback (most recent call last):\n"
            '  File "fit_ner.py", line 140, in <module>\n'
            "    **loss = span_loss(logits, gold)**\n"
            "**RuntimeError: CUDA error: device-side assert triggered**\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "user_code"

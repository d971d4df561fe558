"""Fix round 24 of the log monitor, each mechanism on our own fixture lines written in the styles of real tools
with our own names and numbers: an exception line pasted between quotes is read as the exception line it is;
torchrun's `[default0]:` prefix (and torch's `[rank0]:` inside it) and SageMaker's mpirun tag are rank prefixes,
so a failure inside them is read and grouped by rank; and a bar described by an outer `[n/N]` with rounds left
is the end of one round, not of the run, so a failure after it is no post-training clean-up."""

from __future__ import annotations

from schedmate.logmon.ingest import normalize_line
from schedmate.logmon.outer_counter import OuterCounter
from tests.logmon.logmon_support import report_of

# -- an exception line pasted between quotes -----------------------------------------------------------------


def test_an_exception_line_pasted_between_double_quotes_is_a_code_failure():
    text = ("I launched the planner with four GPUs and got:\n"
            '"RuntimeError: Expected every parameter of the wrapped module to receive a gradient before the next '
            'iteration; pass `find_unused_parameters=True` to the wrapper"\n')
    f = report_of(text).failure
    assert f.failed and f.category.value == "user_code"
    assert f.onset_line == 2


def test_a_markdown_quoted_line_holding_a_single_quoted_exception_is_unwrapped_once():
    assert normalize_line("> 'IndexError: list index out of range'", 1).text == "IndexError: list index out of range"
    assert normalize_line("> \"ValueError: cannot reshape array of size 96\"", 1).text == \
        "ValueError: cannot reshape array of size 96"


def test_quoted_lines_that_are_no_exception_line_keep_their_quotes():
    for line in ('"loss went down to 0.42 after warmup"', '"RuntimeError"', "'see \"RuntimeError: x\" above'",
                 '"the run printed RuntimeError: x"'):
        assert normalize_line(line, 1).text == line
    assert not report_of('"the script printed nothing else"\n').failure.failed


# -- rank prefixes -------------------------------------------------------------------------------------------


def test_torchrun_tee_role_prefixes_and_sagemaker_mpirun_tags_are_read_as_ranks():
    cases = {"[default2]:epoch 1 step 40/900 loss 3.10": ("epoch 1 step 40/900 loss 3.10", 2),
             "[default3]:[rank3]: RuntimeError: shape mismatch": ("RuntimeError: shape mismatch", 3),
             "[1,mpirank:5,algo-2]<stderr>:KeyError: 'pixel_values'": ("KeyError: 'pixel_values'", 5),
             "[1,4]<stderr>:ValueError: empty batch": ("ValueError: empty batch", 4),
             "[rank7]: IndexError: index 9 is out of bounds": ("IndexError: index 9 is out of bounds", 7)}
    for raw, (text, rank) in cases.items():
        ll = normalize_line(raw, 1)
        assert (ll.text, ll.rank) == (text, rank), raw


def test_a_bracketed_word_with_a_number_that_is_no_launcher_role_keeps_its_text():
    for raw in ("[epoch3]: loss 0.91", "[gpu0]: 11.2 GiB used"):
        ll = normalize_line(raw, 1)
        assert ll.rank is None and ll.text == raw


def test_under_torchrun_role_prefixes_a_ranks_exception_closes_its_traceback_before_a_peers_timeout():
    text = ("[default0]:step 230/4000 loss 2.02\n"
            "[default1]:step 230/4000 loss 2.05\n"
            "[default0]:Traceback (most recent call last):\n"
            '[default0]:  File "/srv/fit_lm.py", line 212, in <module>\n'
            "[default0]:    train(cfg)\n"
            "[default1]:[rank1]:[E ProcessGroupNCCL.cpp:577] [Rank 1] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=4410, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600318 milliseconds\n"
            '[default0]:  File "/srv/fit_lm.py", line 160, in train\n'
            "[default0]:    logits = model(tokens)\n"
            "[default0]:torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB\n")
    f = report_of(text).failure
    assert f.failed and f.category.value == "oom"
    assert f.onset_line == 3


# -- a full bar inside an outer counter ------------------------------------------------------------------------


def _rounds(done: int, total: int, first: int = 1) -> str:
    return "".join(f"[{e}/{total}] loss {2.0 - e / 100:.2f}: 100%|##########| 275/275 [00:55<00:00,  4.99it/s]\n"
                   for e in range(first, first + done))


def test_a_full_bar_of_an_epoch_that_is_not_the_last_is_no_end_of_training():
    text = _rounds(2, 30) + ("Traceback (most recent call last):\n"
                             '  File "fit_seg.py", line 140, in <module>\n'
                             "    main()\n"
                             "KeyError: 'mask_ids'\n")
    report = report_of(text)
    assert report.failure.failed and report.failure.category.value == "user_code"
    assert not report.finished


def test_a_full_bar_of_the_last_epoch_still_ends_the_run_and_its_clean_up_error_is_dismissed():
    text = _rounds(3, 3) + ("Traceback (most recent call last):\n"
                            '  File "fit_seg.py", line 151, in <module>\n'
                            "    export_plots(history)\n"
                            "KeyError: 'val_miou'\n")
    report = report_of(text)
    assert not report.failure.failed
    assert report.finished


def test_the_outer_counter_knows_a_zero_based_last_round_and_forgets_a_bar_without_one():
    outer = OuterCounter()
    outer.on_bar("[0/20] loss 1.2: 100%|#####| ")
    assert outer.open
    outer.on_bar("[19/20] loss 0.4: 100%|#####| ")
    assert not outer.open
    outer.on_bar("[3/20] loss 0.9: ")
    assert outer.open
    outer.on_bar("Train: 100%|#####| ")
    assert not outer.open

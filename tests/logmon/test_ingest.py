"""Reading logs: following files across rotation, garbled bytes, rank prefixes, tqdm, ANSI, timestamps."""

from __future__ import annotations

import os

from schedmate.logmon.ingest import FileFollower, LineNormalizer, normalize_line, parse_timestamp
from schedmate.logmon.monitor import Monitor, analyze_text


def test_a_followed_file_survives_rotation_by_rename_and_recreate(tmp_path):
    path = tmp_path / "train.log"
    path.write_bytes(b"iter 1: loss 3.0, time 100.00ms\n")
    f = FileFollower(path)
    mon = Monitor()
    mon.feed_bytes(f.read_available())
    with open(path, "ab") as fh:
        fh.write(b"iter 2: loss 2.9, time 100.00ms\n")
    os.rename(path, tmp_path / "train.log.1")  # logrotate: rename, then the job reopens a new file
    with open(tmp_path / "train.log.1", "ab") as fh:
        fh.write(b"iter 3: loss 2.8, time 100.00ms\n")  # written to the old inode before the switch
    path.write_bytes(b"iter 4: loss 2.7, time 100.00ms\n")
    mon.feed_bytes(f.read_available())
    with open(path, "ab") as fh:
        fh.write(b"iter 5: loss 2.6, time 100.00ms\n")
    mon.feed_bytes(f.read_available())
    f.close()
    rep = mon.finish()
    assert f.rotations == 1
    assert rep.progress.current_step == 5 and rep.lines == 5


def test_a_followed_file_truncated_in_place_is_read_again_from_the_start(tmp_path):
    path = tmp_path / "train.log"
    path.write_bytes(b"iter 1: loss 3.0, time 100.00ms\niter 2: loss 3.0, time 100.00ms\n")
    f = FileFollower(path)
    assert f.read_available().count(b"\n") == 2
    path.write_bytes(b"iter 3: loss 2.0, time 100.00ms\n")  # copytruncate
    assert f.read_available() == b"iter 3: loss 2.0, time 100.00ms\n"
    f.close()


def test_garbled_and_binary_input_never_crashes_and_undecodable_bytes_are_counted():
    mon = Monitor()
    mon.feed_bytes(b"iter 1: loss 3.0, time 100.00ms\n\xff\xfe\x00\x01garbage\x80\x81\n")
    mon.feed_bytes(bytes(range(256)) * 20)
    mon.feed_bytes(b"\niter 2: loss \xe2\x82")  # a UTF-8 sequence split across chunks
    mon.feed_bytes(b"\xac2.9, time 100.00ms\n")
    rep = mon.finish()
    assert rep.bad_bytes > 0
    assert rep.progress.current_step == 1  # the line with the broken euro sign is not a progress line
    assert not rep.failure.failed


def test_a_huge_line_without_newlines_is_cut_and_processed():
    rep = analyze_text("x" * 5_000_000 + "\niter 7: loss 1.0, time 10.00ms\n")
    assert rep.progress.current_step == 7


def test_rank_prefixes_are_recognised_in_the_three_launcher_styles():
    assert normalize_line("[rank3]:hello", 1).rank == 3
    assert normalize_line("12: hello", 1).rank == 12
    assert normalize_line("[1,5]<stdout>:hello", 1).rank == 5
    assert normalize_line("[1,5]<stdout>:hello", 1).text == "hello"


def test_tqdm_carriage_returns_keep_the_last_state_and_ansi_colours_are_stripped():
    ll = normalize_line("[rank0]:\r 1%|  | 1/100 [00:01<01:39, 1.00it/s]\r\x1b[32m 2%|  | 2/100\x1b[0m\r", 1)
    assert ll.text == " 2%|  | 2/100" and ll.rank == 0


def test_common_timestamp_formats_are_parsed():
    assert parse_timestamp("2024-05-01T12:00:00.500Z x")[0] == 1714564800.5
    assert parse_timestamp("2024-05-01 12:00:00,250 - INFO - x")[0] == 1714564800.25
    assert parse_timestamp("2024-05-01T14:00:00+02:00 x")[0] == 1714564800.0
    assert parse_timestamp("[2024-05-01 12:00:00] x")[0] == 1714564800.0
    assert parse_timestamp("2024/05/01 12:00:00 - mmengine - x")[0] == 1714564800.0
    assert parse_timestamp("1714564800.25 x")[0] == 1714564800.25
    t1, rest = parse_timestamp("[05/01 12:00:00] x")
    t2, _ = parse_timestamp("[05/01 12:00:30] y")
    assert t2 - t1 == 30 and rest == "x"
    assert parse_timestamp("step 100")[0] is None


def test_chunks_split_anywhere_give_the_same_report_as_the_whole_text():
    text = "".join(f"[rank0]:2024-05-01 12:00:{s:02d},000 step {s}/50 | loss 2.0\n" for s in range(1, 40))
    whole = analyze_text(text)
    mon = Monitor()
    for i in range(0, len(text), 7):
        mon.feed(text[i:i + 7])
    parts = mon.finish()
    assert parts.progress == whole.progress and parts.remaining == whole.remaining


def test_line_numbers_count_newlines_in_the_source():
    n = LineNormalizer()
    lines = n.push("a\n\nb\r c\nd") + n.flush()
    assert [(ll.lineno, ll.text) for ll in lines] == [(1, "a"), (2, ""), (3, " c"), (4, "d")]


def test_a_short_log_that_stops_growing_is_reported_after_a_flush():
    mon = Monitor()
    mon.feed("Traceback (most recent call last):\nModuleNotFoundError: No module named 'flash_attn'\n")
    assert not mon.report().failure.failed  # still waiting for the first lines that fix the log family
    mon.flush()
    assert mon.report().failure.category.value == "user_code"

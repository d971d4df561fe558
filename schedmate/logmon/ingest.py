"""Turning raw log bytes into normalised lines: decoding, ANSI, tqdm carriage returns, rank prefixes,
timestamps; and sources that produce text (a file followed across rotation, stdin, pushed chunks).

Everything here treats the log as untrusted bytes: undecodable bytes are replaced (and counted), control
characters other than tab are dropped, nothing is ever executed or interpreted.
"""

from __future__ import annotations

import calendar
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import BinaryIO

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
# Control characters other than \t (\r and \n are handled before this runs).
_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

# Rank prefixes added by launchers: torch's `[rank3]:`, srun -l / `0: `, mpirun --tag-output / `[1,0]<stdout>:`
# (SageMaker's mpirun: `[1,mpirank:0,algo-1]<stderr>:`), torchrun --tee / --log-dir: `[default0]:` (the worker
# role, `default` unless the launcher names it, and the local rank).
_RANK = re.compile(
    r"(?:\[rank(?P<a>\d+)\]:|\[\d+,(?:mpirank:)?(?P<b>\d+)(?:,[\w.-]{1,40})?\]<std(?:out|err)>:"
    r"|(?P<c>\d{1,5}): |\[(?:default|trainer|worker)(?P<d>\d{1,5})\]:)\s?"
)
# torch's own `[rank3]:` inside torchrun's `[default3]:` (`[default3]:[rank3]: RuntimeError: ...`)
_INNER_RANK = re.compile(r"\[rank\d+\]: ?")
# a line pasted between quotes (an issue, a chat) that is otherwise an exception line: `"RuntimeError: ..."`
_QUOTED_EXCEPTION = re.compile(r"(?P<q>[\"'])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure)"
                               r"(?::[ \n]|$)")
# Ray's prefix on a worker's or actor's output: `(RayTrainWorker pid=4120, ip=10.0.0.7) `, `(pid=93) `
_RAY = re.compile(r"\((?:[A-Za-z_][\w.]* )?pid=\d+(?:, ip=[\d.]+)?\) ?")
# also a 12-hour clock (`2023-03-29 01:37:47 PM-Train.py-INFO:`) and a bracketed stamp glued to the next tag by a
# dash (`[2022-05-02 12:30:57,818]-[INFO]: `)
_ISO = re.compile(
    r"\[?(?P<y>\d{4}|\d\d)[-/](?P<mo>\d\d)[-/](?P<d>\d\d)[T ](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:[.,](?P<f>\d{1,9}))?"
    r"(?P<tz>Z|[+-]\d\d:?\d\d)?(?: ?(?P<ap>[AaPp][Mm])(?![A-Za-z]))?"
    r"(?:\]-?(?=\[)|\]?(?:\s*[|:-]\s|\s+|$)|(?<=[Mm])-|\]?[:-](?=[A-Za-z]))"
)
# the level a logging format prints right after its stamp, with what comes with it: `:INFO: `, ` - INFO - `,
# a logger or file glued before it by a dash (`Train.py-INFO:`), a logger, file or line number after it
# (`INFO:root:`, `INFO - train.py - 65 - `); only the informational levels (a warning or an error keeps its word)
_LEVEL_HEAD = re.compile(r"(?:[\w.]{1,40}-)?\[?(?:INFO|DEBUG)\]?(?: ?[:|-] ?| )"
                         r"(?:(?:root|__main__|[\w.]{1,60}\.py)(?: ?[:-] ?\d+)? ?[:|-] ?)?")
# `[05/01 12:00:00]`, also with the logger name inside the brackets (detectron2: `[05/01 12:00:00 d2.engine]:`)
_MMDD = re.compile(r"\[(?P<mo>\d\d)/(?P<d>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:[.,](?P<f>\d{1,6}))?"
                   r"(?: [A-Za-z_][\w.-]{0,40})?\]:?\s*")
# glog / absl (TensorFlow, JAX): `I0501 12:00:00.123456  4242 train.py:88] ...`
_GLOG = re.compile(r"[IWEF](?P<mo>\d\d)(?P<d>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:\.(?P<f>\d{1,9}))?"
                   r"(?: +\d+ [\w.<>-]+:\d+\])? ?")
# A short bracketed tag before the timestamp: `[titan] 2024-05-01 12:00:00,123 - root - INFO - ...`
_TAG = re.compile(r"\[[A-Za-z_][\w.-]{0,24}\] (?=\d{4}[-/])")
_EPOCH = re.compile(r"\[?(?P<e>1[5-9]\d{8}(?:\.\d+)?)\]?\s+")
# a day before the year (`09/05/2019 02:35:34 PM:`, `[31-10-2024 16:50:00]`): month/day or day/month, 12 or 24 h
_DAY_FIRST = re.compile(r"\[?(?P<a>\d\d)[-/](?P<b>\d\d)[-/](?P<y>\d{4})[ T](?P<h>\d\d?):(?P<mi>\d\d)(?::(?P<s>\d\d)"
                        r"(?:[.,](?P<f>\d{1,6}))?)?(?: ?(?P<ap>[AaPp][Mm]))?\]?(?:\s*[|:-]\s|\s+|$)")
# a time of day alone (`[10:23:42] step 10`, `(10:23:42)`, `10:23:42 INFO`): on a fixed day (only differences matter)
_TIME_OF_DAY = re.compile(r"[\[(]?(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:[.,](?P<f>\d{1,6}))?[\])]?(?:\s*[|:-]\s|\s+)")

# bracketed tags opening a line, each followed by a blank, and a tag that is a counter or names one
_RUNNER_TAGS = re.compile(r"(?:\[[^\]\[\n]{1,80}\] )+")
_COUNTER_TAG = re.compile(r"\[ ?\d+ ?/ ?\d+ ?\]|(?i:epoch|iter|step|batch|rank)")

MM_DD_YEAR = 2000
"""Year assumed for `[MM/DD HH:MM:SS]` stamps, which carry none (only differences matter)."""


@dataclass(slots=True)
class LogLine:
    """One normalised line. `lineno` is the 1-based number of the line in the source (by newline)."""

    lineno: int
    text: str
    rank: int | None = None
    ts: float | None = None


_day_cache: dict[tuple[int, int, int], int] = {}


def _day_epoch(y: int, mo: int, d: int) -> int:
    key = (y, mo, d)
    v = _day_cache.get(key)
    if v is None:
        v = calendar.timegm((y, mo, d, 0, 0, 0, 0, 0, 0))
        if len(_day_cache) > 4096:
            _day_cache.clear()
        _day_cache[key] = v
    return v


_TOD_DAY = _day_epoch(MM_DD_YEAR, 1, 1)
"""The fixed day a time of day alone is put on."""


def _tz_offset(tz: str | None) -> int:
    if not tz or tz == "Z":
        return 0
    sign = -1 if tz[0] == "-" else 1
    digits = tz[1:].replace(":", "")
    return sign * (int(digits[:2]) * 3600 + int(digits[2:4]) * 60)


def _month_day_stamp(m: re.Match[str]) -> float | None:
    """Seconds for a stamp without a year (MM_DD_YEAR assumed), None for an impossible date."""
    try:
        base = _day_epoch(MM_DD_YEAR, int(m["mo"]), int(m["d"]))
    except ValueError:
        return None
    ts = base + int(m["h"]) * 3600 + int(m["mi"]) * 60 + int(m["s"])
    if m["f"]:
        ts += int(m["f"]) / 10 ** len(m["f"])
    return float(ts)


def parse_timestamp(text: str) -> tuple[float | None, str]:
    """Parse a leading timestamp; return (epoch seconds or None, the text without it).

    Formats: ISO 8601 (`2024-05-01T12:00:00.123Z`, `2024-05-01 12:00:00`), Python logging
    (`2024-05-01 12:00:00,123`), optionally in brackets, also with a two-digit year (`24-05-01 12:00:00.123`,
    taken as 20YY); `[MM/DD HH:MM:SS]` and `[MM/DD HH:MM:SS logger]:`; glog/absl `I0501 12:00:00.123456
    4242 file.py:88]` (these two assume year MM_DD_YEAR); epoch seconds (`1714564800.12`). Naive times
    are taken as UTC.
    """
    if not text:
        return None, text
    c = text[0]
    if c == "[" and len(text) > 2:
        c2 = text[1]
        if c2.isdigit():
            m = _MMDD.match(text)
            ts = _month_day_stamp(m) if m is not None else None
            if m is not None and ts is not None:
                return ts, text[m.end():]
        else:
            return None, text
    elif c == "(":
        return _other_stamp(text) if text[1:2].isdigit() else (None, text)
    elif c in "IWEF":
        m = _GLOG.match(text)
        ts = _month_day_stamp(m) if m is not None else None
        if m is not None and ts is not None:
            return ts, text[m.end():]
        return None, text
    elif not c.isdigit():
        return None, text
    m = _ISO.match(text)
    if m is not None:
        year = int(m["y"])
        try:
            base = _day_epoch(year if year >= 100 else 2000 + year, int(m["mo"]), int(m["d"]))
        except ValueError:
            return None, text
        h = int(m["h"]) % 12 + (12 if m["ap"].lower() == "pm" else 0) if m["ap"] else int(m["h"])
        ts = base + h * 3600 + int(m["mi"]) * 60 + int(m["s"]) - _tz_offset(m["tz"])
        if m["f"]:
            ts += int(m["f"]) / 10 ** len(m["f"])
        return float(ts), text[m.end():]
    m = _EPOCH.match(text)
    if m is not None:
        return float(m["e"]), text[m.end():]
    return _other_stamp(text)


def _other_stamp(text: str) -> tuple[float | None, str]:
    """The day-first and time-of-day stamps (see `_DAY_FIRST`, `_TIME_OF_DAY`)."""
    m = _DAY_FIRST.match(text)
    if m is not None:
        a, b = int(m["a"]), int(m["b"])
        mo, d = (a, b) if a <= 12 else (b, a)
        h = int(m["h"])
        if m["ap"]:
            h = h % 12 + (12 if m["ap"].lower() == "pm" else 0)
        try:
            base = _day_epoch(int(m["y"]), mo, d)
        except ValueError:
            return None, text
        ts = base + h * 3600 + int(m["mi"]) * 60 + int(m["s"] or 0) + (int(m["f"]) / 10 ** len(m["f"]) if m["f"] else 0)
        return float(ts), text[m.end():]
    m = _TIME_OF_DAY.match(text)
    if m is not None and int(m["h"]) < 24 and int(m["mi"]) < 60 and int(m["s"]) < 61:
        ts = _day_epoch(MM_DD_YEAR, 1, 1) + int(m["h"]) * 3600 + int(m["mi"]) * 60 + int(m["s"])
        return float(ts + (int(m["f"]) / 10 ** len(m["f"]) if m["f"] else 0)), text[m.end():]
    return None, text


class LineNormalizer:
    """Stateful splitter: push decoded text chunks, get `LogLine`s for every complete line.

    A trailing partial line is kept until the next chunk (or `flush()`). Carriage returns inside a line
    (tqdm redraws) keep only the last non-empty state.
    """

    def __init__(self) -> None:
        self._partial = ""
        self.lineno = 0
        self._prev_tags = ""
        self._days = 0  # midnights passed by time-of-day stamps
        self._tod_last: float | None = None
        self._header_ts: float | None = None  # a stamped logging header with no message: the next line's stamp

    def push(self, text: str) -> list[LogLine]:
        if not text:
            return []
        data = self._partial + text
        parts = data.split("\n")
        self._partial = parts.pop()
        out: list[LogLine] = []
        add, untag, carry, unwrap = out.extend, self._untag, self._carry, self._unwrap  # bound once per chunk
        for raw in parts:
            self.lineno += 1
            add(unglue(unwrap(carry(untag(normalize_line(raw, self.lineno))))))
        return out

    def flush(self) -> list[LogLine]:
        if not self._partial:
            return []
        raw, self._partial = self._partial, ""
        self.lineno += 1
        return unglue(self._unwrap(self._carry(self._untag(normalize_line(raw, self.lineno)))))

    def _carry(self, ll: LogLine) -> LogLine:
        """A logging record whose message starts on the next line (`2024-05-01 12:00:00 - INFO - fit.py - 65 - `
        then `EPOCH 3 of 30`): its stamp is that next line's, when the next line has none of its own."""
        carried, self._header_ts = self._header_ts, None
        if ll.ts is None:
            if carried is not None and ll.text.strip():
                ll.ts = carried
            return ll
        m = _LEVEL_HEAD.match(ll.text)
        if m is not None and m.end() >= len(ll.text):
            self._header_ts = ll.ts
        return ll

    def _unwrap(self, ll: LogLine) -> LogLine:
        """A time of day alone (no date) lies on a fixed day: when it falls back by more than half a day from the
        previous one, the clock passed midnight, and this and later stamps move one day on."""
        if ll.ts is None or not _TOD_DAY <= ll.ts < _TOD_DAY + 86400:
            return ll
        ll.ts += self._days * 86400
        if self._tod_last is not None and ll.ts < self._tod_last - 43200:
            self._days += 1
            ll.ts += 86400
        self._tod_last = ll.ts
        return ll

    def _untag(self, ll: LogLine) -> LogLine:
        """Drop a job runner's tags: bracketed groups that open this line exactly as they opened the previous
        one (`[42/fit/9 (pid 5150)] [a1b2c3d4-...] Traceback ...`). A tag holding a counter (`[2/20]`,
        `[Epoch 3]`) or a level word alone (`[INFO]`, short) is the program's own and stays."""
        m = _RUNNER_TAGS.match(ll.text) if ll.text[:1] == "[" else None  # a tag opens the line, or none is there
        tags = m[0] if m is not None else ""
        repeated = bool(tags) and tags == self._prev_tags
        self._prev_tags = tags
        if repeated and len(tags) >= 16 and _COUNTER_TAG.search(tags) is None and len(ll.text) > len(tags):
            ll.text = ll.text[len(tags):]
        return ll


# a progress bar printed without its newline, the next message glued to its end: `... 609/6848 2.7it/s
# 3:40<38:10WARNING ...`, `... 12/50 [00:04<00:13, 2.9it/s]Traceback (most recent call last):`; the message
# starts with a capital letter right after the bar's remaining time (and its closing rate bracket, if any); a bar
# of an iterable with no length ends at its rate bracket, and anything but a blank after it is a message:
# `37it [00:12,  3.05it/s]zsh: segmentation fault  python3 fit.py`
_GLUED = re.compile(r"\d+/\d+ [^\n]*?<[\d:?]+(?:s|,[^\]\n]*\])?(?=[A-Z][A-Za-z]{2})"
                    r"|^\d+it \[[\d:]+, +[\d.]+(?:it/s|s/it)\](?=\S)")


def unglue(ll: LogLine) -> list[LogLine]:
    """A line that is a bar with a message glued to its end, as two lines (both with its line number)."""
    text = ll.text  # the bar's `<` or, for a bar without length, a digit at the start: else no search can match
    m = _GLUED.search(text) if "<" in text else _GLUED.match(text) if text[:1].isdigit() else None
    if m is None:
        return [ll]
    return [replace(ll, text=ll.text[:m.end()]), replace(ll, text=ll.text[m.end():])]


# the only characters outside ASCII that `re.IGNORECASE` matches to an ASCII letter, or that lower-case to one
_ASCII_FOLDING = re.compile("[\u0130\u0131\u017f\u212a]")


def case_folds_as_lower(text: str) -> bool:
    """Whether a search for ASCII literals ignoring case finds one in `text` only where `text.lower()` has it:
    an ASCII line, or one whose other characters (tqdm's blocks, CJK) fold to no ASCII letter."""
    return text.isascii() or _ASCII_FOLDING.search(text) is None


MAX_LINE_CHARS = 4096
"""Longer lines are cut (keeps every regex linear-time in practice, whatever the input)."""


def _drop_level_head(text: str) -> str:
    """The message of a record stamped the way Python's logging prints `asctime`: its informational level header
    dropped (`_LEVEL_HEAD`), so that rules anchored at the message's start read it as they read the bare print."""
    m = _LEVEL_HEAD.match(text)
    return text[m.end():] if m is not None and m.end() < len(text) else text


def _rank_of(m: re.Match[str]) -> int:
    return int(m["a"] or m["b"] or m["c"] or m["d"])


def normalize_line(raw: str, lineno: int) -> LogLine:
    rank = None
    if "\r" in raw:
        # a launcher prefixes the physical line, before the carriage-return states
        m = _RANK.match(raw)
        if m is not None:
            rank = _rank_of(m)
            raw = raw[m.end():]
        segs = [s for s in raw.split("\r") if s.strip()]
        raw = segs[-1] if segs else ""
    if len(raw) > MAX_LINE_CHARS:
        raw = raw[:MAX_LINE_CHARS]
    raw = raw.removeprefix("> ")  # a log pasted as a markdown quote (an issue, a chat): the line is what follows the mark
    if raw[:1] in "\"'" and len(raw) > 2 and raw[-1] == raw[0] and raw.count(raw[0]) == 2 \
            and _QUOTED_EXCEPTION.match(raw) is not None:
        raw = raw[1:-1]  # one pasted line between quotes: `"RuntimeError: Expected to have finished ..."`
    if raw[:1] == "`" and raw.endswith("`") and raw.count("`") == 2 and len(raw) > 2:
        raw = raw[1:-1]  # a line pasted as markdown inline code: `Killed`
    elif raw[:2] in ("**", "__") and raw.endswith(raw[:2]) and len(raw) > 4:
        raw = raw[2:-2]  # a line pasted in markdown bold: **RuntimeError: CUDA error: ...**
    if "\x1b" in raw:
        raw = _ANSI.sub("", raw)
    if not raw.isprintable():
        raw = _CTRL.sub("", raw.replace("\t", "    "))
    ts = None
    text = raw
    if text:
        # Up to two passes: `0: [2024-..] ...` and `[2024-..] [rank0]: ...` both occur.
        for _ in range(2):
            c = text[0] if text else ""
            if c in "[(" or c.isdigit() or (c in "IWEF" and text[1:2].isdigit()):
                if c == "[" and ts is None:
                    m = _TAG.match(text)
                    if m is not None:
                        t, rest = parse_timestamp(text[m.end():])
                        if t is not None:
                            ts, text = t, rest
                            continue
                if c == "(" and (m := _RAY.match(text)) is not None:
                    text = text[m.end():]
                    continue
                if rank is None:
                    m = _RANK.match(text)
                    if m is not None:
                        rank = _rank_of(m)
                        text = text[m.end():]
                        if text[:5] == "[rank" and (m := _INNER_RANK.match(text)) is not None:
                            text = text[m.end():]
                        continue
                if ts is None:
                    t, rest = parse_timestamp(text)
                    if t is not None:
                        ts, text = t, (_drop_level_head(rest) if _ISO.match(text) is not None else rest)
                        continue
            break
    return LogLine(lineno, text.rstrip(), rank, ts)


class Decoder:
    """Incremental UTF-8 decoder with errors='replace' that counts the undecodable bytes."""

    def __init__(self) -> None:
        import codecs

        self._dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.bad_bytes = 0

    def decode(self, data: bytes, final: bool = False) -> str:
        text = self._dec.decode(data, final)
        if "\ufffd" in text:
            # Count replacement characters that did not come from a literal U+FFFD in the input.
            literal = data.count(b"\xef\xbf\xbd")
            self.bad_bytes += max(0, text.count("\ufffd") - literal)
        return text


class FileFollower:
    """Read a file from the start and follow it as it grows, surviving rotation and truncation.

    Rotation is detected by the path's inode changing (the file was renamed and recreated) or its size
    shrinking below our offset (truncated in place, `copytruncate`): the old handle is drained to its end,
    then the new file is read from the start.
    """

    def __init__(self, path: str | os.PathLike[str], chunk_size: int = 1 << 20) -> None:
        self.path = os.fspath(path)
        self.chunk_size = chunk_size
        self._fh: BinaryIO | None = None
        self._ino: int | None = None
        self.rotations = 0

    def _open(self) -> bool:
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - kept open while following
        except FileNotFoundError:
            return False
        self._fh = fh
        self._ino = os.fstat(fh.fileno()).st_ino
        return True

    def read_available(self) -> bytes:
        """Everything written since the last call (possibly b"")."""
        if self._fh is None and not self._open():
            return b""
        assert self._fh is not None
        chunks = [self._fh.read()]
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return b"".join(chunks)  # renamed away, new file not there yet: keep the old handle
        pos = self._fh.tell()
        if st.st_ino != self._ino or st.st_size < pos:
            self._fh.close()
            self._fh = None
            self.rotations += 1
            if self._open():
                assert self._fh is not None
                chunks.append(self._fh.read())
        return b"".join(chunks)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def follow(
        self,
        poll_s: float = 0.5,
        stop: Callable[[], bool] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> Iterator[bytes]:
        """Yield new data forever (b"" on idle polls so callers can check clocks), until `stop()`."""
        try:
            while stop is None or not stop():
                data = self.read_available()
                yield data
                if not data:
                    sleep(poll_s)
        finally:
            self.close()


def iter_stream_chunks(stream: BinaryIO, chunk_size: int = 1 << 16) -> Iterator[bytes]:
    """Chunks of a binary stream (stdin) until EOF; uses read1 so a pipe yields data as it arrives."""
    read = getattr(stream, "read1", stream.read)
    while True:
        data = read(chunk_size)
        if not data:
            return
        yield data

"""Progress prints that carry no loss or time figure of their own, read by their structure:

- a counter repeated from line to line (`Step: 4000. Mean Reward: 1.2`, a JSON record `{"reward": 3.1, "step":
  20000}`): a line with a step key and other numbers is progress once the same key has grown from one such line
  to the next (one line alone may be a setup message: `Step: 2. Building the index, 3 files`; a counter that
  does not grow is no counter); a line that is the counter alone and ends with it (`current step: 41th step`,
  each followed by its loss line; not `Step: 3. Writing shards`) is progress once ALONE_RUN in a row have grown;
- CSV metric records (comma-, tab- or space-aligned): a header row of names with a step column, then rows of as many
  cells; a cell that is a
  timestamp (`created_at`, `time`) dates its row, so the step time comes from the rows themselves.
"""

from __future__ import annotations

import dataclasses
import re

from schedmate.logmon.ingest import LogLine, parse_timestamp
from schedmate.logmon.tables import STEP_KEYS, field_of_key, fields_of, norm_key, parse_value

Emit = list[tuple[dict[str, float], LogLine]]
ALONE_RUN = 3
"""Counter-only lines whose value grew this many times in a row establish the counter (one or two may be
set-up messages: `Step: 2. Building the index`)."""


_STEPS_KEYS = ("steps", "timesteps", "total_steps", "total_timesteps", "env_steps")


class EpisodeSteps:
    """`Episode: n, steps: N` reads two ways: N a running total of environment steps (it grows on every episode, in
    proportion to the episode count) or the episode's own length (it resets and wanders). Returns the running
    total once it has grown on every line, three lines or more, by at least half its mean per episode each time;
    the episode stays the counter otherwise."""

    def __init__(self) -> None:
        self._seen: list[tuple[float, float]] = []
        self._broken = False

    def see(self, episode: float, pairs: list[tuple[str, str]]) -> float | None:
        raw = next((v for k, v in pairs if k in _STEPS_KEYS), None)
        n = parse_value(raw) if raw is not None else None
        if n is None or self._broken:
            return None
        if self._seen and not (episode > self._seen[-1][0] and n > self._seen[-1][1]):
            self._broken = True
            return None
        self._seen.append((episode, n))
        e0, n0 = self._seen[0]
        if len(self._seen) < 3 or e0 <= 0:
            return None
        # a running total grows by an episode's length each episode, about its mean so far (n0 / e0); lengths that
        # happen to grow change by far less than themselves
        if min((b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(self._seen, self._seen[1:])) < 0.5 * n0 / e0:
            return None
        return n


class RepeatedCounter:
    """Lines whose only progress evidence is a step key that keeps growing (see the module docstring)."""

    def __init__(self) -> None:
        self._key: str | None = None
        self._last: float | None = None
        self._pending: tuple[dict[str, float], LogLine] | None = None
        self._live = False
        self._alone: Emit = []
        self._alone_key: str | None = None
        self._episode_steps = EpisodeSteps()

    def offer(self, pairs: list[tuple[str, str]], ll: LogLine) -> Emit:
        key = next((k for k in STEP_KEYS if any(p[0] == k for p in pairs)), None)
        if key is None:
            return []
        if not any(k != key and parse_value(v) is not None for k, v in pairs) and not (self._live and key == self._key):
            return self._offer_alone(key, pairs, ll)  # the counter alone: only once it is established
        values = fields_of(pairs, evidence=False)
        if values is None:
            return []
        if key == "episode" and (total := self._episode_steps.see(values["step"], pairs)) is not None:
            values = {**values, "step": total}  # `Episode: 7, steps: 1411`: the steps so far are the counter
        step = values["step"]
        out: Emit = []
        if key == self._key and self._last is not None and step > self._last:
            if not self._live and self._pending is not None:
                out.append(self._pending)
            out.append((values, ll))
            self._live = True
        else:
            self._live, self._pending = False, (values, ll)
        self._key, self._last = key, step
        return out

    def _offer_alone(self, key: str, pairs: list[tuple[str, str]], ll: LogLine) -> Emit:
        values = fields_of([p for p in pairs if p[0] == key], evidence=False)
        if values is None or not re.search(rf"\d(?:st|nd|rd|th)?(?: ?{re.escape(key)}s?)?\W*$", ll.text, re.IGNORECASE):
            return []  # the line must end with the counter (`41th step`), not go on in prose (`Step: 2. Building`)
        run = self._alone
        if not run or key != self._alone_key or values["step"] <= run[-1][0]["step"]:
            run.clear()
        self._alone_key = key
        run.append((values, ll))
        if len(run) < ALONE_RUN:
            return []
        self._key, self._last, self._live, self._pending = key, values["step"], True, None
        out, self._alone = list(run), []
        return out


_NAME = re.compile(r"^[A-Za-z_][\w/.\-]*$")
_TIME_COLUMN = re.compile(r"(?:^|_)(?:created_at|timestamp|time|datetime|date|wall_?clock)$")


def _split_record(text: str) -> list[str] | None:
    """The cells of a comma-separated row of three or more (`step,loss,lr`; prose has `, `) or of a row of two
    or more cells apart by tabs or runs of spaces (`step<TAB>loss`, which reaches us as spaces, or aligned
    columns `step    loss`); None for any other line."""
    text = text.strip()
    if "," not in text and _WIDE_GAP.search(text):
        cells = _WIDE_GAP.split(text)
        return cells if len(cells) >= 2 else None
    if text.count(",") < 2 or ", " in text:
        return None
    return [c.strip() for c in text.split(",")]


_WIDE_GAP = re.compile(r"\s{2,}|\t")


class CsvRecords:
    """`name,name,...` header rows with a step column and the rows under them (see the module docstring)."""

    def __init__(self) -> None:
        self._keys: list[str] | None = None
        self._step: int | None = None

    def accept(self, ll: LogLine) -> tuple[bool, Emit]:
        """(whether the line was a header or a row of a CSV table of steps, the progress it gives)."""
        cells = _split_record(ll.text)
        if cells is None:
            self._keys = None
            return False, []
        if all(_NAME.match(c) for c in cells):
            keys = [norm_key(c) for c in cells]
            step = next((keys.index(k) for k in STEP_KEYS if k in keys), None)
            self._keys, self._step = (keys, step) if step is not None else (None, None)
            return self._keys is not None, []
        if self._keys is None or self._step is None or len(cells) != len(self._keys):
            return False, []
        step = parse_value(cells[self._step])
        if step is None or step < 0 or step != int(step):
            return False, []
        values: dict[str, float] = {"step": step}
        ts = ll.ts
        for key, cell in zip(self._keys, cells):
            if _TIME_COLUMN.search(key) and ts is None:
                t, rest = parse_timestamp(cell)
                if t is not None and not rest.strip():
                    ts = t
                    continue
            fld = field_of_key(key) or ("loss" if key.split("/")[-1] in ("loss", "loss_step") else None)
            if fld is not None and fld not in values:
                v = parse_value(cell, fld)
                if v is not None:
                    values[fld] = v
        return True, [(values, dataclasses.replace(ll, ts=ts))]

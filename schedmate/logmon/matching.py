"""Applying an ordered rule list to log lines fast, with the ordered scan's answer (see `RuleSet`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from schedmate.logmon.digit_blind import digit_blind, digit_shape
from schedmate.logmon.rules import BENIGN_RULES, Rule

_BLIND: dict[int, tuple[re.Pattern[str], bool]] = {}
"""Per rule regex (by id, with the regex kept alive): whether it is digit-blind (`digit_blind.py`)."""
_HAS_DIGIT = re.compile(r"\d")


class RuleSet:
    """An ordered rule list with the matching machinery.

    The result is that of the ordered scan (the first rule in list order whose needle occurs and whose
    regex matches), with one shortcut: the most recently matched progress rules are tried first, in list
    order, and a hit is kept only when no needle of an earlier benign, error or pause rule occurs in the line
    (decided once per line shape). So a progress bar with a crash message printed onto it still reaches the error
    rules, and a specific progress rule still wins over a generic one once both have been used; a progress
    rule never used in the log before is found by the ordered scan as soon as the recent ones miss.
    """

    def __init__(self, rules: Sequence[Rule], mru_size: int = 3) -> None:
        self.rules: list[Rule] = list(rules)
        self._mru: list[Rule] = []  # most recent first
        self._mru_ordered: list[Rule] = []  # the same rules in list order (tried in this order)
        self._mru_size = mru_size
        self._order: dict[int, int] = {}
        self._zeroed: list[tuple[Rule, tuple[str, ...]]] = []  # every rule with its needles' digits zeroed
        self._candidates: dict[str, list[Rule]] = {}  # line shape -> rules, in list order, whose needle may occur
        self._plans: dict[str, tuple[int, list[tuple[Rule, tuple[str, ...] | None]]]] = {}  # digit shape -> `_plan`
        self._reindex()

    def _reindex(self) -> None:
        """The caches of the old list dropped; the rules' positions and needles with their digits zeroed."""
        self._candidates = {}
        self._plans = {}
        self._zeroed = [(r, tuple(map(digit_shape, r.needles))) for r in self.rules]
        self._order = {id(r): i for i, r in enumerate(self.rules)}
        self._mru = [r for r in self._mru if id(r) in self._order]
        self._mru_ordered = sorted(self._mru, key=lambda r: self._order[id(r)])

    def add(self, rule: Rule, first: bool = True) -> None:
        """Add a learned rule: first in the list (it was made for lines nothing else matched)."""
        if first:
            # after the benign look-alikes, before everything else
            idx = sum(1 for r in self.rules if r.name in {b.name for b in BENIGN_RULES})
            self.rules.insert(idx, rule)
        else:
            self.rules.append(rule)
        self._reindex()

    def match_progress(self, text: str) -> tuple[Rule, re.Match[str]] | tuple[None, None]:
        """The first progress rule matching `text` (for a line an error rule already claimed: a progress bar
        and a crash message printed on one line)."""
        low = text.lower()
        for r in self.rules:
            if not (r.kind == "progress" or r.kind.startswith("pause:")) or (
                    r.needles and not any(n in low for n in r.needles)):
                continue
            m = r.regex.search(text)
            if m is not None:
                # a side bar (data preparation, evaluation) is not the training counter
                return (r, m) if r.kind == "progress" else (None, None)
        return None, None

    def match(self, text: str, digits: str | None = None) -> tuple[Rule, re.Match[str]] | tuple[None, None]:
        """`digits`: the line's digit shape, when the caller has it (shared with the shapes reader)."""
        if digits is None:
            digits = digit_shape(text)
        low = text.lower()
        searched: dict[int, re.Match[str] | None] = {}  # the recent rules' searches, not repeated by the scan
        found = self._plans.get(digits)
        blocker, plan = found if found is not None else self._plan(digits)
        recent = self._mru_ordered
        if recent and self._order[id(recent[0])] <= blocker:  # else no recent rule's hit could be kept
            for r in recent:
                nd = r.needles
                if nd:
                    for n in nd:
                        if n in low:
                            break
                    else:
                        continue
                m = searched[id(r)] = r.regex.search(text)
                if m is not None:
                    if self._order[id(r)] <= blocker:  # no needle of an earlier non-progress rule occurs
                        return r, m
                    break  # an earlier rule might match: the ordered scan decides
        for r, nd in plan:
            if nd is not None:
                for n in nd:
                    if n in low:
                        break
                else:
                    continue
            m = searched[id(r)] if id(r) in searched else r.regex.search(text)
            if m is not None:
                if r.kind == "progress" and (not self._mru or self._mru[0] is not r):
                    self._remember(r)
                return r, m
        return None, None

    def _plan(self, digits: str) -> tuple[int, list[tuple[Rule, tuple[str, ...] | None]]]:
        """For lines of one digit shape (`digits`: the line with its digits zeroed): the blocker, the position of
        the first non-progress rule whose needle may occur (its needle, digits zeroed, occurs in the shape; or it
        has none; the list's length if no rule), so that a recent rule up to it has no earlier needle in the line;
        and the ordered scan, as (rule, needles left to check on the line, None: none). Left out of the scan:
        rules whose needles cannot occur (a needle without digits occurs in the line exactly when it occurs in the
        shape) and digit-blind rules whose regex fails on the shape (so on the line); the scan ends at a
        digit-blind rule that matches the shape with no needle left to check (it matches the line). So the scan
        gives the ordered scan's answer with about one regex search per line. Cached per shape."""
        if len(self._plans) >= 4096:
            self._plans.clear()
        plan: list[tuple[Rule, tuple[str, ...] | None]] = []
        shape = digits.lower()
        blocker = len(self.rules)
        for i, (r, zn) in enumerate(self._zeroed):
            if r.kind != "progress" and (not zn or any(n in shape for n in zn)):
                blocker = i
                break
        for r in self._candidates_for(shape):
            left: tuple[str, ...] | None = None
            if r.needles and not any(n in shape for n in r.needles if _HAS_DIGIT.search(n) is None):
                left = tuple(n for n in r.needles if _HAS_DIGIT.search(n) is not None)
                if not left:
                    continue
            if _is_blind(r.regex):
                if r.regex.search(digits) is None:
                    continue
                if left is None:
                    plan.append((r, None))
                    break
            plan.append((r, left))
        found = self._plans[digits] = (blocker, plan)
        return found

    def _candidates_for(self, shape: str) -> list[Rule]:
        """The rules, in list order, with a needle (digits zeroed) in the line's shape, or without needles: a
        superset of those whose needle occurs in the line (the scan still checks the needles themselves), cached
        per shape, since a log repeats a few shapes."""
        found = self._candidates.get(shape)
        if found is None:
            if len(self._candidates) >= 4096:
                self._candidates.clear()
            found = self._candidates[shape] = [r for r, zn in self._zeroed if not zn or any(n in shape for n in zn)]
        return found

    def _remember(self, rule: Rule) -> None:
        mru = self._mru
        for i, r in enumerate(mru):
            if r is rule:  # found without the dataclass's field-by-field `==` on the rules before it
                del mru[i]
                mru.insert(0, rule)
                return  # the same rules: their list order stands
        if rule in mru:  # an equal rule, another object
            mru.remove(rule)
        mru.insert(0, rule)
        del mru[self._mru_size:]
        self._mru_ordered = sorted(mru, key=lambda r: self._order[id(r)])


def _is_blind(regex: re.Pattern[str]) -> bool:
    found = _BLIND.get(id(regex))
    if found is None or found[0] is not regex:
        if len(_BLIND) > 4096:  # learned rules come and go
            _BLIND.clear()
        found = _BLIND[id(regex)] = (regex, digit_blind(regex))
    return found[1]

"""Compound commands as bash runs them: `&&`/`||` lists, `if`, `for` (word lists and C-style), `while`/`until`
and `case`; a condition the sources do not decide runs every branch, marked conditional."""

from __future__ import annotations

from typing import Any

from schedmate.codeprof.shell.expand import Unknown, arithmetic, is_unknown
from schedmate.codeprof.shell.parser import AndOr, Case, For, If, Seq, While
from schedmate.codeprof.shell.patterns import matches
from schedmate.codeprof.shell.state import MAX_LOOP, Var, _Break, _Exit, _join_into, _Return, _State


class CompoundMixin:
    """`&&`/`||`, if, for, while, case (mixed into the Interpreter)."""

    def _and_or(self, node: AndOr, st: _State) -> bool | None:
        status = self._node(node.first, st)
        for op, nxt in node.rest:
            run = status if op == "&&" else (None if status is None else not status)
            if run is True:
                status = self._node(nxt, st)
            elif run is None:
                status = self._branches(st, [lambda s, n=nxt: self._node(n, s), lambda s: None])
        return status

    # -- joins --------------------------------------------------------------------------------
    def _branches(self, st: _State, bodies: list[Any]) -> bool | None:
        """Run each body on a copy of the state; join: equal values stay, different ones become unknown."""
        results: list[_State] = []
        for body in bodies:
            child = st.fork()
            child.conditional += 1
            try:
                body(child)
            except _Exit:
                continue
            except _Return:
                results.append(child)
                continue
            child.conditional -= 1
            results.append(child)
        if not results:
            raise _Exit()
        _join_into(st, results)
        return None

    def _if(self, node: If, st: _State) -> bool | None:
        for k, (cond, body) in enumerate(node.branches):
            c = self._seq(cond, st)
            if c is True:
                return self._seq(body, st)
            if c is None:
                rest_branches = node.branches[k + 1:]
                alt = If(rest_branches, node.otherwise, node.line) if rest_branches else node.otherwise
                return self._branches(st, [
                    lambda s, b=body: self._seq(b, s),
                    (lambda s, a=alt: self._node(a, s) if isinstance(a, If) else self._seq(a, s)) if alt else
                    (lambda s: None),
                ])
        if node.otherwise is not None:
            return self._seq(node.otherwise, st)
        return True

    def _for(self, node: For, st: _State) -> bool | None:
        if node.arith is not None:
            lk = self._lookup(st)
            init, cond, step = node.arith
            try:
                if init.strip():
                    arithmetic(init, lk)
                for _ in range(MAX_LOOP):
                    if cond.strip() and arithmetic(cond, self._lookup(st)) == 0:
                        return True
                    if self._loop_body(node.body, st):
                        return True
                    if step.strip():
                        arithmetic(step, self._lookup(st))
            except Unknown:
                return self._branches(st, [lambda s: self._loop_body(node.body, s), lambda s: None])
            self.run.notes.append(f"{st.script}:{node.line}: loop stopped after {MAX_LOOP} rounds")
            return None
        if node.words is None:
            items = list(st.positional)
        else:
            items = []
            for w in node.words:
                items.extend(self._expand(w, st)[0])
        if len(items) > MAX_LOOP:
            self.run.notes.append(f"{st.script}:{node.line}: loop over {len(items)} items cut to {MAX_LOOP}")
            items = items[:MAX_LOOP]
        for k, it in enumerate(items):
            st.put(node.var or "_", Var(it, None, (st.where(node.line),)))
            if k:
                st.conditional += 1  # later rounds repeat the first one's launches
            try:
                stop = self._loop_body(node.body, st)
            finally:
                if k:
                    st.conditional -= 1
            if stop:
                break
        return True

    def _loop_body(self, body: Seq, st: _State) -> bool:
        """Run one round; True when the loop should stop (break)."""
        try:
            self._seq(body, st)
        except _Break as b:
            return not b.cont
        return False

    def _while(self, node: While, st: _State) -> bool | None:
        for _ in range(MAX_LOOP):
            c = self._seq(node.cond, st)
            if c is not None and node.until:
                c = not c
            if c is False:
                return True
            if c is None:
                return self._branches(st, [lambda s: self._loop_body(node.body, s), lambda s: None])
            if self._loop_body(node.body, st):
                return True
        self.run.notes.append(f"{st.script}:{node.line}: loop stopped after {MAX_LOOP} rounds")
        return None

    def _case(self, node: Case, st: _State) -> bool | None:
        self._line = node.line
        word = " ".join(self._expand(node.word, st, split=False)[0])
        if is_unknown(word):
            return self._branches(st, [lambda s, b=body: self._seq(b, s) for _, body in node.arms] + [lambda s: None])
        for pats, body in node.arms:
            for p in pats:
                pat = " ".join(self._expand(p, st, split=False)[0]) if any(c in p for c in "$\"'") else p
                hit = None if is_unknown(pat) else matches(word, pat)
                if hit is None:
                    return self._branches(st, [lambda s, b=body: self._seq(b, s), lambda s: None])
                if hit:
                    return self._seq(body, st)
        return True

    # ---------------------------------------------------------------- simple commands

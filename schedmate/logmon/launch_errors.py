"""The interpreter refusing to start the job: the launch names a script or module that is not there.

CPython prints these itself, before any of the job's code runs, and exits with status 2 or 1:
`python: can't open file '/work/run/fit.py': [Errno 2] No such file or directory` (a wrong path or a script
renamed), `/usr/bin/python3: No module named trainer.main` (`python -m` with a module not importable) and
`/opt/env/bin/python: Error while finding module specification for 'trainer.fit'`. No traceback follows, so the
exception rules never see them: they are code (launch) errors the user fixes.
"""

from __future__ import annotations

from schedmate.logmon.rules import Rule

_INTERPRETER = r"^(?:\S*/)?python[\d.]*(?:\.exe)?: "

LAUNCH_ERROR_RULES: list[Rule] = [
    Rule(name="python-cannot-open-script", kind="error:user_code", needles=("can't open file",),
         pattern=_INTERPRETER + r"can't open file ",
         cause="The launch names a script that does not exist: {line}"),
    Rule(name="python-no-module", kind="error:user_code",
         needles=("no module named", "error while finding module specification"),
         pattern=_INTERPRETER + r"(?:No module named |Error while finding module specification for )",
         cause="The launch names a module that cannot be imported: {line}"),
]

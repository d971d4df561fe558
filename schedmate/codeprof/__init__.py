"""The code analyzer: profile a GPU training job from its command line and files, never running them.

`analyze_code(workdir, command=None, env=None, launcher_config=None, use_llm=True, ...) -> CodeProfile`;
`CodeProfile.to_contract()` is the stable JSON of `schedmate analyze code --json`.

Pipeline (one module each): `reader` (bounded, safe reads) -> `launcher` (shlex parse of torchrun,
deepspeed, accelerate, srun/sbatch, mpirun, shell wrappers) -> `pyast` (AST summary of the entry script and
its local imports) -> `static` (parameter space: defaults < configs < command line < run-time values;
field extraction with evidence) -> `llmpass` (ranked context pack, grounded answers for open fields) ->
`derive` (defaults, parameter count, work, communication, network sensitivity) with `cache` (version
cache) around it. `evaluate` scores it on `eval/datasets/code`; `cli` registers the command.
"""

from schedmate.codeprof.analyzer import AnalyzeError, analyze_code
from schedmate.codeprof.facts import FIELDS, CodeProfile, Fact

__all__ = ["FIELDS", "AnalyzeError", "CodeProfile", "Fact", "analyze_code"]

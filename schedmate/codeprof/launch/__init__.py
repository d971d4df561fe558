"""How a job is launched: nodes, processes, the entry script and its arguments, read from the submitted
command through the shell interpreter (`schedmate.codeprof.shell`) and one module per launcher family
(`python`, `torchrun`, `deepspeed`, `accelerate`, `slurm`, `mpi`, `wrappers`, framework CLIs in `clis`),
found through the `FAMILIES` registry. Nothing is run.
"""

from schedmate.codeprof.launch.dispatch import choose, parse_launch
from schedmate.codeprof.launch.model import Launch, LaunchError, Setting, combine, scan_options, to_int

__all__ = ["Launch", "LaunchError", "Setting", "choose", "combine", "parse_launch", "scan_options", "to_int"]

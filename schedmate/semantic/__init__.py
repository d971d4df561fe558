"""Semantic trace augmentation: give trace jobs code, a launch command and simulator-written logs.

    from schedmate.semantic import augment, TEMPLATES, SemanticLogAnnotator
    jobs = augment(load_trace("synth:acme:500:1").jobs, Path("out/sem"), seed=7)
    annotator = SemanticLogAnnotator(inner=ANNOTATORS.create("none"))   # writes each job's log while it runs

`catalogue` holds the job templates (scripts, configs, commands, log styles); `augment` picks a template
per job and materialises its workdir; `logs` writes framework-style logs from the simulator's progress.
See traces/semantic/README.md.
"""

from schedmate.semantic.augment import FAILURE_MIX, Plan, augment, load_plan
from schedmate.semantic.catalogue import TEMPLATES, Params, Template, templates_for
from schedmate.semantic.logs import LogWriter, SemanticLogAnnotator

__all__ = [
    "FAILURE_MIX",
    "TEMPLATES",
    "LogWriter",
    "Params",
    "Plan",
    "SemanticLogAnnotator",
    "Template",
    "augment",
    "load_plan",
    "templates_for",
]

from schedmate.annotators import baselines, history, semantic  # noqa: F401  (register lastk, requested, lucid, helios, history, schedmate)
from schedmate.annotators import builtin as _builtin  # noqa: F401  (registers none, oracle)
from schedmate.annotators.base import ANNOTATORS, Annotator

__all__ = ["ANNOTATORS", "Annotator"]

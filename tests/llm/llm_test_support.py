"""Shared schemas of the LLM tests (a plain module: `conftest` names clash across test folders)."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, Field


class Launcher(str, Enum):
    torchrun = "torchrun"
    deepspeed = "deepspeed"
    accelerate = "accelerate"
    mpirun = "mpirun"
    srun = "srun"
    python = "python"
    other = "other"


class JobFacts(BaseModel):
    """Output schema of prompts/_example_job_facts.md."""

    launcher: Launcher
    num_gpus: int = Field(ge=0, le=4096)

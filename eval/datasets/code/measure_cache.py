"""Measure the version cache: cold analysis, identical resubmission, lightly edited resubmission.

Usage: python eval/datasets/code/measure_cache.py [job ...]
(default: the jobs that need the LLM plus two that do not)
Uses a private version cache and a private LLM answer cache, so the cold run really asks the server.
The light edit appends a comment line at the end of the entry script (outside the LLM excerpt when the
script is long) and, separately, edits a config value the static pass reads.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.cache import VersionCache
from schedmate.llm import LLMCache, LLMClient, LLMConfig

HERE = Path(__file__).resolve().parent
DEFAULT = [
    "prose_params_custom_lm",
    "rl_ppo_single_gpu",
    "rl_a3c_cpu_workers",
    "cpu_tabular_mlp",
    "lightning_cpu_autoencoder",
    "lightning_gpt2_large_deepspeed3",
    "megatron_gpt_tp8_pp4",
    "nanogpt_gpt2_ddp_one_node",
]


def main() -> None:
    jobs = sys.argv[1:] or DEFAULT
    tmp = Path(tempfile.mkdtemp(prefix="cpcache-"))
    client = LLMClient(LLMConfig.from_env(), cache=LLMCache(tmp / "llm.sqlite"))
    cache = VersionCache(tmp / "codeprof.sqlite")
    print("| job | cold s | cold LLM calls | resubmit s | resubmit calls | edited s | edited calls "
          "| LLM fields reused |")
    print("|---|---|---|---|---|---|---|---|")
    for job in jobs:
        wd = tmp / job
        shutil.copytree(HERE / "jobs" / job, wd)
        t = time.perf_counter()
        cold = analyze_code(wd, client=client, cache=cache)
        t_cold = time.perf_counter() - t
        t = time.perf_counter()
        again = analyze_code(wd, client=client, cache=cache)
        t_again = time.perf_counter() - t
        entry = wd / (cold.extras.get("entry_script") or "")
        if entry.is_file():
            entry.write_text(entry.read_text() + "\n# resubmitted after a small edit\n")
        t = time.perf_counter()
        edited = analyze_code(wd, client=client, cache=cache)
        t_edit = time.perf_counter() - t
        print(
            f"| {job} | {t_cold:.3f} | {cold.llm_calls} | {t_again:.4f} | {again.llm_calls} | {t_edit:.3f} | "
            f"{edited.llm_calls} | {', '.join(edited.extras.get('llm_fields_reused', [])) or '-'} |"
        )
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()

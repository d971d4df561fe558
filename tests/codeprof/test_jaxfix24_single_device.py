"""A jitted JAX job runs on one device even when a comment or docstring mentions `pmap`, when the job sits in
a repository that also holds JAX's own sources, and when its code reaches the GPU; a pmap in code, or a torch
import, still leaves the count open."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.jax_devices import code_names, is_jax_library_file
from tests.codeprof.codeprof_support import make_job

TRAIN = '''
import jax
import jax.numpy as jnp
from absl import app, flags

flags.DEFINE_integer("batch_size", 64, "Graphs per batch.")
FLAGS = flags.FLAGS


def main(_):
    # This runs on one accelerator; to use several, wrap the step in jax.pmap and shard the batch.
    step = jax.jit(jax.value_and_grad(loss_fn))
    for batch in loader(FLAGS.batch_size):
        loss, grads = step(params, batch)


if __name__ == "__main__":
    app.run(main)
'''

# a file of the JAX library itself, as a job inside the JAX repository reads it
LIBRARY = '''
def pmap(fun, axis_name=None):
    return fun


def local_device_count():
    return 1


def use_cuda():
    return "cuda"
'''


def test_names_in_comments_and_strings_are_not_code():
    names = code_names('x = 1  # use jax.pmap here\ny = "shard the batch"\n')
    assert "pmap" not in names and "shard" not in names and {"x", "y"} <= names


def test_files_under_jax_or_flax_are_library_files_and_the_examples_are_not():
    assert is_jax_library_file("jax/_src/api.py") and is_jax_library_file("flax/linen/module.py")
    assert not is_jax_library_file("examples/train.py") and not is_jax_library_file("jaxgraph/train.py")


def test_a_jitted_job_whose_comment_mentions_pmap_runs_on_one_gpu(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["num_gpus"].value == 1 and f["micro_batch_size"].value == 64


def test_a_jitted_example_inside_the_jax_repository_runs_on_one_gpu(tmp_path):
    make_job(tmp_path, {"examples/train.py": TRAIN.replace("import jax\n", "import jax\nimport jax._src.api\n"),
                        "examples/__init__.py": "", "jax/__init__.py": "", "jax/_src/__init__.py": "",
                        "jax/_src/api.py": LIBRARY})
    f = analyze_code(tmp_path, "python -m examples.train", use_llm=False).facts
    assert f["num_gpus"].value == 1


def test_a_pmap_in_the_jobs_code_leaves_the_count_open(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN.replace("jax.jit(", "jax.pmap(")})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert "num_gpus" not in f or f["num_gpus"].value is None


def test_a_job_that_also_imports_torch_leaves_the_count_open(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN.replace("import jax\n", "import jax\nimport torch\n")})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert "num_gpus" not in f or f["num_gpus"].value != 1


def test_a_job_whose_own_imports_go_past_the_file_budget_leaves_the_count_open(tmp_path):
    # the entry imports its package, whose `__init__` pulls in more modules than the analyzer reads; the pmap
    # may sit in one it did not read, so "jit only" cannot be concluded
    modules = {f"algo/part{k:02d}.py": f"def f{k}(x):\n    return x\n" for k in range(24)}
    init = "".join(f"from algo import part{k:02d}\n" for k in range(24))
    make_job(tmp_path, {"train.py": TRAIN.replace("import jax\n", "import jax\nimport algo\n"),
                        "algo/__init__.py": init, **modules})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert "num_gpus" not in f or f["num_gpus"].value is None

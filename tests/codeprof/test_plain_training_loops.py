"""Plain PyTorch language-model scripts with module constants: a loop over range(N) taking one optimizer step
per pass gives N steps, an accumulation constant multiplies the batch, and a model built from its depth,
width and vocabulary gives the size. Fixtures are written for these tests."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

SCRIPT = """
    import torch
    from tinylm import TinyLM

    ITERATIONS = {iterations}
    BATCH = 8
    GRADIENT_ACCUMULATE_EVERY = 2

    model = TinyLM(vocab_size=1000, dim=256, depth=4)
    model.cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = iter(torch.utils.data.DataLoader(list(range(100)), batch_size=BATCH))

    for i in {loop}:
        model.train()
        for _ in range(GRADIENT_ACCUMULATE_EVERY):
            loss = model(next(loader))
            loss.backward()
        opt.step()
        opt.zero_grad()
"""


def test_a_loop_over_range_taking_one_optimizer_step_per_pass_is_the_step_count(tmp_path):
    make_job(tmp_path, {"train.py": SCRIPT.format(iterations="int(5e4)", loop="range(ITERATIONS)")})
    prof = analyze_code(tmp_path, command="python train.py", use_llm=False)
    assert prof.value("train_steps") == 50000
    assert prof.value("epochs") is None


def test_a_loop_wrapped_in_a_progress_bar_counts_the_same(tmp_path):
    make_job(tmp_path, {"train.py": SCRIPT.format(iterations="300", loop="tqdm.tqdm(range(ITERATIONS), desc='t')")})
    assert analyze_code(tmp_path, command="python train.py", use_llm=False).value("train_steps") == 300


def test_a_loop_over_epochs_is_not_a_step_count(tmp_path):
    make_job(tmp_path, {"train.py": SCRIPT.format(iterations="10", loop="range(ITERATIONS)").replace(
        "ITERATIONS", "EPOCHS")})
    assert analyze_code(tmp_path, command="python train.py", use_llm=False).value("train_steps") is None


def test_an_accumulate_every_constant_multiplies_the_micro_batch(tmp_path):
    make_job(tmp_path, {"train.py": SCRIPT.format(iterations="100", loop="range(ITERATIONS)")})
    prof = analyze_code(tmp_path, command="python train.py", use_llm=False)
    assert prof.value("micro_batch_size") == 8
    assert prof.value("global_batch_size") == 16


def test_a_model_built_from_depth_width_and_vocabulary_gives_its_size(tmp_path):
    make_job(tmp_path, {"train.py": SCRIPT.format(iterations="100", loop="range(ITERATIONS)")})
    params = analyze_code(tmp_path, command="python train.py", use_llm=False).value("params")
    # 12 x 4 x 256^2 in the blocks + 1000 x 256 embeddings ~ 3.4M
    assert params is not None and 2.5e6 < params < 4.5e6


def test_a_loop_in_a_worker_process_body_is_not_the_runs_step_count(tmp_path):
    make_job(tmp_path, {"train.py": """
        import torch
        import torch.multiprocessing as mp

        ROUNDS = 100

        def worker(rank, model, optimizer):
            for i in range(ROUNDS):
                loss = model(torch.zeros(4)).sum()
                loss.backward()
                optimizer.step()

        if __name__ == "__main__":
            model = torch.nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            procs = [mp.Process(target=worker, args=(r, model, optimizer)) for r in range(8)]
            [q.start() for q in procs]
            [q.join() for q in procs]
    """})
    assert analyze_code(tmp_path, command="python train.py", use_llm=False).value("train_steps") is None

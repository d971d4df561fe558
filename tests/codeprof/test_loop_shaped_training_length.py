"""Training length read from the shape of the entry script's loops: a `while` loop that runs its updates in
chunks, "epochs" that are fixed blocks of sampled-minibatch updates, a warm-up gate that also tests a mode
flag, a sentinel step cap that means "until the epochs end", and absl flags declared through
`define_flags_with_default(...)`. Fixtures are written for these tests, in the style of offline-RL and
graph-learning research scripts."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

CHUNKED = """
    import argparse
    import torch
    from agents import Learner

    def run(args):
        learner = Learner(device="cuda")
        done_iters = 0
        {limit_line}
        while done_iters < {limit}:
            {body}

    if __name__ == "__main__":
        p = argparse.ArgumentParser()
        p.add_argument("--max_updates", default=3e5, type=int)
        p.add_argument("--report_every", default=2e4, type=float)
        p.add_argument("--n_rounds", default=40, type=int)
        p.add_argument("--round_len", default=500, type=int)
        p.add_argument("--batch_size", default=128, type=int)
        run(p.parse_args())
"""


def test_a_while_loop_running_updates_in_chunks_lasts_its_limit_rounded_to_whole_chunks(tmp_path):
    body = ("learner.train(buffer, iterations=int(args.report_every), batch_size=args.batch_size)\n"
            "            done_iters += args.report_every")
    make_job(tmp_path, {"main.py": CHUNKED.format(limit_line="", limit="args.max_updates", body=body)})
    prof = analyze_code(tmp_path, command="python main.py", use_llm=False)
    # 3e5 / 2e4 = 15 whole chunks of 20000 updates
    assert prof.value("train_steps") == 300000
    assert prof.value("epochs") is None


def test_a_chunk_run_as_an_inner_range_loop_and_a_limit_computed_in_the_function_count_the_same(tmp_path):
    body = ("chunk = args.round_len * 3\n"
            "            for _ in range(chunk):\n"
            "                learner.update(buffer.sample(args.batch_size))\n"
            "            done_iters += chunk")
    make_job(tmp_path, {"main.py": CHUNKED.format(limit_line="limit = args.n_rounds * args.round_len",
                                                  limit="limit", body=body)})
    # limit 40 x 500 = 20000 in chunks of 1500: 14 chunks, 21000 updates
    assert analyze_code(tmp_path, command="python main.py", use_llm=False).value("train_steps") == 21000


def test_a_chunk_that_does_not_match_the_counter_increment_is_not_read():
    from schedmate.codeprof.params import ParamSpace
    from schedmate.codeprof.resolve import Resolver
    from schedmate.codeprof.static.loop_length import chunked_loop_steps

    P = ParamSpace()
    P.set("max_updates", 300000, "main.py:14", 1)
    P.set("report_every", 20000.0, "main.py:15", 1)
    R = Resolver(P, {}, None, None)
    text = "while it < args.max_updates:\n    learner.train(buffer, iterations={k})\n    it += args.report_every\n"
    assert chunked_loop_steps(text.format(k="100"), "main.py", R) is None
    assert chunked_loop_steps(text.format(k="int(args.report_every)"), "main.py", R)[0] == 300000


BLOCKS = """
    import torch
    from absl import app, flags
    from .tools import define_flags_with_default
    from .agent import Agent

    FLAGS_DEF = define_flags_with_default(
        env="cartpole-offline",
        batch_size=512,
        n_epochs=300,
        updates_per_epoch=2000,
        eval_period=5,
        device="cuda",
    )

    def main(argv):
        FLAGS = flags.FLAGS
        agent = Agent(device=FLAGS.device)
        for epoch in range(FLAGS.n_epochs):
            for step in range({inner}):
                batch = sample_batch(dataset, FLAGS.batch_size)
                agent.train(batch)
            if epoch % FLAGS.eval_period == 0:
                evaluate(agent)

    if __name__ == "__main__":
        app.run(main)
"""


def test_epochs_made_of_a_fixed_number_of_sampled_updates_are_steps_not_passes(tmp_path):
    make_job(tmp_path, {"algo/__init__.py": "", "algo/run.py": BLOCKS.format(inner="FLAGS.updates_per_epoch")})
    prof = analyze_code(tmp_path, command="python -m algo.run --env pendulum-offline", use_llm=False)
    assert prof.value("train_steps") == 300 * 2000
    assert prof.value("epochs") is None
    assert prof.value("micro_batch_size") == 512


def test_flags_declared_with_define_flags_with_default_take_command_line_values(tmp_path):
    make_job(tmp_path, {"algo/__init__.py": "", "algo/run.py": BLOCKS.format(inner="FLAGS.updates_per_epoch")})
    prof = analyze_code(tmp_path, command="python -m algo.run --n_epochs 10 --batch_size=64", use_llm=False)
    assert prof.value("train_steps") == 10 * 2000
    assert prof.value("micro_batch_size") == 64


def test_an_inner_loop_over_the_datas_batches_keeps_the_epochs(tmp_path):
    make_job(tmp_path, {"algo/__init__.py": "",
                        "algo/run.py": BLOCKS.format(inner="len(dataset) // FLAGS.batch_size")})
    prof = analyze_code(tmp_path, command="python -m algo.run", use_llm=False)
    assert prof.value("train_steps") is None
    assert prof.value("epochs") == 300


GATED = """
    import argparse
    from learners import ActorCritic

    def collect(args):
        agent = ActorCritic()
        for t in range(int(args.max_timesteps)):
            state = env.step(agent.act(state))
            if args.learn_online and t >= args.start_timesteps:
                agent.train(buffer, args.batch_size)

    if __name__ == "__main__":
        p = argparse.ArgumentParser()
        p.add_argument("--max_timesteps", default=2e5, type=int)
        p.add_argument("--start_timesteps", default=1e4, type=int)
        p.add_argument("--batch_size", default=64, type=int)
        p.add_argument("--learn_online", action="store_true")
        collect(p.parse_args())
"""


def test_a_warm_up_gate_that_also_tests_a_mode_flag_counts_updates_when_the_flag_is_on(tmp_path):
    make_job(tmp_path, {"main.py": GATED})
    prof = analyze_code(tmp_path, command="python main.py --learn_online", use_llm=False)
    assert prof.value("train_steps") == 200000 - 10000


def test_a_warm_up_gate_whose_mode_flag_is_off_gives_no_update_count(tmp_path):
    make_job(tmp_path, {"main.py": GATED})
    prof = analyze_code(tmp_path, command="python main.py", use_llm=False)
    assert prof.value("train_steps") != 190000


SENTINEL = """
    import tensorflow as tf
    flags = tf.app.flags
    FLAGS = flags.FLAGS
    flags.DEFINE_integer('epochs', 12, 'number of epochs')
    flags.DEFINE_integer('batch_size', 256, 'minibatch size')
    flags.DEFINE_integer('max_total_steps', {cap}, 'stop after this many iterations')

    def train():
        total_steps = 0
        for epoch in range(FLAGS.epochs):
            while not minibatches.end():
                sess.run(train_op)
                total_steps += 1
                if total_steps > FLAGS.max_total_steps:
                    break

    if __name__ == '__main__':
        tf.app.run()
"""


def test_a_sentinel_step_cap_means_the_epochs_end_the_run(tmp_path):
    make_job(tmp_path, {"train_graph.py": SENTINEL.format(cap="10**10")})
    prof = analyze_code(tmp_path, command="python train_graph.py", use_llm=False)
    assert prof.value("train_steps") is None
    assert prof.value("epochs") == 12


def test_a_real_step_cap_is_still_the_runs_length(tmp_path):
    make_job(tmp_path, {"train_graph.py": SENTINEL.format(cap="10**10")})
    prof = analyze_code(tmp_path, command="python train_graph.py --max_total_steps 5000", use_llm=False)
    assert prof.value("train_steps") == 5000


SUFFIXED = """
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-updates", type=str, default="{default}")
    parser.add_argument("--batch-size", type=int, default=24)
    args = parser.parse_args()
    total = to_count(args.max_updates)
    model = Tagger().cuda()
    step = 0
    while step < total:
        for batch in loader:
            loss = model(batch)
            loss.backward()
            opt.step()
            step += 1
"""


def test_a_step_count_written_with_a_k_suffix_is_that_many_thousand_steps(tmp_path):
    make_job(tmp_path, {"train.py": SUFFIXED.format(default="250k")})
    assert analyze_code(tmp_path, command="python train.py", use_llm=False).value("train_steps") == 250000
    assert analyze_code(tmp_path, command="python train.py --max-updates 1.5M",
                        use_llm=False).value("train_steps") == 1500000


def test_a_loop_counter_advanced_in_the_loop_is_not_a_step_setting(tmp_path):
    make_job(tmp_path, {"train.py": SUFFIXED.format(default="until-converged")})
    assert analyze_code(tmp_path, command="python train.py", use_llm=False).value("train_steps") is None

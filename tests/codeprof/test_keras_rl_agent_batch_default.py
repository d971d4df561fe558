"""A keras-rl agent built without `batch_size` trains on the library's default of 32 replay samples per update;
a `batch_size` the job passes wins."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

AGENT = """
    from keras.models import Sequential
    from rl.agents.dqn import DQNAgent
    from rl.memory import SequentialMemory

    def main():
        memory = SequentialMemory(limit=5000, window_length=1)
        agent = DQNAgent(model=Sequential(), nb_actions=3, memory=memory, nb_steps_warmup=50{extra})
        agent.fit(None, nb_steps=9000)

    main()
"""


def test_a_dqn_agent_without_a_batch_size_uses_the_keras_rl_default(tmp_path):
    make_job(tmp_path, {"play.py": AGENT.format(extra="")})
    f = analyze_code(tmp_path, "python play.py", use_llm=False).facts
    assert f["micro_batch_size"].value == 32
    assert f["global_batch_size"].value == 32


def test_a_batch_size_passed_to_the_agent_beats_the_default(tmp_path):
    make_job(tmp_path, {"play.py": AGENT.format(extra=", batch_size=96")})
    f = analyze_code(tmp_path, "python play.py", use_llm=False).facts
    assert f["global_batch_size"].value == 96
    assert "micro_batch_size" not in f or f["micro_batch_size"].value in (None, 96)


def test_an_own_rl_package_without_the_agent_calls_gets_no_default(tmp_path):
    make_job(tmp_path, {"play.py": "from rl.agents.mine import Learner\n\nLearner().run()\n"})
    f = analyze_code(tmp_path, "python play.py", use_llm=False).facts
    assert "micro_batch_size" not in f or f["micro_batch_size"].value != 32

"""TF1 graphs built in functions and class methods (tf_graph.py), on fixtures written for these tests; every
expected count is worked out by hand in the test."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.static.modelsize.tf_graph import count_tf_graph

from .codeprof_support import file_readers


def _count(tmp_path: Path, text: str) -> tuple[int, list[str]] | None:
    (tmp_path / "agent.py").write_text(text)
    return count_tf_graph(*file_readers(tmp_path), "agent.py")


AGENT = '''
import tensorflow as tf

OBS = 10
ACTS = 3
step = tf.Variable(0, trainable=False)

with tf.name_scope("inputs"):
    STATE = tf.placeholder(tf.float32, shape=[None, OBS], name="state")


class Agent(object):
    def __init__(self, sess, n_actions, hidden=40):
        self.sess = sess
        self.n_actions = n_actions
        self.hidden = hidden
        with tf.variable_scope("agent"):
            self.q = self._build_net(STATE, "online", trainable=True)
            self.q_next = self._build_net(STATE, "frozen", trainable=False)
        self.train_op = tf.train.AdamOptimizer(1e-3).minimize(tf.reduce_mean(self.q))
        self.sync = [tf.assign(t, e) for t, e in zip(self.frozen_params, self.online_params)]

    def _build_net(self, s, scope, trainable):
        with tf.variable_scope(scope):
            w = tf.get_variable("w_in", [OBS, self.hidden], trainable=trainable)
            b = tf.get_variable("b_in", [1, self.hidden], trainable=trainable)
            h = tf.nn.relu(tf.matmul(s, w) + b)
            h = tf.layers.dense(h, 20, activation=tf.nn.relu, trainable=trainable)
            return tf.layers.dense(h, self.n_actions, trainable=trainable)


sess = tf.Session()
agent = Agent(sess, ACTS)
'''


def test_an_agent_built_in_a_method_counts_the_trained_network_and_not_its_frozen_copy(tmp_path: Path) -> None:
    got = _count(tmp_path, AGENT)
    # w 10 x 40 + b 40 = 440; dense 40 -> 20: 820; dense 20 -> 3: 63; the step counter and the frozen copy: 0
    assert got is not None and got[0] == 440 + 820 + 63


HELPERS = '''
import tensorflow as tf


def weight(shape):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.05))


def bias(shape):
    return tf.Variable(tf.constant(0.1, shape=shape))


def conv(x, w):
    return tf.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME")


def build():
    x = tf.placeholder("float", [None, 28, 28, 2])
    w1, b1 = weight([5, 5, 2, 16]), bias([16])
    h = tf.nn.max_pool(tf.nn.relu(conv(x, w1) + b1), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    flat = tf.reshape(h, [-1, 14 * 14 * 16])
    w2, b2 = weight([14 * 14 * 16, 10]), bias([10])
    return x, tf.matmul(flat, w2) + b2


def main():
    inputs, logits = build()
    return logits


if __name__ == "__main__":
    main()
'''


def test_weights_made_by_helper_functions_count_once_per_network_built(tmp_path: Path) -> None:
    got = _count(tmp_path, HELPERS)
    # conv 5*5*2*16 + 16 = 816; fc 3136 * 10 + 10 = 31370
    assert got is not None and got[0] == 816 + 31370


def test_a_layer_on_a_tensor_of_unknown_width_makes_no_count(tmp_path: Path) -> None:
    text = '''
import tensorflow as tf


def build(features):
    return tf.layers.dense(features, 10)


logits = build(load_features())
'''
    assert _count(tmp_path, text) is None

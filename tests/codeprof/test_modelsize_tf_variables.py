"""TF1 models written as explicit variables are counted by the shapes their initialisers are given."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

RAW_TF1 = {
    "raw_mlp.py": """
        import tensorflow as tf

        n_in = 20 * 20
        n_h = 64
        n_out = 5
        step = tf.Variable(0, trainable=False, name='step')

        W = {
            'l1': tf.Variable(tf.random_normal([n_in, n_h])),
            'conv': tf.get_variable('conv', shape=[3, 3, 1, 8]),
            'head': tf.Variable(tf.truncated_normal([n_h, n_out], stddev=0.1)),
        }
        B = {'l1': tf.Variable(tf.zeros([n_h])), 'head': tf.Variable(tf.zeros([n_out]))}

        def net(x):
            return tf.matmul(tf.nn.relu(tf.matmul(x, W['l1']) + B['l1']), W['head']) + B['head']

        with tf.Session() as sess:
            for i in range(300):
                sess.run(train_op, feed_dict={X: xb, Y: yb})
    """,
}


def test_explicit_tf1_variables_are_counted_and_a_frozen_counter_is_not(tmp_path):
    make_job(tmp_path, RAW_TF1)
    f = analyze_code(tmp_path, "python raw_mlp.py", use_llm=False).facts
    assert f["params"].value == 400 * 64 + 3 * 3 * 1 * 8 + 64 * 5 + 64 + 5  # 26,053


def test_a_variable_whose_shape_cannot_be_valued_leaves_params_unknown(tmp_path):
    job = {"raw_mlp.py": RAW_TF1["raw_mlp.py"].replace("n_h = 64", "n_h = read_width()")}
    make_job(tmp_path, job)
    assert analyze_code(tmp_path, "python raw_mlp.py", use_llm=False).facts.get("params") is None

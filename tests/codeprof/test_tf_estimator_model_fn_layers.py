"""TF1 Estimator jobs (tf_graph.py, tf_layers.py): the model function handed to `tf.estimator.Estimator` is the
graph builder, its tf.layers and Keras layers are sized on tensors whose shape a `tf.reshape` fixes, and a
`variable_scope(reuse=True)` second call adds nothing. Fixtures written for these tests; counts by hand."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.static.modelsize.tf_graph import count_tf_graph

from .codeprof_support import file_readers


def _count(tmp_path: Path, text: str) -> tuple[int, list[str]] | None:
    (tmp_path / "train.py").write_text(text)
    return count_tf_graph(*file_readers(tmp_path), "train.py")


KERAS_IN_MODEL_FN = '''
import tensorflow as tf

def model_fn(features, labels, mode):
    x = tf.reshape(features["img"], [-1, 16, 16, 3])
    y = tf.keras.layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    y = tf.keras.layers.MaxPool2D(2)(y)
    y = tf.keras.layers.Flatten()(y)
    logits = tf.keras.layers.Dense(5)(y)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    if mode == tf.estimator.ModeKeys.TRAIN:
        train_op = tf.train.AdamOptimizer(0.1).minimize(loss)
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss)

def main(_):
    est = tf.estimator.Estimator(model_fn=model_fn, model_dir="/tmp/m")
    est.train(input_fn=None, steps=100)
'''


def test_keras_layers_in_an_estimator_model_function_are_sized_through_the_reshaped_input(tmp_path: Path) -> None:
    got = _count(tmp_path, KERAS_IN_MODEL_FN)
    # conv 3*3*3*8 + 8 = 224 on 16x16 (same) -> pool 8x8x8 = 512 -> dense 512*5 + 5 = 2565
    assert got is not None and got[0] == 224 + 2565


TF_LAYERS_REUSED = '''
import tensorflow as tf

def net(x_dict, reuse, is_training):
    with tf.variable_scope("Net", reuse=reuse):
        x = tf.reshape(x_dict["images"], shape=[-1, 12, 12, 1])
        h = tf.layers.conv2d(x, 4, 5, activation=tf.nn.relu)
        h = tf.layers.max_pooling2d(h, 2, 2)
        h = tf.contrib.layers.flatten(h)
        h = tf.layers.dropout(h, rate=0.5, training=is_training)
        return tf.layers.dense(h, 3)

def model_fn(features, labels, mode):
    train_logits = net(features, reuse=False, is_training=True)
    test_logits = net(features, reuse=True, is_training=False)
    return tf.estimator.EstimatorSpec(mode, predictions=test_logits)

model = tf.estimator.Estimator(model_fn)
'''


def test_tf_layers_in_a_reused_variable_scope_are_counted_once(tmp_path: Path) -> None:
    got = _count(tmp_path, TF_LAYERS_REUSED)
    # conv 5*5*1*4 + 4 = 104 -> 8x8x4 -> pool 4x4x4 = 64 -> dense 64*3 + 3 = 195; the reused call adds nothing
    assert got is not None and got[0] == 104 + 195


RNN_ON_ONE_HOT = '''
import tensorflow as tf
SEQ = 20

def rnn_fn(features, labels, mode):
    x = tf.reshape(features["x"], [-1, SEQ])
    ids = x[:, :-1]
    h = tf.keras.layers.LSTM(8, return_sequences=True)(tf.one_hot(ids, 6))
    logits = tf.keras.layers.Dense(6)(h)
    return tf.estimator.EstimatorSpec(mode=mode, loss=tf.reduce_mean(logits))

clf = tf.estimator.Estimator(model_fn=rnn_fn)
'''


def test_a_recurrent_layer_on_one_hot_vectors_takes_the_depth_as_its_input_width(tmp_path: Path) -> None:
    got = _count(tmp_path, RNN_ON_ONE_HOT)
    # LSTM 4 * (8 * (6 + 8) + 8) = 480; dense 8 * 6 + 6 = 54
    assert got is not None and got[0] == 480 + 54


UNKNOWN_INPUT = '''
import tensorflow as tf

def model_fn(features, labels, mode):
    h = tf.layers.dense(features["x"], 64)
    return tf.estimator.EstimatorSpec(mode, predictions=tf.layers.dense(h, 10))

model = tf.estimator.Estimator(model_fn)
'''


def test_a_model_function_whose_first_layer_width_comes_from_the_data_stays_unknown(tmp_path: Path) -> None:
    assert _count(tmp_path, UNKNOWN_INPUT) is None

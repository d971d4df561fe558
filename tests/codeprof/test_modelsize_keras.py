"""Keras models written as a `Sequential` layer list are counted by carrying the tensor shape through the layers
(a Keras layer names only its output width)."""

from __future__ import annotations

import pytest

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.keras_layers import KLayer, sequential_params
from schedmate.codeprof.static.modelsize.layers import GiveUp
from tests.codeprof.codeprof_support import make_job


def test_a_dense_stack_counts_weights_and_biases_from_the_input_dim():
    layers = [KLayer("Dense", [32], {"input_dim": 12}), KLayer("Dropout", [0.2]), KLayer("Dense", [5])]
    assert sequential_params(layers) == (12 * 32 + 32) + (32 * 5 + 5)


def test_convolutions_and_pooling_carry_the_spatial_size_into_the_first_dense_layer():
    layers = [KLayer("Input", [], {"shape": (20, 20, 3)}),
              KLayer("Conv2D", [8, 5], {"strides": 1}),           # 16x16x8
              KLayer("MaxPooling2D", [], {"pool_size": (2, 2)}),  # 8x8x8
              KLayer("Conv2D", [4, (3, 3)], {"padding": "same", "use_bias": False}),  # 8x8x4
              KLayer("Flatten"), KLayer("Dense", [3])]
    assert sequential_params(layers) == (5 * 5 * 3 * 8 + 8) + (3 * 3 * 8 * 4) + (8 * 8 * 4 * 3 + 3)


def test_an_embedding_and_recurrent_layers_are_counted_and_an_unknown_input_gives_up():
    layers = [KLayer("Embedding", [1000, 16]), KLayer("LSTM", [8]), KLayer("Dense", [1])]
    assert sequential_params(layers) == 1000 * 16 + 4 * (8 * (16 + 8) + 8) + (8 + 1)
    with pytest.raises(GiveUp):
        sequential_params([KLayer("Dense", [4]), KLayer("Dense", [2])])


KERAS_JOB = {
    "fit_shapes.py": """
        import tensorflow as tf
        from tensorflow.keras import layers

        CLASSES = 6
        net = tf.keras.Sequential([
            layers.Conv2D(12, 3, activation="relu", input_shape=(30, 30, 1)),
            layers.MaxPooling2D(),
            layers.BatchNormalization(),
            layers.GlobalAveragePooling2D(),
            layers.Dense(CLASSES, activation="softmax"),
        ])
        net.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        net.fit(xs, ys, batch_size=48, epochs=3)
    """,
}


def test_a_sequential_model_in_the_entry_script_is_counted(tmp_path):
    make_job(tmp_path, KERAS_JOB)
    f = analyze_code(tmp_path, "python fit_shapes.py", use_llm=False).facts
    assert f["params"].value == (3 * 3 * 1 * 12 + 12) + 2 * 12 + (12 * 6 + 6)
    assert any(e.startswith("fit_shapes.py:") for e in f["params"].evidence)


ADD_JOB = {
    "small_policy.py": """
        from keras.models import Sequential
        from keras.layers import Dense, Activation

        model = Sequential()
        model.add(Dense(24, input_shape=(6,)))
        model.add(Activation("relu"))
        model.add(Dense(24))
        model.add(Dense(3))
        model.compile(loss="mse", optimizer="adam")
        model.fit(obs, targets, batch_size=16, epochs=4)
    """,
}


def test_a_sequential_model_built_with_add_calls_is_counted(tmp_path):
    make_job(tmp_path, ADD_JOB)
    f = analyze_code(tmp_path, "python small_policy.py", use_llm=False).facts
    assert f["params"].value == (6 * 24 + 24) + (24 * 24 + 24) + (24 * 3 + 3)

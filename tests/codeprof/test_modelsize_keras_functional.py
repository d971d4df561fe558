"""Keras functional models (layers called on tensors, merges, `Model(inputs, outputs)`) are counted by following
the graph: only layers on the way to the outputs count, a shared layer counts once."""

from __future__ import annotations

import pytest

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.keras_graph import KTensor, call_layer, functional_model, merge
from schedmate.codeprof.static.modelsize.keras_layers import KLayer
from schedmate.codeprof.static.modelsize.layers import GiveUp
from tests.codeprof.codeprof_support import make_job

# a two-level U-shaped net on 32x32x2 inputs, written star-import style, with a built but unused branch
UNET_JOB = {
    "nets.py": """
        from keras.models import *
        from keras.layers import *

        def tiny_ushape(in_shape=(32, 32, 2), n_out=3):
            x0 = Input(in_shape)
            d1 = Conv2D(8, 3, padding='same', activation='relu')(x0)
            p1 = MaxPooling2D(pool_size=(2, 2))(d1)
            d2 = Conv2D(16, 3, padding='same', activation='relu')(p1)
            unused = Conv2D(64, 3, padding='same')(d2)
            u1 = Conv2D(8, 2, padding='same')(UpSampling2D(size=(2, 2))(d2))
            m1 = concatenate([d1, u1], axis=3)
            d3 = Conv2D(8, 3, padding='same')(m1)
            d3 = BatchNormalization()(d3)
            out = Conv2D(n_out, 1, activation='softmax')(d3)
            net = Model(input=x0, output=out)
            net.compile(optimizer='adam', loss='categorical_crossentropy')
            return net
    """,
    "fit_tiny.py": """
        from nets import *

        model = tiny_ushape()
        model.fit(xs, ys, batch_size=4, epochs=3)
    """,
}
UNET_PARAMS = ((3 * 3 * 2 * 8 + 8) + (3 * 3 * 8 * 16 + 16) + (2 * 2 * 16 * 8 + 8) + (3 * 3 * 16 * 8 + 8)
               + 2 * 8 + (8 * 3 + 3))


def test_a_functional_model_counts_the_layers_on_the_way_to_its_output(tmp_path):
    make_job(tmp_path, UNET_JOB)
    f = analyze_code(tmp_path, "python fit_tiny.py", use_llm=False).facts
    assert f["params"].value == UNET_PARAMS  # 1,755: the unused 64-filter conv is left out


def test_layers_built_inline_and_dropped_are_all_counted():
    x = KTensor((8, 8, 4))
    for _ in range(40):  # each layer object is referenced only by the tensors it produced
        x = call_layer(KLayer("Conv2D", [4, 1], {}), [x], {})
    assert functional_model([None, x], {}).total() == 40 * (4 * 4 + 4)


def test_a_shared_layer_counts_once_and_add_needs_equal_shapes():
    inp = KTensor((10,))
    shared = KLayer("Dense", [6], {})
    a, b = call_layer(shared, [inp], {}), call_layer(shared, [inp], {})
    both = merge("add", [a, b])
    head = call_layer(KLayer("Dense", [2], {}), [both], {})
    assert functional_model([inp, head], {}).total() == (10 * 6 + 6) + (6 * 2 + 2)
    with pytest.raises(GiveUp):
        merge("add", [a, KTensor((7,))])


def test_padding_and_transposed_convolutions_carry_the_spatial_size():
    x = KTensor((7, 7, 4))
    x = call_layer(KLayer("ZeroPadding2D", [(1, 1)], {}), [x], {})
    assert x.shape == (9, 9, 4)
    y = call_layer(KLayer("Conv2DTranspose", [5, 3], {"strides": 2, "padding": "same"}), [x], {})
    assert y.shape == (18, 18, 5) and sum(n for _, n in y.layers.values()) == 3 * 3 * 4 * 5 + 5


def test_a_model_whose_output_is_not_a_followed_tensor_gives_up():
    with pytest.raises(GiveUp):
        functional_model([], {"outputs": "logits"})
    with pytest.raises(GiveUp):
        call_layer(KLayer("Conv2D", [4, 3], {"data_format": "channels_first"}), [KTensor((3, 8, 8))], {})

"""A Darknet `.cfg` model file: parameters counted from its layer list (conv weights plus batch norm's gamma and
beta, or biases), channels carried through route/shortcut/upsample/maxpool; an unknown layer type or a file that
is not a Darknet cfg gives no count."""

from __future__ import annotations

import textwrap

from schedmate.codeprof.darknet_cfg import count_darknet_params, net_batch, net_max_batches, parse_darknet_cfg

# our own small network; the expected count is worked out layer by layer in the comments
SMALL_CFG = textwrap.dedent("""
    [net]
    # training
    batch=24
    subdivisions=3
    width=320
    height=320
    channels=3
    learning_rate=0.002
    max_batches = 9000
    steps=7000,8000
    scales=.1,.1

    [convolutional]
    batch_normalize=1
    filters=8
    size=3
    stride=1
    activation=leaky
    # 8*3*3*3 + 2*8 = 232

    [convolutional]
    batch_normalize=1
    filters=16
    size=3
    stride=2
    activation=leaky
    # 16*3*3*8 + 32 = 1184

    [convolutional]
    batch_normalize=1
    filters=8
    size=1
    activation=leaky
    # 8*1*1*16 + 16 = 144

    [convolutional]
    batch_normalize=1
    filters=16
    size=3
    activation=leaky
    # 16*3*3*8 + 32 = 1184

    [shortcut]
    from=-3
    activation=linear

    [maxpool]
    size=2
    stride=2

    [route]
    layers = -1, -5
    # 16 + 16 = 32 channels

    [upsample]
    stride=2

    [convolutional]
    size=1
    filters=21
    activation=linear
    # 21*32 + 21 biases = 693

    [yolo]
    mask = 0,1,2
    anchors = 5,7, 11,13, 21,25
    classes=2
    num=3

    [route]
    layers = -4
    groups = 2
    group_id = 1
    # half of layer 6's 32 channels = 16

    [convolutional]
    batch_normalize=1
    filters=4
    size=3
    groups=4
    activation=leaky
    # 4*3*3*(16/4) + 8 = 152
""")
SMALL_PARAMS = 232 + 1184 + 144 + 1184 + 693 + 152


def test_the_layer_list_counts_conv_weights_and_batch_norm_through_routes_and_shortcuts():
    cfg = parse_darknet_cfg(SMALL_CFG)
    assert cfg is not None
    assert count_darknet_params(cfg) == SMALL_PARAMS == 3589


def test_the_net_section_gives_batch_subdivisions_and_max_batches():
    cfg = parse_darknet_cfg(SMALL_CFG)
    assert cfg is not None
    assert net_batch(cfg) == (24, 3)
    assert net_max_batches(cfg) == 9000


def test_an_unknown_layer_type_leaves_the_count_unknown():
    cfg = parse_darknet_cfg(SMALL_CFG + "\n[fancy_attention]\nheads=4\n")
    assert cfg is not None
    assert count_darknet_params(cfg) is None


def test_a_route_to_a_layer_that_does_not_exist_leaves_the_count_unknown():
    cfg = parse_darknet_cfg(SMALL_CFG + "\n[route]\nlayers=-40\n")
    assert cfg is not None
    assert count_darknet_params(cfg) is None


def test_an_ini_file_that_does_not_start_with_net_is_not_a_darknet_cfg():
    assert parse_darknet_cfg("[metadata]\nname = pkg\n\n[options]\nzip_safe = False\n") is None
    assert parse_darknet_cfg("key=1\n[net]\nbatch=2\n[convolutional]\nfilters=2\n") is None


def test_a_batch_that_subdivisions_do_not_divide_is_not_read():
    cfg = parse_darknet_cfg("[net]\nbatch=10\nsubdivisions=4\n[maxpool]\nsize=2\n")
    assert cfg is not None
    assert net_batch(cfg) is None

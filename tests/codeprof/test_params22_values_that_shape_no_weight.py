"""Values a module's constructor computes that cannot change its parameter count no longer stop the count: a flag
(`pretrained=is_main()`, a device the run picks), a config section spread with `**`, a numpy noise schedule that
fills a frozen table or a buffer, a re-initialised bias, a stack of `copy.deepcopy` blocks, the settings a
tuple-returning builder writes after the model. A width that depends on such a value still leaves the count null.
Fixtures are written for these tests; every expected count is worked out by hand."""

from __future__ import annotations

from pathlib import Path

from tests.codeprof.codeprof_support import make_job as _write
from tests.codeprof.codeprof_support import params_of as _params

FLAG_NETS = """
    import torch
    import torch.nn as nn
    import torch.distributed as dist


    def is_main():
        if not dist.is_available() or not dist.is_initialized():
            return True
        return dist.get_rank() == 0


    class Trunk(nn.Module):
        def __init__(self, width, pretrained=False, verbose=False):
            super().__init__()
            self.stem = nn.Conv2d(3, WIDTH_EXPR, 3)
            self.out = nn.Linear(WIDTH_EXPR, 10)


    class Net(nn.Module):
        def __init__(self, width, device):
            super().__init__()
            self.trunk = Trunk(width, pretrained=is_main(), verbose=dist.get_rank() == 0)
            self.head = nn.Linear(10, 2)
"""

FLAG_TRAIN = """
    import argparse

    import torch

    from nets import Net

    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--cuda", action="store_true")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    args.use_cuda = args.cuda and torch.cuda.is_available()
    device = torch.device("cuda" if args.use_cuda else "cpu")
    model = Net(args.width, device)
"""


def test_a_pretrained_flag_from_a_distributed_query_and_a_run_time_device_do_not_stop_the_count(tmp_path: Path) -> None:
    _write(tmp_path, {"nets.py": FLAG_NETS.replace("WIDTH_EXPR", "width"), "train.py": FLAG_TRAIN})
    # stem 3*32*9 + 32 = 896, out 32*10 + 10 = 330, head 10*2 + 2 = 22
    assert _params(tmp_path, "python train.py --width 32") == 1248


def test_a_width_chosen_by_the_unknown_flag_leaves_the_count_null(tmp_path: Path) -> None:
    _write(tmp_path, {"nets.py": FLAG_NETS.replace("WIDTH_EXPR", "(2 * width if pretrained else width)"),
                      "train.py": FLAG_TRAIN})
    assert _params(tmp_path, "python train.py --width 32") is None


SCHEDULE_NETS = """
    import numpy as np
    import torch
    import torch.nn as nn


    def snr_schedule(steps, power=2.0):
        x = np.linspace(0, 1, steps + 1)
        alphas = (1 - np.power(x, power)) ** 2
        return np.clip(alphas, 1e-4, 1.0)


    class Denoiser(nn.Module):
        def __init__(self, dim, steps):
            super().__init__()
            alphas = snr_schedule(steps)
            log_snr = np.log(alphas) - np.log(1 - alphas)
            self.gamma = nn.Parameter(torch.from_numpy(-log_snr).float(), requires_grad=False)
            self.register_buffer("sigmas", torch.tensor(np.sqrt(1 - alphas)))
            self.net = nn.Sequential(nn.Linear(dim, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, dim))
            EXTRA
"""

SCHEDULE_TRAIN = """
    import argparse

    from nets import Denoiser

    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    model = Denoiser(args.dim, args.steps)
"""


def test_a_numpy_noise_schedule_that_fills_a_frozen_table_and_a_buffer_adds_no_trained_parameter(
        tmp_path: Path) -> None:
    _write(tmp_path, {"nets.py": SCHEDULE_NETS.replace("EXTRA", "pass"), "train.py": SCHEDULE_TRAIN})
    # 32*128 + 128 = 4224 and 128*32 + 32 = 4128; the schedule's frozen table is not trained
    assert _params(tmp_path, "python train.py --dim 32") == 8352


def test_a_layer_sized_by_the_schedule_leaves_the_count_null(tmp_path: Path) -> None:
    _write(tmp_path, {"nets.py": SCHEDULE_NETS.replace("EXTRA", "self.proj = nn.Linear(len(alphas), dim)"),
                      "train.py": SCHEDULE_TRAIN})
    assert _params(tmp_path, "python train.py --dim 32") is None


def test_a_re_initialised_bias_and_a_stack_of_deep_copies_are_counted_once_each(tmp_path: Path) -> None:
    _write(tmp_path, {"heads.py": """
        import copy
        import math

        import torch
        import torch.nn as nn


        def clones(block, n):
            return nn.ModuleList([copy.deepcopy(block) for _ in range(n)])


        class Layer(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.attn = nn.Linear(d, d)
                self.ff = nn.Linear(d, d)


        class Head(nn.Module):
            def __init__(self, d, n_heads, n_points):
                super().__init__()
                self.n_heads, self.n_points = n_heads, n_points
                self.offsets = nn.Linear(d, n_heads * n_points * 2)
                self.layers = clones(Layer(d), 3)
                self.cls = nn.Linear(d, 5)
                self._reset()

            def _reset(self):
                prior = 0.01
                self.cls.bias.data = torch.ones(5) * -math.log((1 - prior) / prior)
                thetas = torch.arange(self.n_heads, dtype=torch.float32) * (2.0 * math.pi / self.n_heads)
                grid = torch.stack([thetas.cos(), thetas.sin()], -1).repeat(1, self.n_points)
                self.offsets.bias = nn.Parameter(grid.view(-1))
                nn.init.constant_(self.layers[-1].ff.weight, 0.0)
                for layer in self.layers:
                    layer.scale = 1.0
    """, "train.py": """
        import argparse

        from heads import Head

        parser = argparse.ArgumentParser()
        parser.add_argument("--dim", type=int, default=16)
        parser.add_argument("--epochs", type=int, default=3)
        args = parser.parse_args()
        model = Head(args.dim, 4, 2)
    """})
    # offsets 16*16 + 16 = 272; three copies of two 16x16 layers: 3 * 2 * 272 = 1632; cls 16*5 + 5 = 85
    assert _params(tmp_path, "python train.py") == 1989


def test_settings_a_tuple_builder_writes_after_the_model_do_not_hide_the_model(tmp_path: Path) -> None:
    _write(tmp_path, {"detnet/__init__.py": "", "detnet/build.py": """
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, hidden):
                super().__init__()
                self.inp = nn.Linear(8, hidden)
                self.out = nn.Linear(hidden, 1)


        class Criterion(nn.Module):
            def __init__(self, weights):
                super().__init__()
                self.weights = weights


        def build(args):
            model = Net(args.hidden)
            weight_dict = {"loss_ce": 1.0}
            weight_dict["loss_box"] = args.box_coef
            args.aux = True
            criterion = Criterion(weight_dict)
            post = {"bbox": None}
            return model, criterion, post
    """, "main.py": """
        import argparse

        from detnet.build import build

        parser = argparse.ArgumentParser()
        parser.add_argument("--hidden", type=int, default=16)
        parser.add_argument("--box_coef", type=float, default=5.0)
        parser.add_argument("--epochs", type=int, default=3)
        args = parser.parse_args()
        model, criterion, postprocessors = build(args)
    """})
    # inp 8*16 + 16 = 144, out 16 + 1 = 17
    assert _params(tmp_path, "python main.py") == 161


def test_layers_registered_with_setattr_under_f_string_names_are_all_counted(tmp_path: Path) -> None:
    _write(tmp_path, {"field.py": """
        import torch
        import torch.nn as nn


        class Encoding(nn.Module):
            def __init__(self, freqs):
                super().__init__()
                self.bands = 2 ** torch.linspace(0, freqs - 1, freqs)


        class Field(nn.Module):
            def __init__(self, depth=3, width=32, inputs=6):
                super().__init__()
                self.enc = Encoding(4)
                for i in range(depth):
                    layer = nn.Linear(inputs if i == 0 else width, width)
                    setattr(self, f"block_{i + 1:02d}", nn.Sequential(layer, nn.ReLU(True)))
                self.out = nn.Linear(width, 4)
    """, "train.py": """
        import argparse

        from field import Field

        parser = argparse.ArgumentParser()
        parser.add_argument("--epochs", type=int, default=3)
        args = parser.parse_args()
        model = Field()
    """})
    # 6*32 + 32 = 224, two 32x32 layers 2 * 1056 = 2112, out 32*4 + 4 = 132; the bands are a buffer
    assert _params(tmp_path, "python train.py") == 224 + 2112 + 132

"""Plain-Python questions a model constructor asks about values the interpreter knows: `callable(x)` (the
`default(value, factory)` idiom), `hasattr(module, name)` on a module it built, `isinstance(pair, JobClass)` of a
tuple, and `layer.bias` of a torch layer (`if conv.bias is not None:` before an in-place init). Settled as
Python settles them, the model is counted; a question that stays open still leaves the count null."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

HELPERS = """
    import torch
    import torch.nn as nn

    def pick(*options):
        for o in options:
            if o is not None:
                return o() if callable(o) else o
        return None

    class Ramp(object):
        def __init__(self, *points):
            if len(points) == 1 and isinstance(points[0], Ramp):
                self.points = list(points[0].points)
            else:
                self.points = [(float(a), float(b)) for a, b in points]

    def scaled_linear(*args, scale=1.0, **kwargs):
        layer = nn.Linear(*args, **kwargs)
        with torch.no_grad():
            if layer.bias is not None:
                torch.nn.init.uniform_(layer.bias, -0.1 * scale, 0.1 * scale)
        return layer
"""

NET = {
    "helpers.py": HELPERS,
    "net.py": """
        import torch.nn as nn
        from helpers import pick, Ramp, scaled_linear

        class Body(nn.Module):
            def __init__(self, width=None, classes=10):
                super().__init__()
                self.width = pick(width, lambda: 64)
                self.classes = classes
                self.ramp = Ramp((0.0, 1.0), (100.0, 0.5))
                self.fc = scaled_linear(32, pick(width, 64), bias=True)

        class Wrapper(nn.Module):
            def __init__(self, body, classes=None):
                super().__init__()
                self.body = body
                self.classes = classes
                if hasattr(self.body, 'classes'):
                    self.classes = getattr(self.body, 'classes')
                if hasattr(self.body, 'no_such_thing'):
                    raise ValueError('never')
                self.head = nn.Linear(pick(body.width, 64), self.classes, bias=False)
    """,
    "train.py": """
        from net import Body, Wrapper

        model = Wrapper(Body(width=128, classes=7))
        for epoch in range(3):
            pass
    """,
}


def test_callable_hasattr_isinstance_and_a_layers_bias_are_settled_and_the_model_counted(tmp_path):
    make_job(tmp_path, NET)
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["params"].value == (32 * 128 + 128) + 128 * 7


def test_a_layer_without_bias_has_no_bias_to_initialise(tmp_path):
    job = dict(NET)
    job["train.py"] = """
        import torch.nn as nn
        from helpers import scaled_linear

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = scaled_linear(16, 8, bias=False)

        model = Net()
    """
    make_job(tmp_path, job)
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["params"].value == 16 * 8


def test_hasattr_on_a_module_with_an_external_base_stays_open_and_the_count_null(tmp_path):
    job = dict(NET)
    job["train.py"] = """
        import torch.nn as nn
        from somelib import Mixin

        class Body(Mixin, nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

        class Net(nn.Module):
            def __init__(self, body):
                super().__init__()
                self.body = body
                if hasattr(body, 'extra'):
                    self.extra = nn.Linear(8, 4096)

        model = Net(Body())
    """
    make_job(tmp_path, job)
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert "params" not in f or f["params"].value is None

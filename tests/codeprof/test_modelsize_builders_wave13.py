"""Models chosen by a name through the job's own builders: a function that picks the class with an if/elif on
the name and wraps it before returning it, and a trainer class whose `__init__` stores the model it builds on
`self`. The chosen class is counted with the builder's arguments; a wrong count is worse than none."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

NETS = """
    import torch
    import torch.nn as nn

    class Small(nn.Module):
        def __init__(self, n_out):
            super().__init__()
            self.body = nn.Linear(32, 64)
            self.head = nn.Linear(64, n_out)

    class Large(nn.Module):
        def __init__(self, n_out):
            super().__init__()
            self.body = nn.Linear(32, 512)
            self.head = nn.Linear(512, n_out)

    def pick_net(kind, n_out, on_gpu=True):
        if kind == 'small':
            net = Small(n_out=n_out)
        elif kind == 'large':
            net = Large(n_out=n_out)
        else:
            raise ValueError('no such net')
        if on_gpu:
            net = torch.nn.DataParallel(net).cuda()
        else:
            net = torch.nn.DataParallel(net)
        return net
"""

PICKER = {
    "nets.py": NETS,
    "fit.py": """
        import argparse
        from nets import pick_net

        ap = argparse.ArgumentParser()
        ap.add_argument('--kind', type=str, required=True)
        ap.add_argument('--n_out', type=int, default=10)
        ap.add_argument('--epochs', type=int, default=5)
        args = ap.parse_args()

        model = pick_net(kind=args.kind, n_out=args.n_out, on_gpu=True)
        for epoch in range(args.epochs):
            pass
    """,
}


def _small(n_out: int) -> int:
    return 32 * 64 + 64 + 64 * n_out + n_out


def _large(n_out: int) -> int:
    return 32 * 512 + 512 + 512 * n_out + n_out


def test_a_builder_that_branches_on_the_name_and_wraps_the_net_counts_the_chosen_class(tmp_path):
    make_job(tmp_path, PICKER)
    f = analyze_code(tmp_path, "python fit.py --kind large --n_out 7", use_llm=False).facts
    assert f["params"].value == _large(7)
    f = analyze_code(tmp_path, "python fit.py --kind small", use_llm=False).facts
    assert f["params"].value == _small(10)


TRAINER = {
    "nets.py": NETS,
    "zoo.py": """
        from nets import Small, Large

        _TABLE = {'small': Small, 'large': Large}

        def get_model(name, **kwargs):
            return _TABLE[name.lower()](**kwargs)
    """,
    "run.py": """
        import argparse
        import torch
        from zoo import get_model

        class Runner(object):
            def __init__(self, args):
                self.args = args
                self.model = get_model(args.arch, n_out=args.n_out).to('cuda')
                self.criterion = torch.nn.CrossEntropyLoss()

            def train(self):
                for epoch in range(self.args.epochs):
                    pass

        if __name__ == '__main__':
            ap = argparse.ArgumentParser()
            ap.add_argument('--arch', default='small')
            ap.add_argument('--n_out', type=int, default=21)
            ap.add_argument('--epochs', type=int, default=5)
            args = ap.parse_args()
            Runner(args).train()
    """,
}


def test_a_trainer_class_that_stores_the_model_it_builds_on_self_is_counted(tmp_path):
    make_job(tmp_path, TRAINER)
    f = analyze_code(tmp_path, "python run.py --arch LARGE", use_llm=False).facts
    assert f["params"].value == _large(21)
    f = analyze_code(tmp_path, "python run.py", use_llm=False).facts
    assert f["params"].value == _small(21)


def test_a_trainer_attribute_built_from_a_setting_only_known_at_run_time_gives_no_count(tmp_path):
    files = dict(TRAINER)
    files["run.py"] = files["run.py"].replace("get_model(args.arch,", "get_model(input('arch? '),")
    make_job(tmp_path, files)
    f = analyze_code(tmp_path, "python run.py", use_llm=False).facts
    assert f.get("params") is None or f["params"].value is None


SEGMENTER = {
    "pkg/__init__.py": "",
    "pkg/data.py": """
        class Shapes(object):
            NUM_CLASS = 5

        registry = {'shapes': Shapes}
    """,
    "pkg/nets.py": """
        import torch
        import torch.nn as nn

        class Seg(nn.Module):
            def __init__(self, nclass, width=16, norm_layer=nn.BatchNorm2d):
                super().__init__()
                self.stem = nn.Conv2d(3, width, 3, padding=1, bias=False)
                self.bn = norm_layer(width)
                self.cls = nn.Conv2d(width, nclass, 1)

        def get_seg(dataset='shapes', width=16, pretrained=True, **kwargs):
            from .data import registry
            model = Seg(registry[dataset].NUM_CLASS, width=width, **kwargs)
            if pretrained:
                model.load_state_dict(torch.load('weights.pth'), strict=False)
            return model

        def get_model(name, **kwargs):
            table = {'seg': get_seg, 'seg_alias': get_seg}
            return table[name](**kwargs)
    """,
    "train.py": """
        import argparse
        import torch.nn as nn
        from pkg.nets import get_model

        class Trainer(object):
            def __init__(self, args):
                norm = nn.SyncBatchNorm if args.distributed else nn.BatchNorm2d
                self.model = get_model(args.model, dataset=args.dataset, width=args.width, norm_layer=norm)

        if __name__ == '__main__':
            ap = argparse.ArgumentParser()
            ap.add_argument('--model', default='seg')
            ap.add_argument('--dataset', default='shapes')
            ap.add_argument('--width', type=int, default=16)
            args = ap.parse_args()
            args.distributed = int(input()) > 1
            Trainer(args)
    """,
}


def test_a_local_builder_table_a_local_import_and_a_norm_chosen_at_run_time_still_give_the_exact_count(tmp_path):
    make_job(tmp_path, SEGMENTER)
    f = analyze_code(tmp_path, "python train.py --width 32", use_llm=False).facts
    assert f["params"].value == 3 * 32 * 9 + 2 * 32 + (32 * 5 + 5)


def test_branches_that_build_different_layers_under_an_unknown_condition_give_no_count(tmp_path):
    files = dict(SEGMENTER)
    files["train.py"] = files["train.py"].replace("nn.SyncBatchNorm if", "nn.Identity if")
    make_job(tmp_path, files)
    f = analyze_code(tmp_path, "python train.py --width 32", use_llm=False).facts
    assert f.get("params") is None or f["params"].value is None


DISTILL = {
    "nets.py": NETS,
    "distill.py": """
        import argparse
        import torch
        from nets import Small, Large

        table = {'small': Small, 'large': Large}

        def restore(path):
            name = path.split('/')[-2]
            net = table[name](n_out=10)
            net.load_state_dict(torch.load(path))
            return net

        ap = argparse.ArgumentParser()
        ap.add_argument('--path_t', type=str)
        ap.add_argument('--model_s', type=str, default='small')
        opt = ap.parse_args()

        model_t = restore(opt.path_t)
        model_s = table[opt.model_s](n_out=10)
    """,
}


def test_a_distillation_script_counts_the_student_and_not_the_teacher_beside_it(tmp_path):
    make_job(tmp_path, DISTILL)
    f = analyze_code(tmp_path, "python distill.py --path_t save/large/best.pth --model_s small", use_llm=False).facts
    assert f["params"].value == _small(10)


def test_a_model_part_built_only_on_a_branch_the_command_does_not_take_is_left_out(tmp_path):
    files = dict(DISTILL)
    files["distill.py"] = files["distill.py"].replace("opt = ap.parse_args()", """ap.add_argument('--distill', default='kd')
        opt = ap.parse_args()
        if opt.distill == 'embed':
            embed_s = Large(n_out=opt.unknown_dim)""")
    make_job(tmp_path, files)
    f = analyze_code(tmp_path, "python distill.py --path_t save/large/best.pth --model_s small", use_llm=False).facts
    assert f["params"].value == _small(10)
    f = analyze_code(tmp_path, "python distill.py --path_t x/large/b.pth --model_s small --distill embed", use_llm=False)
    assert f.facts.get("params") is None or f.facts["params"].value is None


def test_a_trainer_class_whose_bases_loop_is_skipped_without_an_error(tmp_path):
    files = dict(TRAINER)
    files["run.py"] = files["run.py"].replace("class Runner(object):", "class Runner(Runner):")
    make_job(tmp_path, files)
    f = analyze_code(tmp_path, "python run.py --arch LARGE", use_llm=False).facts
    assert f.get("params") is None or f["params"].value in (None, _large(21))

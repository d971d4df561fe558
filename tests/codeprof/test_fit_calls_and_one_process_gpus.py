"""Plain scripts: Keras `fit` calls that give the run length as steps per epoch times epochs, a batch handed
to a generator-fed fit, Keras `multi_gpu_model`, the job's own DataParallel subclasses, epoch loops that
start at a resumable offset, and a batch divided by a world-size option whose default the launch replaces."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

KERAS_TRAIN = """
    import argparse
    import os
    import keras

    def parse_args():
        p = argparse.ArgumentParser()
        p.add_argument('--batch-size', default=2, type=int)
        p.add_argument('--devices', help='ids of the GPUs to use')
        p.add_argument('--rounds', type=int, default=40, help='Number of epochs to train.')
        p.add_argument('--steps', type=int, default=3000, help='Number of steps per epoch.')
        return p.parse_args()

    def main():
        args = parse_args()
        if args.devices:
            os.environ['CUDA_VISIBLE_DEVICES'] = args.devices
        model = build_detector()
        if args.devices and len(args.devices.split(',')) > 1:
            model = keras.utils.multi_gpu_model(model, gpus=list(map(int, args.devices.split(','))))
        model.compile(optimizer='adam', loss='mse')
        return model.fit_generator(generator=make_batches(args.batch_size), steps_per_epoch=args.steps,
                                   epochs=args.rounds, verbose=1)

    if __name__ == '__main__':
        main()
"""


def test_a_fit_given_steps_per_epoch_runs_those_steps_times_its_epochs(tmp_path):
    make_job(tmp_path, {"fit_detector.py": KERAS_TRAIN})
    f = analyze_code(tmp_path, "python fit_detector.py --devices 0 --batch-size 16 --steps 500",
                     use_llm=False).facts
    assert f["train_steps"].value == 40 * 500  # `--steps` counts steps per epoch, not the run
    assert f["micro_batch_size"].value == 16 and f["num_gpus"].value == 1


def test_keras_multi_gpu_model_splits_each_batch_over_the_listed_gpus(tmp_path):
    make_job(tmp_path, {"fit_detector.py": KERAS_TRAIN})
    f = analyze_code(tmp_path, "python fit_detector.py --devices 0,1,2 --batch-size 12 --rounds 5",
                     use_llm=False).facts
    assert f["num_gpus"].value == 3
    assert f["global_batch_size"].value == 12 and f["micro_batch_size"].value == 4
    assert f["train_steps"].value == 5 * 3000


def test_a_generator_fed_fit_trains_on_the_local_batch_size_it_hands_on(tmp_path):
    make_job(tmp_path, {"fit_boxes.py": """
        from keras.optimizers import Adam

        def _main():
            lines = open('boxes.txt').readlines()
            model = create_model()
            model.compile(optimizer=Adam(lr=1e-3), loss='mse')
            batch_size = 24
            model.fit_generator(box_batches(lines, batch_size), steps_per_epoch=max(1, len(lines) // batch_size),
                                epochs=30, initial_epoch=0)
            batch_size = 12
            model.fit_generator(box_batches(lines, batch_size), steps_per_epoch=max(1, len(lines) // batch_size),
                                epochs=70, initial_epoch=30)

        if __name__ == '__main__':
            _main()
    """})
    f = analyze_code(tmp_path, "python fit_boxes.py", use_llm=False).facts
    assert f["micro_batch_size"].value in (24, 12)  # the batch right before a fit call that uses it
    assert f["global_batch_size"].value == f["micro_batch_size"].value
    assert "train_steps" not in f  # steps follow from the annotation file


PT_TRAIN = """
    import argparse
    import itertools
    import torch
    import torch.nn as nn
    from parallel_utils import UnevenDataParallel

    parser = argparse.ArgumentParser()
    parser.add_argument('--batch_size', type=int, default=40)
    parser.add_argument('--max_step', type=int, default=50000)
    parser.add_argument('--multi_gpu', action='store_true')
    parser.add_argument('--first_gpu_bsz', type=int, default=-1)
    args = parser.parse_args()

    model = LanguageModel()
    if args.multi_gpu:
        if args.first_gpu_bsz >= 0:
            para_model = UnevenDataParallel(args.first_gpu_bsz, model, dim=1).cuda()
        else:
            para_model = nn.DataParallel(model, dim=1).cuda()
    else:
        para_model = model.cuda()
    for epoch in itertools.count(start=1):
        pass
"""

PT_PARALLEL = """
    from torch.nn.parallel import DataParallel

    class UnevenDataParallel(DataParallel):
        def __init__(self, first_gpu_bsz, *args, **kwargs):
            self.first_gpu_bsz = first_gpu_bsz
            super().__init__(*args, **kwargs)
"""


def test_a_jobs_own_dataparallel_subclass_drives_every_visible_gpu(tmp_path):
    make_job(tmp_path, {"lm_train.py": PT_TRAIN, "parallel_utils.py": PT_PARALLEL})
    f = analyze_code(tmp_path, "python lm_train.py --multi_gpu --first_gpu_bsz 2 --batch_size 64",
                     use_llm=False).facts
    assert f["global_batch_size"].value == 64
    assert "micro_batch_size" not in f  # split over however many GPUs are visible
    assert "num_gpus" not in f
    assert f["train_steps"].value == 50000


def test_without_the_multi_gpu_switch_the_same_script_runs_on_one_gpu(tmp_path):
    make_job(tmp_path, {"lm_train.py": PT_TRAIN, "parallel_utils.py": PT_PARALLEL})
    f = analyze_code(tmp_path, "python lm_train.py --batch_size 64", use_llm=False).facts
    assert f["micro_batch_size"].value == 64 and f["num_gpus"].value == 1


def test_an_epoch_loop_from_a_resumable_start_counts_its_span(tmp_path):
    make_job(tmp_path, {"cifar_main.py": """
        import torch
        from torch.utils.data import DataLoader
        first_epoch = 0
        if resume:
            first_epoch = checkpoint['epoch'] + 1
        trainloader = DataLoader(trainset, batch_size=96, shuffle=True)
        net = torch.nn.DataParallel(build_net().cuda())
        for epoch in range(first_epoch, first_epoch + 150):
            train(epoch)
    """})
    f = analyze_code(tmp_path, "python cifar_main.py", use_llm=False).facts
    assert f["epochs"].value == 150
    assert f["global_batch_size"].value == 96 and "num_gpus" not in f


def test_a_batch_divided_by_a_default_world_size_of_one_is_split_over_the_launched_world(tmp_path):
    make_job(tmp_path, {"dist_setup.py": """
        import os
        import torch.distributed as dist

        def setup_distributed(args):
            args.world_size = int(os.environ['WORLD_SIZE'])
            dist.init_process_group(backend='nccl', world_size=args.world_size)
    """, "ssl_main.py": """
        import argparse
        import torch
        from dist_setup import setup_distributed

        parser = argparse.ArgumentParser()
        parser.add_argument('--batch-size', type=int, default=1024)
        parser.add_argument('--epochs', type=int, default=300)
        parser.add_argument('--world-size', default=1, type=int)

        def main(args):
            setup_distributed(args)
            sampler = torch.utils.data.distributed.DistributedSampler(dataset)
            per_gpu_batch = args.batch_size // args.world_size
            loader = torch.utils.data.DataLoader(dataset, batch_size=per_gpu_batch, sampler=sampler)
            model = torch.nn.parallel.DistributedDataParallel(net.cuda())

        if __name__ == '__main__':
            main(parser.parse_args())
    """})
    f = analyze_code(tmp_path, "torchrun --nproc_per_node=4 ssl_main.py --batch-size 256", use_llm=False).facts
    assert f["global_batch_size"].value == 256
    assert f["micro_batch_size"].value == 64
    assert f["num_gpus"].value == 4 and f["epochs"].value == 300


def test_tf1_towers_split_the_batch_over_one_gpu_each(tmp_path):
    make_job(tmp_path, {"tower_train.py": """
        import tensorflow as tf
        flags = tf.app.flags
        flags.DEFINE_integer("n_towers_gpus", default=2, help="GPUs, one tower each")
        flags.DEFINE_integer("train_batch_size", default=48, help="batch over all towers")
        flags.DEFINE_integer("train_steps", default=120000, help="steps")
        FLAGS = flags.FLAGS

        def train():
            feats, labels = make_input(FLAGS.train_batch_size)
            pieces = tf.split(feats, FLAGS.n_towers_gpus, 0)
            for i in range(FLAGS.n_towers_gpus):
                with tf.device('/gpu:%d' % i):
                    tower_loss(pieces[i])
            for step in range(FLAGS.train_steps):
                pass

        def main(unused):
            train()

        if __name__ == "__main__":
            tf.app.run()
    """})
    f = analyze_code(tmp_path, "python tower_train.py --n_towers_gpus=4 --train_batch_size=64", use_llm=False).facts
    assert f["num_gpus"].value == 4
    assert f["global_batch_size"].value == 64 and f["micro_batch_size"].value == 16
    assert f["train_steps"].value == 120000

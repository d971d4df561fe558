"""Conventions of several frameworks for how many replicas a job trains and what its batch means: a TF
strategy built only under a guard the settings leave false, a batch multiplied by the replica count (so the
configured one is per replica), TF 1.x towers written as a loop over `tf.device('/gpu:%d' % i)`, OpenMMLab
2.x scoped `_base_` references into the job's own package, mmcv's `MMDataParallel` over a config's GPU list
with a batch named per GPU, and a Lightning data module's `batch_size`."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job


def val(facts, field):
    """The analyzer's value for `field`, None when it left the field open."""
    return facts[field].value if field in facts else None

KERAS_FLAGS = """
    from absl import app, flags
    import tensorflow as tf
    FLAGS = flags.FLAGS
    flags.DEFINE_integer('batch_size', 4, 'images per step')
    flags.DEFINE_integer('epochs', 3, 'passes')
    flags.DEFINE_boolean('replicate', False, 'mirror over every GPU')

    def build():
        return tf.keras.Sequential([tf.keras.layers.Dense(10)])

    def main(_argv):
        if FLAGS.replicate:
            strategy = tf.distribute.MirroredStrategy()
            FLAGS.batch_size = FLAGS.batch_size * strategy.num_replicas_in_sync
            with strategy.scope():
                net = build()
        else:
            net = build()
        data = load_records().batch(FLAGS.batch_size)
        net.compile(optimizer='sgd', loss='mse')
        net.fit(data, epochs=FLAGS.epochs)

    if __name__ == '__main__':
        app.run(main)
"""


def test_a_strategy_built_only_under_a_false_flag_leaves_the_job_on_one_gpu(tmp_path):
    make_job(tmp_path, {"fit_boxes.py": KERAS_FLAGS})
    f = analyze_code(tmp_path, "python fit_boxes.py --batch_size 6 --epochs 7", use_llm=False).facts
    assert val(f, "num_gpus") == 1
    assert val(f, "micro_batch_size") == 6 and val(f, "global_batch_size") == 6
    assert val(f, "epochs") == 7


def test_a_batch_multiplied_by_the_replica_count_is_the_per_replica_batch(tmp_path):
    make_job(tmp_path, {"fit_boxes.py": KERAS_FLAGS})
    f = analyze_code(tmp_path, "python fit_boxes.py --batch_size 6 --replicate", use_llm=False).facts
    assert val(f, "micro_batch_size") == 6  # per replica, whatever the number of replicas
    assert val(f, "num_gpus") is None and val(f, "global_batch_size") is None  # every visible GPU


TOWERS = """
    import argparse
    import tensorflow as tf
    p = argparse.ArgumentParser()
    p.add_argument('--per_gpu_batch', '-b', dest='batch_size', type=int, default=12,
                   help='Batch size during training per GPU')
    p.add_argument('--towers', type=int, default=3, help='How many GPUs to spread the training over')
    p.add_argument('--max_epochs', type=int, default=90)
    args = p.parse_args()
    feed = Loader('train', args.batch_size * args.towers)
    inputs = [tf.placeholder(tf.float32, shape=(args.batch_size, 28, 28)) for i in range(args.towers)]
    grads = []
    for i in range(args.towers):
        with tf.device('/gpu:%d' % i):
            loss = net(inputs[i])
            grads.append(tf.gradients(loss, tf.trainable_variables()))
    train_op = tf.train.AdamOptimizer(1e-3).apply_gradients(average(grads))
    with tf.Session() as sess:
        for epoch in range(args.max_epochs):
            for x in feed:
                sess.run(train_op, feed_dict=split(x))
"""


def test_a_loop_of_towers_each_on_its_own_gpu_counts_the_gpus_and_multiplies_the_batch(tmp_path):
    make_job(tmp_path, {"train_towers.py": TOWERS})
    f = analyze_code(tmp_path, "python train_towers.py", use_llm=False).facts
    assert val(f, "num_gpus") == 3
    assert val(f, "micro_batch_size") == 12 and val(f, "global_batch_size") == 36
    f = analyze_code(tmp_path, "python train_towers.py --towers 2", use_llm=False).facts
    assert val(f, "num_gpus") == 2 and val(f, "global_batch_size") == 24


SCOPED_CHILD = """
    _base_ = ['labkit::_base_/recipes/sgd_cosine_bs512.py', 'othertool::_base_/default_runtime.py']
    model = dict(type='labkit.Searcher', backbone=dict(type='TinyNet'))
"""
SCOPED_RECIPE = """
    train_dataloader = dict(batch_size=64, num_workers=4, sampler=dict(type='DefaultSampler'))
    train_cfg = dict(by_epoch=True, max_epochs=120)
    auto_scale_lr = dict(base_batch_size=512)
"""
MM_DIST = """
    CONFIG=$1
    GPUS=$2
    python -m torch.distributed.launch --nproc_per_node=$GPUS $(dirname "$0")/train.py $CONFIG --launcher pytorch
"""


def test_a_scoped_base_in_the_jobs_own_package_reads_its_configs_tree(tmp_path):
    make_job(tmp_path, {
        "labkit/__init__.py": "",
        "configs/search/tiny_search_8xb64.py": SCOPED_CHILD,
        "configs/_base_/recipes/sgd_cosine_bs512.py": SCOPED_RECIPE,
        "tools/dist_train.sh": MM_DIST,
        "tools/train.py": "from mmengine.runner import Runner\nRunner.from_cfg(cfg).train()\n",
    })
    f = analyze_code(tmp_path, "bash tools/dist_train.sh configs/search/tiny_search_8xb64.py 8",
                     use_llm=False).facts
    assert val(f, "micro_batch_size") == 64 and val(f, "num_gpus") == 8
    assert val(f, "global_batch_size") == 512 and val(f, "epochs") == 120


def test_a_scoped_base_without_the_package_in_the_job_is_not_guessed(tmp_path):
    make_job(tmp_path, {  # no labkit/ package: the base lives in an installed package this job does not hold
        "configs/search/tiny_search_8xb64.py": SCOPED_CHILD,
        "configs/_base_/recipes/sgd_cosine_bs512.py": SCOPED_RECIPE,
        "tools/dist_train.sh": MM_DIST,
        "tools/train.py": "from mmengine.runner import Runner\nRunner.from_cfg(cfg).train()\n",
    })
    f = analyze_code(tmp_path, "bash tools/dist_train.sh configs/search/tiny_search_8xb64.py 8",
                     use_llm=False).facts
    assert val(f, "micro_batch_size") is None and val(f, "epochs") is None


MMCV_ENTRY = """
    import argparse
    from mmcv import Config
    from mmcv.parallel import MMDataParallel
    from mmcv.runner import Runner

    def main():
        p = argparse.ArgumentParser()
        p.add_argument('--config')
        p.add_argument('--launcher', default='none')
        args = p.parse_args()
        cfg = Config.fromfile(args.config)
        loader = build_dataloader(dataset, cfg.data.imgs_per_gpu, cfg.data.workers_per_gpu,
                                  len(cfg.gpus.train), dist=False)
        model = MMDataParallel(model, device_ids=cfg.gpus.train).cuda()
        runner = Runner(model, batch_processor, optimizer, cfg.work_dir)
        runner.run([loader], cfg.workflow, cfg.total_epochs)

    if __name__ == '__main__':
        main()
"""
MMCV_CONFIG = """
    model = dict(type='PoseNet', backbone=dict(type='ResNet', depth=18))
    data = dict(imgs_per_gpu=24, workers_per_gpu=2, train=dict(type='Pairs'))
    optimizer = dict(type='SGD', lr=0.01)
    total_epochs = 60
    workflow = [('train', 1)]
    gpus = dict(train=[0, 1, 2], test=[0])
"""


def test_mmcv_data_parallel_over_the_configs_gpu_list_multiplies_a_per_gpu_batch(tmp_path):
    make_job(tmp_path, {"tools/train_pose.py": MMCV_ENTRY, "configs/pose_r18.py": MMCV_CONFIG})
    f = analyze_code(tmp_path, "python tools/train_pose.py --config configs/pose_r18.py", use_llm=False).facts
    assert val(f, "num_gpus") == 3
    assert val(f, "micro_batch_size") == 24 and val(f, "global_batch_size") == 72
    assert val(f, "epochs") == 60


LIGHTNING_EXAMPLE = """
    import pytorch_lightning as pl
    from mypkg.data import CaptionDataModule
    from mypkg.model import Captioner

    if __name__ == '__main__':
        dm = CaptionDataModule(batch_size=5, root='data/captions', num_workers=2)
        model = Captioner(lr=3e-4)
        trainer = pl.Trainer(accelerator='auto', devices='auto', max_epochs=4)
        trainer.fit(model, dm)
"""


def test_a_lightning_data_modules_batch_size_is_the_per_process_batch(tmp_path):
    make_job(tmp_path, {"examples/captions.py": LIGHTNING_EXAMPLE})
    f = analyze_code(tmp_path, "python examples/captions.py", use_llm=False).facts
    assert val(f, "micro_batch_size") == 5 and val(f, "epochs") == 4
    assert val(f, "num_gpus") is None and val(f, "global_batch_size") is None  # devices='auto'

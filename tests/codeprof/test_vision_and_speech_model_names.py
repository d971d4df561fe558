"""Published sizes of vision and speech models named by a flag, an OpenMMLab model dict or a checkpoint
directory."""

from __future__ import annotations

from schedmate.codeprof import known
from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job


def test_efficient_backbones_and_yolo_generations_have_their_published_sizes():
    assert known.lookup_model("LeViT_256")[2] == 18.9e6
    assert known.lookup_model("poolformer_s12")[2] == 12e6
    assert known.lookup_model("yolov10s.yaml")[2] == 7.2e6
    assert known.lookup_model("yolov6s6")[2] == 41.4e6 and known.lookup_model("yolov6s")[2] == 18.5e6
    assert known.lookup_model("pvt_v2_b2")[2] == 25.4e6


def test_a_google_checkpoint_directory_that_states_its_shape_names_the_model():
    hit = known.lookup_in_path("ckpts/xlnet_cased_L-12_H-768_A-12/xlnet_model.ckpt")
    assert hit is not None and hit[0] == "xlnet-base"
    assert known.lookup_model("uncased_L-24_H-1024_A-16")[0] == "bert-large"


def test_a_models_own_flag_default_names_a_known_backbone(tmp_path):
    make_job(tmp_path, {"main.py": """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--model", default="PoolFormer_S24", type=str)
        p.add_argument("--batch-size", default=64, type=int)
        args = p.parse_args()
    """})
    f = analyze_code(tmp_path, "python main.py", use_llm=False).facts
    assert f["params"].value == 21e6


def test_an_openmmlab_mae_model_dict_is_the_published_mae(tmp_path):
    make_job(tmp_path, {
        "tools/train.py": "import argparse\nfrom mmengine.config import Config\n"
                          "p = argparse.ArgumentParser()\np.add_argument('config')\nargs = p.parse_args()\n"
                          "cfg = Config.fromfile(args.config)\n",
        "configs/_base_/mae.py": "model = dict(type='MAE', backbone=dict(type='MAEViT', arch='b', patch_size=16),\n"
                                 "             neck=dict(type='MAEPretrainDecoder', decoder_depth=8))\n",
        "configs/run.py": "_base_ = ['./_base_/mae.py']\ntrain_dataloader = dict(batch_size=64)\n"
                          "train_cfg = dict(max_epochs=100)\n",
    })
    f = analyze_code(tmp_path, "python tools/train.py configs/run.py", use_llm=False).facts
    assert f["params"].value == 111.9e6 and f["epochs"].value == 100


def test_a_speech_separation_model_class_called_by_name_has_its_published_size(tmp_path):
    make_job(tmp_path, {"train.py": """
        from sepkit.models import ConvTasNet
        model = ConvTasNet(n_src=2)
    """})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["params"].value == 5.1e6


def test_a_swin_backbone_given_by_width_and_depths_is_the_published_size(tmp_path):
    make_job(tmp_path, {
        "tools/train.py": "import argparse\nfrom mmcv import Config\np = argparse.ArgumentParser()\n"
                          "p.add_argument('config')\nargs = p.parse_args()\ncfg = Config.fromfile(args.config)\n",
        "configs/seg.py": "model = dict(type='EncoderDecoder', backbone=dict(type='SwinTransformer', embed_dims=128,\n"
                          "    depths=[2, 2, 18, 2], num_heads=[4, 8, 16, 32]))\n"
                          "data = dict(samples_per_gpu=2)\nrunner = dict(type='IterBasedRunner', max_iters=160000)\n",
    })
    f = analyze_code(tmp_path, "python tools/train.py configs/seg.py", use_llm=False).facts
    assert f["params"].value == 88e6  # Swin-B


def test_a_vit_backbone_given_by_width_and_layers_is_the_published_size(tmp_path):
    make_job(tmp_path, {
        "tools/train.py": "import argparse\nfrom mmcv import Config\np = argparse.ArgumentParser()\n"
                          "p.add_argument('config')\nargs = p.parse_args()\ncfg = Config.fromfile(args.config)\n",
        "configs/cls.py": "model = dict(type='ImageClassifier', backbone=dict(type='VisionTransformer',\n"
                          "    embed_dims=384, num_layers=12, patch_size=16))\n",
    })
    f = analyze_code(tmp_path, "python tools/train.py configs/cls.py", use_llm=False).facts
    assert f["params"].value == 22e6  # ViT-S


def test_a_detector_family_with_a_backbone_depth_setting_is_the_published_detector(tmp_path):
    make_job(tmp_path, {
        "det/main.py": "from absl import app, flags\nfrom ml_collections import config_flags\n"
                       "config_flags.DEFINE_config_file('config', None, 'c')\nFLAGS = flags.FLAGS\n\n"
                       "def main(argv):\n    cfg = FLAGS.config\n\nif __name__ == '__main__':\n    app.run(main)\n",
        "det/cfg.py": "import ml_collections\n\ndef get_config():\n    config = ml_collections.ConfigDict()\n"
                      "    config.model_name = 'detr'\n    config.backbone_num_layers = 101\n"
                      "    config.batch_size = 64\n    return config\n",
    })
    f = analyze_code(tmp_path, "python det/main.py --config=det/cfg.py", use_llm=False).facts
    assert f["params"].value == 60.2e6  # DETR-R101


def test_a_segmentors_swin_backbone_is_not_taken_for_the_whole_model(tmp_path):
    make_job(tmp_path, {
        "tools/train.py": "import argparse\nfrom mmcv import Config\np = argparse.ArgumentParser()\n"
                          "p.add_argument('config')\nargs = p.parse_args()\ncfg = Config.fromfile(args.config)\n",
        "configs/seg.py": "model = dict(type='EncoderDecoder', backbone=dict(type='SwinTransformer', embed_dims=96,\n"
                          "    depths=[2, 2, 6, 2]), decode_head=dict(type='UPerHead', channels=512))\n",
    })
    f = analyze_code(tmp_path, "python tools/train.py configs/seg.py", use_llm=False).facts
    assert "params" not in f or f["params"].value is None  # UperNet heads double it; the sources leave it open


def test_video_and_point_cloud_models_have_their_published_sizes():
    assert known.lookup_model("slowfast-r50")[2] == 34.6e6
    assert known.lookup_model("PointPillar")[2] == 4.8e6

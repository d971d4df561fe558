"""Published sizes of architectures that training repositories name by a variant key (`--model t2t_vit_14`,
`MODEL.NAME: pose_resnet` + `NUM_LAYERS: 50`, `--cfg cfg/yolor_p6.cfg`): a data table.

# data table
Same row format as `known_models.KNOWN_MODELS` (regex on the normalised name, canonical name, family,
parameters), appended after its rows, so an existing row always wins. Each count is the one the paper or
the project's README publishes; a variant with no published count has no row (a wrong number is worse than
null). Patterns are anchored and end at a separator or the end so a longer variant never matches a shorter
row's count.
"""

from __future__ import annotations

_END = r"([_-]|$)"

NAMED_ARCH_MODELS: tuple[tuple[str, str, str, float], ...] = (
    # --- vision transformers named by size word or depth (papers' tables) ------------------------------------
    (rf"^convit[_-]?(ti|tiny){_END}", "convit_tiny", "vit", 6e6),  # ConViT paper Table 1
    (rf"^convit[_-]?(s|small){_END}", "convit_small", "vit", 27e6),
    (rf"^convit[_-]?(b|base){_END}", "convit_base", "vit", 86e6),
    (r"^t2t[_-]?vit[_-]?t?7$", "t2t_vit_7", "vit", 4.3e6),  # T2T-ViT paper Table 2
    (r"^t2t[_-]?vit[_-]?t?10$", "t2t_vit_10", "vit", 5.9e6),
    (r"^t2t[_-]?vit[_-]?t?12$", "t2t_vit_12", "vit", 6.9e6),
    (r"^t2t[_-]?vit[_-]?t?14$", "t2t_vit_14", "vit", 21.5e6),
    (r"^t2t[_-]?vit[_-]?t?19$", "t2t_vit_19", "vit", 39.2e6),
    (r"^t2t[_-]?vit[_-]?t?24$", "t2t_vit_24", "vit", 64.1e6),
    # FAN (Fully Attentional Networks): ViT and hybrid variants, README/paper tables
    (r"^fan[_-]tiny[_-]\d+[_-]p4[_-]hybrid", "fan_tiny_hybrid", "vit", 7.4e6),
    (r"^fan[_-]small[_-]\d+[_-]p4[_-]hybrid", "fan_small_hybrid", "vit", 26.3e6),
    (r"^fan[_-]base[_-]\d+[_-]p4[_-]hybrid", "fan_base_hybrid", "vit", 50.4e6),
    (r"^fan[_-]large[_-]\d+[_-]p4[_-]hybrid", "fan_large_hybrid", "vit", 76.8e6),
    (r"^fan[_-]tiny[_-]12[_-]p16[_-]224$", "fan_tiny_vit", "vit", 7.3e6),
    (r"^fan[_-]small[_-]12[_-]p16[_-]224(_se_attn)?$", "fan_small_vit", "vit", 28.0e6),
    (r"^fan[_-]base[_-]18[_-]p16[_-]224$", "fan_base_vit", "vit", 54.0e6),
    (r"^fan[_-]large[_-]24[_-]p16[_-]224$", "fan_large_vit", "vit", 80.5e6),
    # VMamba (VSSM): the README's T/S/B rows (v2: 30M/50M/89M; the earlier v0 rows are within 1.5x of them)
    (rf"^(vmamba|vssm)\w*?[_-](t|tiny){_END}", "vmamba-tiny", "vit", 30e6),
    (rf"^(vmamba|vssm)\w*?[_-](s|small){_END}", "vmamba-small", "vit", 50e6),
    (rf"^(vmamba|vssm)\w*?[_-](b|base){_END}", "vmamba-base", "vit", 89e6),
    # --- pose: SimpleBaseline (pose_resnet + depth; HRNet paper Table 1) and HRNet pose nets --------------------
    (r"^pose[_-]?resnet[_-]?50$", "pose_resnet_50", "resnet", 34.0e6),
    (r"^pose[_-]?resnet[_-]?101$", "pose_resnet_101", "resnet", 53.0e6),
    (r"^pose[_-]?resnet[_-]?152$", "pose_resnet_152", "resnet", 68.6e6),
    (r"^pose[_-]?hrnet[_-]?w32$", "pose_hrnet_w32", "cnn", 28.5e6),
    (r"^pose[_-]?hrnet[_-]?w48$", "pose_hrnet_w48", "cnn", 63.6e6),
    # --- segmentation ------------------------------------------------------------------------------------------
    (r"^segformer[_-]?(mit[_-])?b3$", "segformer-b3", "vit", 47.3e6),  # SegFormer paper Table 1 (ADE20K)
    (r"^segformer[_-]?(mit[_-])?b4$", "segformer-b4", "vit", 64.1e6),
    (r"^ddrnet[_-]?23[_-]?slim$", "ddrnet-23-slim", "cnn", 5.7e6),  # DDRNet paper
    (r"^ddrnet[_-]?23$", "ddrnet-23", "cnn", 20.1e6),
    (r"^ddrnet[_-]?39$", "ddrnet-39", "cnn", 32.3e6),
    # --- detection ---------------------------------------------------------------------------------------------
    # YOLOR (sizes as the YOLOv7 paper's comparison table publishes them)
    (r"^yolor[_-]?p6$", "yolor-p6", "yolo", 37.2e6),
    (r"^yolor[_-]?w6$", "yolor-w6", "yolo", 79.8e6),
    (r"^yolor[_-]?e6$", "yolor-e6", "yolo", 115.8e6),
    (r"^yolor[_-]?d6$", "yolor-d6", "yolo", 151.7e6),
    (r"^yolor[_-]?csp[_-]?x$", "yolor-csp-x", "yolo", 96.9e6),
    (r"^yolor[_-]?csp$", "yolor-csp", "yolo", 52.9e6),
    (r"^conditional[_-]?detr[_-](r|resnet-?)50$", "conditional-detr-r50", "vit", 44e6),
    (r"^conditional[_-]?detr[_-](r|resnet-?)101$", "conditional-detr-r101", "vit", 63e6),
    # EfficientDet D0-D7 (EfficientDet paper Table 2; D7 reuses D6's network at a larger input)
    (r"^efficientdet[_-]?d0$", "efficientdet-d0", "cnn", 3.9e6),
    (r"^efficientdet[_-]?d1$", "efficientdet-d1", "cnn", 6.6e6),
    (r"^efficientdet[_-]?d2$", "efficientdet-d2", "cnn", 8.1e6),
    (r"^efficientdet[_-]?d3$", "efficientdet-d3", "cnn", 12.0e6),
    (r"^efficientdet[_-]?d4$", "efficientdet-d4", "cnn", 20.7e6),
    (r"^efficientdet[_-]?d5$", "efficientdet-d5", "cnn", 33.7e6),
    (r"^efficientdet[_-]?d[67]$", "efficientdet-d6", "cnn", 51.9e6),
    (r"^efficientdet[_-]?d7x$", "efficientdet-d7x", "cnn", 77.0e6),
    # --- image generation: SiT uses DiT's backbone, so its S/B/L/XL sizes are DiT's (SiT paper) ------------------
    (r"^sit[_-]?xl[_/-]?[248]$", "sit-xl", "unet", 675e6),
    (r"^sit[_-]?l[_/-]?[248]$", "sit-l", "unet", 458e6),
    (r"^sit[_-]?b[_/-]?[248]$", "sit-b", "unet", 130e6),
    (r"^sit[_-]?s[_/-]?[248]$", "sit-s", "unet", 33e6),
    # --- speech encoders: HuBERT (paper; wav2vec 2.0 has rows in the main table) ---------------------------------
    (rf"^hubert[_-]base{_END}", "hubert-base", "bert", 95e6),
    (rf"^hubert[_-]large{_END}", "hubert-large", "bert", 316e6),
    (rf"^hubert[_-]xlarge{_END}", "hubert-xlarge", "bert", 964e6),
    # --- MobileNetV2 width multipliers (timm-style `mobilenetv2_140`; MobileNetV2 paper Table 6) --------------
    (r"^mobilenet_?v2[_-]?(1\.4|140)$", "mobilenet_v2_1.4", "cnn", 6.1e6),
    (r"^mobilenet_?v2[_-]?(1\.0|100)$", "mobilenet_v2", "cnn", 3.5e6),
)

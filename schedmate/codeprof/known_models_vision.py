"""Published sizes of vision architectures that training repositories name in a config value (yacs
`MODEL.NAME: cls_hrnet` completed by its width, `MODEL.NAME: pidnet_small`, `MODEL_NAME: FastSCNN`,
`NAME: focal_tiny_patch4_window7_224`): a data table.

# data table
Same row format as `known_models.KNOWN_MODELS` (regex on the normalised name, canonical name, family,
parameters), appended after its rows and `known_models_named_arch`'s, so an existing row always wins. Each
count is the one the paper or the project's README table publishes; a variant with no published count has no
row (a wrong number is worse than null). Patterns are anchored and end at a separator or the end, and a
longer variant's row comes before a shorter one's, so a longer variant never takes a shorter row's count.
"""

from __future__ import annotations

_END = r"([_-]|$)"

VISION_MODELS: tuple[tuple[str, str, str, float], ...] = (
    # --- Focal Transformer (Focal-T/S/B, README table at 224) ---------------------------------------------
    (rf"^focal[_-]?(t|tiny){_END}", "focal-tiny", "vit", 28.9e6),
    (rf"^focal[_-]?(s|small){_END}", "focal-small", "vit", 51.1e6),
    (rf"^focal[_-]?(b|base){_END}", "focal-base", "vit", 89.8e6),
    # --- HRNet classification nets (HRNet-Image-Classification README table; small variants first) ----------
    (rf"^cls[_-]?hrnet[_-]?w18[_-]?small[_-]?v1{_END}", "cls_hrnet_w18_small_v1", "cnn", 13.2e6),
    (rf"^cls[_-]?hrnet[_-]?w18[_-]?small[_-]?v2{_END}", "cls_hrnet_w18_small_v2", "cnn", 15.6e6),
    (r"^cls[_-]?hrnet[_-]?w18(_c)?$|^cls[_-]?hrnet[_-]?w18[_-](?!small)", "cls_hrnet_w18", "cnn", 21.3e6),
    (rf"^cls[_-]?hrnet[_-]?w30{_END}", "cls_hrnet_w30", "cnn", 37.7e6),
    (rf"^cls[_-]?hrnet[_-]?w32{_END}", "cls_hrnet_w32", "cnn", 41.2e6),
    (rf"^cls[_-]?hrnet[_-]?w40{_END}", "cls_hrnet_w40", "cnn", 57.6e6),
    (rf"^cls[_-]?hrnet[_-]?w44{_END}", "cls_hrnet_w44", "cnn", 67.1e6),
    (rf"^cls[_-]?hrnet[_-]?w48{_END}", "cls_hrnet_w48", "cnn", 77.5e6),
    (rf"^cls[_-]?hrnet[_-]?w64{_END}", "cls_hrnet_w64", "cnn", 128.1e6),
    # HigherHRNet bottom-up pose (README table: w32 at 512, w48 at 640)
    (r"^pose[_-]?higher[_-]?hrnet[_-]?w32$", "pose_higher_hrnet_w32", "cnn", 28.6e6),
    (r"^pose[_-]?higher[_-]?hrnet[_-]?w48$", "pose_higher_hrnet_w48", "cnn", 63.8e6),
    # HRNetV2 segmentation (HRNet-Semantic-Segmentation README: HRNetV2-W48 65.9M)
    (r"^seg[_-]?hrnet[_-]?w48$", "seg_hrnet_w48", "cnn", 65.9e6),
    # --- real-time segmentation (papers' tables) ------------------------------------------------------------
    (rf"^pidnet[_-]?(s|small){_END}", "pidnet-s", "cnn", 7.6e6),  # PIDNet paper Table
    (rf"^pidnet[_-]?(m|medium){_END}", "pidnet-m", "cnn", 34.4e6),
    (rf"^pidnet[_-]?(l|large){_END}", "pidnet-l", "cnn", 36.9e6),
    (r"^fast[_-]?scnn$", "fast-scnn", "cnn", 1.11e6),  # Fast-SCNN paper
    (r"^enet$", "enet", "cnn", 0.37e6),  # ENet paper
    (r"^dabnet$", "dabnet", "cnn", 0.76e6),  # DABNet paper
    # --- EfficientViT (MIT Han lab; README classification table; B and L series only) ---------------------
    (rf"^efficientvit[_-]?b0{_END}", "efficientvit-b0", "vit", 3.4e6),
    (rf"^efficientvit[_-]?b1{_END}", "efficientvit-b1", "vit", 9.1e6),
    (rf"^efficientvit[_-]?b2{_END}", "efficientvit-b2", "vit", 24e6),
    (rf"^efficientvit[_-]?b3{_END}", "efficientvit-b3", "vit", 49e6),
    (rf"^efficientvit[_-]?l1{_END}", "efficientvit-l1", "vit", 53e6),
    (rf"^efficientvit[_-]?l2{_END}", "efficientvit-l2", "vit", 64e6),
    (rf"^efficientvit[_-]?l3{_END}", "efficientvit-l3", "vit", 246e6),
    # --- NesT (Nested Hierarchical Transformer paper: CIFAR nets at 32 px, ImageNet nets at 224 px) ----------
    (r"^nest[_-](tiny|t)[_-]s\d+[_-]32$", "nest-tiny-cifar", "vit", 6.2e6),
    (r"^nest[_-](small|s)[_-]s\d+[_-]32$", "nest-small-cifar", "vit", 23.4e6),
    (r"^nest[_-](base|b)[_-]s\d+[_-]32$", "nest-base-cifar", "vit", 90.1e6),
    (r"^(jx_)?nest[_-](tiny|t)([_-]s\d+[_-]224)?$", "nest-tiny", "vit", 17e6),
    (r"^(jx_)?nest[_-](small|s)([_-]s\d+[_-]224)?$", "nest-small", "vit", 38e6),
    (r"^(jx_)?nest[_-](base|b)([_-]s\d+[_-]224)?$", "nest-base", "vit", 68e6),
    # --- IBN-Net backbones (IBN-Net README table, IBN-a) -------------------------------------------------
    (r"^(resnet|r)-?50[_-]?ibn([_-]?a)?$", "resnet50_ibn_a", "resnet", 25.5e6),
    (r"^(resnet|r)-?101[_-]?ibn([_-]?a)?$", "resnet101_ibn_a", "resnet", 44.5e6),
)

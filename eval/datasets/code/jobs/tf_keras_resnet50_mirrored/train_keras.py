"""ResNet-50 on ImageNet with tf.distribute.MirroredStrategy (one process, all visible GPUs)."""
import argparse

import tensorflow as tf
from tensorflow.keras import mixed_precision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size_per_replica", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=90)
    args = ap.parse_args()
    mixed_precision.set_global_policy("mixed_float16")
    strategy = tf.distribute.MirroredStrategy()
    global_batch = args.batch_size_per_replica * strategy.num_replicas_in_sync
    ds = tf.keras.utils.image_dataset_from_directory("/data/imagenet/train", image_size=(224, 224),
                                                     batch_size=global_batch)
    with strategy.scope():
        model = tf.keras.applications.ResNet50(weights=None, classes=1000)
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1, momentum=0.9),
                      loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(ds, epochs=args.epochs)


if __name__ == "__main__":
    main()

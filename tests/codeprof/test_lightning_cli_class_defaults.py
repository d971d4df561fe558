"""`LightningCLI(Model, DataModule)`: the classes' `__init__` defaults are the run's settings unless the CLI's
config file or flags give them."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

FILES = {
    "main.py": """
        from lightning.pytorch.cli import LightningCLI
        from net import Classifier
        from loaders import ImageData

        if __name__ == "__main__":
            LightningCLI(Classifier, ImageData)
    """,
    "net.py": """
        import lightning as L

        class Classifier(L.LightningModule):
            def __init__(self, width: int = 64, lr: float = 3e-4):
                super().__init__()
    """,
    "loaders.py": """
        import lightning as L

        class ImageData(L.LightningDataModule):
            def __init__(self, root: str = "data", batch_size: int = 48, workers: int = 8):
                super().__init__()
    """,
    "cfg.yaml": "trainer:\n  devices: 2\n  max_epochs: 5\ndata:\n  batch_size: 96\n",
}


def test_the_datamodules_init_default_is_the_batch_when_nothing_overrides_it(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "python main.py fit --trainer.devices 1 --trainer.max_steps 200", use_llm=False).facts
    assert f["micro_batch_size"].value == 48 and f["train_steps"].value == 200


def test_the_cli_config_beats_the_init_default(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "python main.py fit --config cfg.yaml", use_llm=False).facts
    assert f["micro_batch_size"].value == 96 and f["num_gpus"].value == 2 and f["global_batch_size"].value == 192

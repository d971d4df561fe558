"""Lightning GPT training configured with Hydra (conf/config.yaml + model group)."""
import hydra
import lightning as L
import torch
from omegaconf import DictConfig
from torch.utils.data import DataLoader

from gptlib import GPTModule, RandomTokens


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    model = GPTModule(n_layer=cfg.model.n_layer, n_embd=cfg.model.n_embd, vocab_size=cfg.model.vocab_size,
                      lr=cfg.optim.lr)
    loader = DataLoader(RandomTokens(cfg.data.seq_len), batch_size=cfg.data.batch_size, num_workers=4)
    trainer = L.Trainer(accelerator="gpu", devices=cfg.trainer.devices, num_nodes=cfg.trainer.num_nodes,
                        strategy="ddp", precision=cfg.trainer.precision, max_steps=cfg.trainer.max_steps,
                        accumulate_grad_batches=cfg.trainer.accumulate_grad_batches)
    trainer.fit(model, loader)


if __name__ == "__main__":
    main()

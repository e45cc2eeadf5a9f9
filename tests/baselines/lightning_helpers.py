"""A tiny Lightning regression whose training steps burn a known amount of
CPU time, for the clock and history callbacks (imported by their tests)."""
import time

import torch
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.callbacks import Checkpoint
from torch.utils.data import DataLoader, TensorDataset


def burn_cpu(seconds: float) -> None:
    """Busy-waits until this process has used :obj:`seconds` of CPU."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


class BurningRegression(LightningModule):
    """Linear regression; every training step first burns
    :obj:`burn_s` CPU seconds. Logs the validation MAE as ``val/mae`` and
    records every training loss it returns, with its batch size."""
    def __init__(self, burn_s: float = 0.0):
        super().__init__()
        self.linear = torch.nn.Linear(3, 1)
        self.burn_s = burn_s
        self.losses: list[tuple[float, int]] = []

    def training_step(self, batch, batch_idx):
        burn_cpu(self.burn_s)
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.linear(x)[:, 0], y)
        self.losses.append((float(loss), len(x)))
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log('val/mae', (self.linear(x)[:, 0] - y).abs().mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def loaders(train_size: int = 10, batch_size: int = 4):
    """Train (:obj:`train_size` points, last batch smaller) and val
    loaders of a fixed linear target."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(train_size + 6, 3, generator=generator)
    y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.3
    train = TensorDataset(x[:train_size], y[:train_size])
    val = TensorDataset(x[train_size:], y[train_size:])
    return (DataLoader(train, batch_size=batch_size),
            DataLoader(val, batch_size=batch_size))


def fit(module, callbacks, max_epochs: int, ckpt_path=None):
    """Fits :obj:`module` on :func:`loaders` quietly, checkpointing only
    through the checkpoint callbacks among :obj:`callbacks`; returns the
    trainer."""
    checkpointing = any(isinstance(c, Checkpoint) for c in callbacks)
    trainer = Trainer(accelerator='cpu', devices=1, max_epochs=max_epochs,
                      logger=False, enable_progress_bar=False,
                      enable_model_summary=False, num_sanity_val_steps=0,
                      enable_checkpointing=checkpointing,
                      callbacks=callbacks)
    trainer.fit(module, *loaders(), ckpt_path=ckpt_path)
    return trainer

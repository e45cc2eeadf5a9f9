r"""Runs scripts/train.py's main in this process and stops the process
(SIGSTOP) at one chosen point of training, so that a test can SIGKILL it
exactly there (see tests/training/test_checkpointing.py).

usage: python train_until_stopped.py STOP_AT [train.py arguments ...]

STOP_AT is one of
  step:N        after training step N, once every callback has run (any
                checkpoint of that step is on disk)
  validation:E  right after the validation of epoch E has written its
                metrics.csv row, before anything else runs
"""
import os
import signal
import sys

from graphormer_sepnorm.cli.train import train_main
from graphormer_sepnorm.training.lit_module import GraphormerLitModule


def _stop() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSTOP)


def _stop_after_step(step: int) -> None:
    original = GraphormerLitModule.on_train_batch_end

    def on_train_batch_end(self, outputs, batch, batch_idx):
        # Lightning calls the module's hook after every callback's.
        original(self, outputs, batch, batch_idx)
        if self.global_step == step:
            _stop()

    GraphormerLitModule.on_train_batch_end = on_train_batch_end


def _stop_after_validation(epoch: int) -> None:
    original = GraphormerLitModule.on_validation_epoch_end

    def on_validation_epoch_end(self):
        original(self)
        if not self.trainer.sanity_checking and self.current_epoch == epoch:
            _stop()

    GraphormerLitModule.on_validation_epoch_end = on_validation_epoch_end


if __name__ == '__main__':
    where, _, value = sys.argv[1].partition(':')
    {'step': _stop_after_step,
     'validation': _stop_after_validation}[where](int(value))
    sys.exit(train_main(sys.argv[2:]))

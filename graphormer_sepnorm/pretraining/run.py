r"""A pretraining run, start to end: checks, the Lightning loop (the same
trainer, checkpoints, exact resume and DDP as supervised training), a
backbone and curves refreshed at every validation, and the final
:obj:`results.json`.

The run directory holds ``config.yaml``, ``metrics.csv`` (one row per
validation), ``curves.png``, ``backbone.safetensors`` (the encoder to
fine-tune from, rewritten at every validation), ``results.json`` at the end,
and ``checkpoints/last.ckpt`` (resume) and ``checkpoints/best.ckpt`` (lowest
validation loss).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from lightning.pytorch.callbacks import Callback

from ..training.config import PRETRAINING_DATA, ConfigError
from ..training.preflight import check_resume, check_writable_folder
from ..training.hardware import hardware_name
from ..training.init_from import BACKBONE_FILE
from ..training.run_results import json_safe
from ..training.trainer import build_trainer, fit, start_run
from .backbone import backbone_summary, save_backbone
from .datamodule import CorpusDataModule, corpus_dir
from .lit_module import PRETRAINING_COLUMNS, PretrainingLitModule
from .plots import plot_pretraining_curves

__all__ = ['pretrain']


class RunArtefacts(Callback):
    r"""After every validation (global rank zero): rewrites the backbone
    file and the curves, so that an interrupted run leaves usable
    artefacts."""
    def __init__(self, run_dir: Path, corpus_folder: Path) -> None:
        self.run_dir = run_dir
        self.corpus_folder = corpus_folder

    def on_validation_end(self, trainer, pl_module) -> None:
        if trainer.sanity_checking or not trainer.is_global_zero:
            return
        write_artefacts(self.run_dir, pl_module, self.corpus_folder)


def write_artefacts(run_dir: Path, module: PretrainingLitModule,
                    corpus_folder: Path) -> None:
    r"""Writes ``backbone.safetensors`` and ``curves.png`` of the run."""
    save_backbone(run_dir / BACKBONE_FILE, module, corpus_folder)
    if module.history:
        config = module.config
        plot_pretraining_curves(
            module.history, run_dir / 'curves.png',
            title=f"pretraining, norm={config['model']['norm']}, "
                  f"seed={config['seed']}")


def pretrain(config: dict, resume: bool = False) -> Optional[dict]:
    r"""Pretrains as :obj:`config` (:obj:`data.name: pretraining`) says and
    writes the run directory.

    Args:
        config (dict): A validated configuration.
        resume (bool, optional): Continue exactly from
            ``<run dir>/checkpoints/last.ckpt``.

    Returns:
        The :obj:`results.json` content on global rank 0, :obj:`None` on
        the other ranks.

    Raises:
        ConfigError: Not a pretraining configuration, or a path, the run
            directory or the checkpoint to resume does not fit.
        DataError: The corpus is missing.
    """
    if config['data']['name'] != PRETRAINING_DATA:
        raise ConfigError(
            f"scripts/pretrain.py needs data.name=pretraining (see "
            f"configs/pretrain/); data.name={config['data']['name']} is "
            f"supervised training: run it with scripts/train.py")
    run_dir = check_resume(config, resume)
    check_writable_folder('output_dir', config['output_dir'])
    start_run(config, run_dir, resume)
    datamodule = CorpusDataModule(config)
    module = PretrainingLitModule(config,
                                  metrics_file=str(run_dir / 'metrics.csv'))
    trainer, _, _ = build_trainer(
        config, run_dir, monitor_mode='min',
        val_check_interval=config['pretrain']['val_every_n_steps'],
        extra_callbacks=[RunArtefacts(run_dir, datamodule.folder)],
        resume=resume)
    fit(trainer, module, datamodule, run_dir, resume)
    if not trainer.is_global_zero:
        return None
    write_artefacts(run_dir, module, datamodule.folder)
    summary = backbone_summary(module, datamodule.folder)
    results = {
        'task': 'pretraining',
        'norm': config['model']['norm'],
        'seed': config['seed'],
        'run_dir': str(run_dir),
        'corpus': str(corpus_dir(config)),
        'num_parameters': sum(p.numel() for p in module.model.parameters()),
        'steps': summary['steps'],
        'graphs_seen': summary['graphs_seen'],
        'cpu_time_s': summary['cpu_time_s'],
        'wall_time_s': summary['wall_time_s'],
        'train_time_s': module.train_time_s,
        'throughput_graphs_per_s': (summary['graphs_seen'] /
                                    module.train_time_s
                                    if module.train_time_s else None),
        'last_validation': summary['last_validation'],
        'objectives': summary['objectives'],
        'metrics_columns': PRETRAINING_COLUMNS,
        'hardware': {'device_name': hardware_name(
            str(trainer.strategy.root_device.type)),
            'world_size': trainer.world_size,
            'precision': str(trainer.precision)},
        'backbone': BACKBONE_FILE,
    }
    with open(run_dir / 'results.json', 'w') as f:
        json.dump(json_safe(results), f, indent=2)
    return results

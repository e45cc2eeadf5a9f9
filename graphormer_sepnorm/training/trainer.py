r"""From a validated configuration to a trained, evaluated run directory.

A run directory (``<output_dir>/<run_name>``) holds::

    config.yaml            the fully resolved configuration
    checkpoints/last.ckpt  latest state (every train.checkpoint_every_n_steps
                           steps, every train.checkpoint_every_minutes, after
                           every validation and on SIGTERM/SIGINT; see
                           checkpointing.LastCheckpoint); --resume reads it
    checkpoints/best.ckpt  state at the best validation metric
    model.safetensors      the best model with its ModelCard (no pickle)
    metrics.csv            one row per validation epoch (test columns empty
                           unless train.test_at=every_validation)
    test_predictions.csv   label and prediction of every test molecule by
                           the best model, after its id (for a CSV: its
                           data.id_column, and its SMILES) (not with
                           train.eval_test=false); with train.test_at=end
                           results.json's test metrics are computed from it
    curves.png             learning curves
    report.html            the run in one page: curves, results, test
                           predictions, worst-predicted molecules drawn
                           (graphormer_sepnorm/report/run_report.py)
    results.json           summary (best validation, test at best, how test
                           was scored: test_protocol, ...)
    init_from.json         the model the run started from (model.init_from;
                           see init_from.py), absent for a random start
    resumes.yaml           each --resume: its step and the settings it
                           changed (see resuming.py)
    logs/                  Lightning CSV logs (and TensorBoard if enabled);
                           a resumed session's in logs/resume<N>/
"""
from __future__ import annotations

import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any, Optional, Sequence

import torch

from .config import PRETRAINING_DATA, ConfigError, dump_config
from .hardware import configure_threads, hardware_name, resolved_accelerator
from .metrics import tests_every_validation
from .run_results import finalize_run

# finalize_run and hardware_name are re-exported: they were defined here.
__all__ = ['train', 'build_trainer', 'validation_interval', 'start_run',
           'fit', 'finalize_run', 'hardware_name']

def _precision(config: dict, accelerator: str) -> str:
    precision = config['train']['precision']
    if precision != 'auto':
        return precision
    if accelerator == 'cuda' and torch.cuda.is_bf16_supported():
        return 'bf16-mixed'
    return '32-true'


def validation_interval(config: dict) -> Optional[int]:
    r"""The optimizer steps between validations of supervised training:
    :obj:`train.val_every_n_steps`, or :obj:`train.max_steps` when that is
    fewer (a short run still validates at its end); :obj:`None` (validate
    by epochs) when :obj:`train.val_every_n_steps` is null."""
    t = config['train']
    if t['val_every_n_steps'] is None:
        return None
    if t['max_steps'] is not None:
        return min(t['val_every_n_steps'], t['max_steps'])
    return t['val_every_n_steps']


def build_trainer(config: dict, run_dir: Path,
                  monitor_mode: Optional[str] = None,
                  val_check_interval: Optional[int] = None,
                  extra_callbacks: Sequence = (), resume: bool = False):
    r"""The Lightning :class:`~lightning.pytorch.Trainer` for :obj:`config`,
    its best-model :class:`~lightning.pytorch.callbacks.ModelCheckpoint`
    (``best.ckpt``) and its :class:`LastCheckpoint` (``last.ckpt``).

    Args:
        config (dict): A validated configuration.
        run_dir (Path): The run directory.
        monitor_mode (str, optional): :obj:`"min"` or :obj:`"max"` for the
            logged :obj:`val/metric`; :obj:`None`: from
            :obj:`train.monitor`.
        val_check_interval (int, optional): Validate every this many
            training batches, counted across epochs (pretraining, whose
            epochs are long); :obj:`None`: :func:`validation_interval`.
        extra_callbacks (sequence, optional): More Lightning callbacks, run
            after the checkpoint callbacks.
        resume (bool, optional): The run resumes: its Lightning logs go to a
            new folder :obj:`logs/resume<N>` (the earlier ones are kept),
            and :obj:`config.yaml` is rewritten once the checkpoint has
            loaded (:class:`~.resuming.ResumedConfig`).
            (default: :obj:`False`)
    """
    from lightning.pytorch import Trainer
    from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint
    from lightning.pytorch.loggers import CSVLogger

    from .checkpointing import LastCheckpoint
    from .console import RunNotices, RunProgressBar, quiet_third_party
    from .metrics import HIGHER_IS_BETTER, monitor_metric
    from .sync_norm import CPUSyncBatchNorm

    t = config['train']
    if monitor_mode is None:
        monitor_mode = ('max' if HIGHER_IS_BETTER[monitor_metric(config)]
                        else 'min')
    ckpt_dir = run_dir / 'checkpoints'
    best = ModelCheckpoint(dirpath=ckpt_dir, filename='best',
                           monitor='val/metric', mode=monitor_mode,
                           save_top_k=1, auto_insert_metric_name=False,
                           enable_version_counter=False)
    last = LastCheckpoint(ckpt_dir / 'last.ckpt',
                          every_n_steps=t['checkpoint_every_n_steps'],
                          every_n_minutes=t['checkpoint_every_minutes'])
    # Lightning's CSVLogger overwrites the metrics.csv of its folder: a
    # resume logs into a folder of its own.
    version = _resume_log_version(run_dir / 'logs') if resume else ''
    loggers: list = [CSVLogger(save_dir=str(run_dir), name='logs',
                               version=version)]
    if t['tensorboard']:
        try:
            from lightning.pytorch.loggers import TensorBoardLogger
            loggers.append(TensorBoardLogger(save_dir=str(run_dir),
                                             name='logs', version='tb'))
        except ModuleNotFoundError as error:  # pragma: no cover
            raise ConfigError(f"train.tensorboard=true needs the tensorboard "
                              f"package ({error}); pip install tensorboard")
    # last after best: last.ckpt then holds best's updated state.
    callbacks = [best, last, LearningRateMonitor(logging_interval='step'),
                 RunNotices(), *extra_callbacks]
    if t['progress_bar']:
        callbacks.append(RunProgressBar(best))
    if resume:
        from .resuming import ResumedConfig
        callbacks.append(ResumedConfig(config, run_dir))
    if t['precise_bn_batches']:
        from .precise_bn import PreciseBatchNorm
        # First: the statistics are re-estimated before anything validates.
        callbacks.insert(0, PreciseBatchNorm(t['precise_bn_batches'],
                                             config['data']['batch_size'],
                                             config['seed']))
    if config['optim']['ema_decay'] is not None:
        try:
            from .weight_ema import WeightEMA
        except ImportError as error:
            raise ConfigError(
                f"'optim.ema_decay' needs Lightning's WeightAveraging "
                f"callback, which this Lightning lacks ({error}): pip "
                f"install -U lightning (2.6 has it), or set "
                f"optim.ema_decay=null") from None
        # Before PreciseBatchNorm: the averaged weights are swapped in
        # first, then their statistics re-estimated.
        callbacks.insert(0, WeightEMA(config['optim']['ema_decay']))
    if val_check_interval is None:
        val_check_interval = validation_interval(config)
    accelerator = resolved_accelerator(config)
    kwargs: dict[str, Any] = {}
    if accelerator == 'cpu':
        # torch.nn.SyncBatchNorm refuses CPU tensors: sync through gloo.
        kwargs['plugins'] = [CPUSyncBatchNorm()]
    else:
        kwargs['sync_batchnorm'] = True
    deterministic = {'true': True, 'false': False, 'warn': 'warn'}[
        t['deterministic']]
    with quiet_third_party():
        trainer = Trainer(
            default_root_dir=str(run_dir),
            accelerator=t['accelerator'],
            devices=t['devices'],
            strategy=t['strategy'],
            num_nodes=t['num_nodes'],
            precision=_precision(config, accelerator),
            max_steps=t['max_steps'] if t['max_steps'] is not None else -1,
            max_epochs=t['max_epochs'] if t['max_epochs'] is not None else -1,
            max_time=(None if t['max_minutes'] is None
                      else timedelta(minutes=t['max_minutes'])),
            gradient_clip_val=t['gradient_clip_val'],
            check_val_every_n_epoch=(t['check_val_every_n_epoch']
                                     if val_check_interval is None else None),
            val_check_interval=val_check_interval,
            log_every_n_steps=t['log_every_n_steps'],
            num_sanity_val_steps=t['num_sanity_val_steps'],
            enable_progress_bar=t['progress_bar'],
            deterministic=deterministic,
            use_distributed_sampler=False,  # GraphBatchLoader shards itself
            callbacks=callbacks,
            logger=loggers,
            **kwargs,
        )
    return trainer, best, last


def _resume_log_version(logs: Path) -> str:
    number = 1
    while (logs / f'resume{number}').exists():
        number += 1
    return f'resume{number}'


def train(config: dict, resume: bool = False) -> Optional[dict]:
    r"""Trains as :obj:`config` says and writes the run directory.

    Args:
        config (dict): A validated configuration.
        resume (bool, optional): Continue from
            ``<run dir>/checkpoints/last.ckpt`` (exactly: same batches, same
            random numbers, same schedule).

    Returns:
        The :obj:`results.json` content on global rank 0, :obj:`None` on
        the other ranks.

    Raises:
        ConfigError: A path, the run directory or the checkpoint to resume
            does not fit (checked first; see
            :mod:`~graphormer_sepnorm.training.preflight`), or
            :obj:`model.init_from` names no model whose encoder fits (see
            :mod:`~graphormer_sepnorm.training.init_from`).
        RawFilesMismatchError: The raw files under :obj:`data.root` index
            graphs their pickles lack.
        NonFiniteLossError: The loss became NaN/inf (the last good
            checkpoint is kept).
    """
    from ..data.datamodule import GraphDataModule
    from .init_from import initialize_from
    from .lit_module import GraphormerLitModule
    from .preflight import check_before_training

    if config['data']['name'] == PRETRAINING_DATA:
        raise ConfigError("data.name=pretraining is self-supervised "
                          "pretraining: run it with scripts/pretrain.py "
                          "(graphormer-sepnorm pretrain)")
    run_dir = check_before_training(config, resume)
    start_run(config, run_dir, resume)
    datamodule = GraphDataModule(config['data'], seed=config['seed'],
                                 eval_test=tests_every_validation(config),
                                 run_dir=run_dir)
    module = GraphormerLitModule(config,
                                 metrics_file=str(run_dir / 'metrics.csv'))
    initialize_from(module.model, config, run_dir, resume)
    trainer, best_cb, _ = build_trainer(config, run_dir, resume=resume)
    fit(trainer, module, datamodule, run_dir, resume)
    if not trainer.is_global_zero:
        return None
    return finalize_run(config, run_dir, module, trainer, best_cb)


def start_run(config: dict, run_dir: Path, resume: bool = False) -> None:
    r"""Sets torch's thread count (:func:`~.hardware.configure_threads`),
    seeds every generator and, on global rank zero, creates :obj:`run_dir`
    with the run's :obj:`config.yaml` (a resumed run rewrites it only once
    its checkpoint has loaded; see :class:`~.resuming.ResumedConfig`)."""
    import lightning
    from lightning.pytorch.utilities.rank_zero import rank_zero_only

    configure_threads(config['train']['num_threads'])
    lightning.seed_everything(config['seed'], workers=True)
    if rank_zero_only.rank == 0 and not resume:
        run_dir.mkdir(parents=True, exist_ok=True)
        dump_config(config, run_dir / 'config.yaml')


def fit(trainer, module, datamodule, run_dir: Path, resume: bool) -> None:
    r""":meth:`Trainer.fit`, from :obj:`<run_dir>/checkpoints/last.ckpt`
    with :obj:`resume` (loaded with :obj:`weights_only=True`, once its
    weights are known to fit :obj:`module`), leaving torch's process-global
    deterministic flag as it was."""
    from .console import quiet_third_party

    ckpt_path = str(run_dir / 'checkpoints' / 'last.ckpt') if resume else None
    if resume:
        from .resuming import check_checkpoint_fits
        check_checkpoint_fits(module, Path(ckpt_path))
    # Lightning's deterministic flag is process-global: restore it after.
    deterministic = (torch.are_deterministic_algorithms_enabled(),
                     torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        with quiet_third_party():
            warnings.filterwarnings('ignore', message='.*does not have many '
                                    'workers.*')
            # Resumed from an end-of-epoch last.ckpt, Lightning re-runs that
            # epoch's end before any validation of this process, so the
            # best-model ModelCheckpoint finds no val/metric yet (it raises
            # if one is missing after a validation).
            warnings.filterwarnings('ignore', message='.*could not find the '
                                    'monitored key.*')
            # Resume loads with weights_only=True: the checkpoint holds
            # tensors and plain Python values only.
            trainer.fit(module, datamodule=datamodule, ckpt_path=ckpt_path,
                        weights_only=True)
    finally:
        torch.use_deterministic_algorithms(deterministic[0],
                                           warn_only=deterministic[1])

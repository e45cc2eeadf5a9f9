r"""chemprop's default D-MPNN, trained on our ZINC-subset and MolHIV splits
under the same CPU budget and seeds as our runs: the model a chemist would
reach for instead.

The model is what ``chemprop train`` (chemprop 2.3) builds by default:
bond message passing (hidden size 300, depth 3, no bias, ReLU, no dropout),
sum aggregation divided by 100 (``norm``), a feed-forward head with one
hidden layer of 300, V2 multi-hot atom and bond features, Adam with the
Noam-like schedule (2 warmup epochs from 1e-4 to 1e-3, exponential decay to
1e-4 at the last epoch), batch size 64, 50 epochs, and the default loss:
MSE on standardized targets (ZINC) or binary cross-entropy (MolHIV).

Two things differ from ``chemprop train``, both to match our protocol:

* the checkpoint is selected on the benchmark metric of the validation
  split (ZINC: MAE, MolHIV: ROC-AUC) instead of the validation loss;
* the test split is predicted once, with the selected model, at the end.

Metrics are ours (:mod:`~graphormer_sepnorm.training.metrics`): MAE in
original units, and for MolHIV the ROC-AUC, equal to OGB's
:class:`~ogb.graphproppred.Evaluator` (to float32 precision), on the
molecules RDKit parses (see :mod:`~graphormer_sepnorm.data.molecule_splits`).
"""
from __future__ import annotations

import contextlib
import json
import time
import warnings
from pathlib import Path
from typing import Iterator, Optional, Sequence, Union

import chemprop
import lightning
import numpy as np
import rdkit
import torch
import yaml
from chemprop.data import build_dataloader
from chemprop.models import MPNN
from chemprop.nn.transforms import UnscaleTransform
from lightning.pytorch import Trainer

from graphormer_sepnorm.data.molecule_splits import (
    SPLITS, load_molecule_splits, subsample_benchmark)
from graphormer_sepnorm.training.hardware import hardware_name
from graphormer_sepnorm.training.metrics import (compute_metric,
                                                 compute_metrics)
from graphormer_sepnorm.training.plots import plot_curves
from graphormer_sepnorm.training.preflight import (check_run_dir,
                                                   check_writable_folder)
from graphormer_sepnorm.training.run_results import (TEST_PROTOCOLS,
                                                     json_safe)

from .chemprop_descriptors import check_featurizer_names, scale_descriptors
from .chemprop_model import (CHEMPROP_DEFAULTS, TASKS, build_chemprop_model,
                             chemprop_datasets, predict_chemprop)
from .chemprop_run_files import (checkpoint_callbacks, neutral_path,
                                 write_predictions)
from .csv_molecules import load_csv_molecules
from .clock import CpuBudgetClock
from .history import EpochHistory

__all__ = ['MODEL_FAMILY', 'CHEMPROP_DEFAULTS', 'train_chemprop',
           'run_name']

PathLike = Union[str, Path]

#: ``model_family`` of the results, beside our Graphormer runs.
MODEL_FAMILY = 'chemprop D-MPNN'

def run_name(dataset: str, seed: int,
             molecule_featurizers: Sequence[str] = ()) -> str:
    r"""The run directory name, :obj:`<dataset>_chemprop_seed<seed>`, or
    with molecule featurizers :obj:`<dataset>_chemprop_<names joined by
    _>_seed<seed>` (:obj:`dataset` may be a subsample's benchmark name)."""
    features = ''.join(f'_{name}' for name in molecule_featurizers)
    return f'{dataset}_chemprop{features}_seed{seed}'


@contextlib.contextmanager
def _process_settings(threads: int) -> Iterator[None]:
    r"""Sets torch's thread count, and restores it and the deterministic
    flag (which Lightning's :obj:`deterministic=True` sets process-wide)
    afterwards."""
    saved = (torch.get_num_threads(),
             torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled())
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(saved[0])
        torch.use_deterministic_algorithms(saved[1], warn_only=saved[2])


def _metric(metric: str, predictions: np.ndarray,
            targets: np.ndarray) -> float:
    r""":obj:`metric` of one task, or its mean over several tasks (columns,
    :obj:`NaN` where a label is missing) as our runs average it."""
    if targets.ndim == 2:
        return compute_metrics('binary' if metric == 'rocauc' else
                               'regression', torch.from_numpy(predictions),
                               torch.from_numpy(targets))[metric]
    return compute_metric(metric, torch.from_numpy(predictions),
                          torch.from_numpy(targets))


def train_chemprop(dataset: str, source: PathLike, output_dir: PathLike =
                   'runs', seed: int = 0, max_epochs: int = 50,
                   max_cpu_minutes: Optional[float] = None,
                   batch_size: int = 64, threads: int = 1,
                   resume: bool = False, progress_bar: bool = True,
                   train_molecules: Optional[int] = None,
                   split_seed: Optional[int] = None,
                   molecule_featurizers: Sequence[str] = ()) -> dict:
    r"""Trains chemprop's default D-MPNN on one dataset and seed, selects
    the epoch on the validation metric, predicts the test split once, and
    writes the run directory ``<output_dir>/<dataset>_chemprop_seed<seed>``:

    * ``config.yaml``: the arguments and the chemprop settings used;
    * ``metrics.csv``: per epoch: step, training loss (chemprop's
      criterion: MSE on standardized targets, or BCE), validation metric
      (original units), learning rate, wall and CPU seconds so far;
    * ``results.json``: summary (keys as our runs' ``results.json``, plus
      :obj:`model_family`, :obj:`cpu_time_s` and the dropped molecules);
    * ``test_predictions.csv``: :obj:`id` (row of the split CSV for ZINC,
      OGB graph index for MolHIV), SMILES, target and prediction of every
      scored test molecule;
    * ``curves.png``; and ``checkpoints/{best,last}.ckpt`` (not for
      committing).

    Args:
        dataset (str): :obj:`"zinc_subset"`, :obj:`"molhiv"`, or
            :obj:`"csv"`: the binary tasks of a CSV training config, split as
            our run of it splits them
            (:func:`~benchmarks.baselines.csv_molecules.load_csv_molecules`;
            ROC-AUC averaged over tasks, :class:`~benchmarks.baselines.
            chemprop_model.TaskMeanAUROC`).
        source (str or Path): The dataset folder (see :func:`~graphormer_sepnorm.
            data.molecule_splits.load_molecule_splits`), or for
            :obj:`"csv"` the config file.
        output_dir (str or Path, optional): Folder of the run directories.
            (default: :obj:`"runs"`)
        seed (int, optional): Seed of the weights and of the batch order.
            (default: :obj:`0`)
        max_epochs (int, optional): Epochs; chemprop's learning-rate
            schedule decays over them. (default: :obj:`50`)
        max_cpu_minutes (float, optional): CPU-time budget of training and
            validation (see :class:`CpuBudgetClock`). (default: :obj:`None`)
        batch_size (int, optional): Molecules per step. (default: :obj:`64`)
        threads (int, optional): :func:`torch.set_num_threads`.
            (default: :obj:`1`)
        resume (bool, optional): Continue from ``checkpoints/last.ckpt``.
            (default: :obj:`False`)
        progress_bar (bool, optional): Show Lightning's progress bar.
            (default: :obj:`True`)
        train_molecules (int, optional): Train on this many training
            molecules only, the scaffold subsample of :func:`~graphormer_sepnorm.
            data.molecule_splits.load_molecule_splits`; the run is then named
            and listed under :func:`~graphormer_sepnorm.data.molecule_splits.
            subsample_benchmark`.
            (default: :obj:`None`, all)
        split_seed (int, optional): For :obj:`"csv"`: ``data.split_seed``.
            (default: :obj:`None`, the config's)
        molecule_featurizers (Sequence[str], optional): chemprop molecule
            featurizers (registry names, e.g. :obj:`"rdkit_2d"`) whose
            outputs are appended to each molecule's fingerprint, standardized
            on the training split, as ``chemprop train
            --molecule-featurizers`` does
            (:mod:`~benchmarks.baselines.chemprop_descriptors`); recorded in
            ``config.yaml`` and ``results.json``. (default: none)

    Returns:
        dict: The content of ``results.json``.

    Raises:
        FileNotFoundError, ValueError: Missing or malformed data files,
            or an unknown molecule featurizer.
        ~graphormer_sepnorm.training.config.ConfigError: The output folder
            is not writable, or the run directory holds checkpoints without
            :obj:`resume` or nothing to resume.
    """
    if dataset not in TASKS:
        raise ValueError(f"Unknown dataset {dataset!r}; choose one of "
                         f"{', '.join(TASKS)}")
    if max_epochs <= CHEMPROP_DEFAULTS['warmup_epochs']:
        raise ValueError(f"max_epochs must exceed chemprop's "
                         f"{CHEMPROP_DEFAULTS['warmup_epochs']} warmup "
                         f"epochs, got {max_epochs}")
    for name, value in (('batch_size', batch_size), ('threads', threads)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    check_featurizer_names(molecule_featurizers)
    clock = CpuBudgetClock(max_cpu_minutes)  # rejects a budget <= 0
    title, metric, higher_is_better, logged_key = TASKS[dataset]
    check_writable_folder('--output-dir', output_dir)
    csv_molecules = None
    if dataset == 'csv':
        if train_molecules is not None:
            raise ValueError("train_molecules subsamples a benchmark; a CSV "
                             "config takes data.limit_train instead")
        csv_molecules = load_csv_molecules(str(source), split_seed)
        if csv_molecules.task != 'binary':
            raise ValueError(f"{source}: data.task is "
                             f"{csv_molecules.task!r}; the baseline's CSV "
                             f"mode scores binary tasks only")
        title = csv_molecules.benchmark
    benchmark = csv_molecules.benchmark if csv_molecules else dataset \
        if train_molecules is None else \
        subsample_benchmark(dataset, train_molecules)
    if train_molecules is not None:
        title = f'{title}, {train_molecules:,} training molecules'
    run_dir = check_run_dir({'output_dir': str(output_dir),
                             'run_name': run_name(benchmark, seed,
                                                  molecule_featurizers)},
                            resume)
    with _process_settings(threads):
        lightning.seed_everything(seed, workers=True, verbose=False)
        splits = csv_molecules.splits if csv_molecules else \
            load_molecule_splits(dataset, source, train_molecules)
        target_names = csv_molecules.target_names if csv_molecules else None
        featurize_start = time.process_time()
        featurizer, datasets = chemprop_datasets(splits, molecule_featurizers)
        featurize_cpu_s = time.process_time() - featurize_start
        descriptor_transform = scale_descriptors(datasets)
        scale = 1.0
        output_transform = None
        if dataset == 'zinc_subset':
            scaler = datasets['train'].normalize_targets()
            datasets['val'].normalize_targets(scaler)
            output_transform = UnscaleTransform.from_standard_scaler(scaler)
            # chemprop validates on standardized targets: its MAE there is
            # ours divided by the training standard deviation.
            scale = float(scaler.scale_[0])
        model = build_chemprop_model(
            dataset, featurizer, output_transform, len(target_names or [None]),
            datasets['train'].d_xd, descriptor_transform)
        run_dir.mkdir(parents=True, exist_ok=True)
        with open(run_dir / 'config.yaml', 'w') as f:
            yaml.safe_dump({
                'model_family': MODEL_FAMILY,
                'dataset': dataset,
                'source': neutral_path(source),
                'train_molecules': train_molecules,
                'split_seed': split_seed,
                'seed': seed,
                'max_epochs': max_epochs,
                'max_cpu_minutes': max_cpu_minutes,
                'batch_size': batch_size,
                'threads': threads,
                'selection': f'best validation {metric}',
                'chemprop': dict(CHEMPROP_DEFAULTS, max_epochs=max_epochs,
                                 batch_size=batch_size),
                'molecule_featurizers': list(molecule_featurizers),
            }, f, sort_keys=False)

        history = EpochHistory(clock, metric, logged_key, scale,
                               metrics_file=run_dir / 'metrics.csv')
        train_loader = build_dataloader(datasets['train'], batch_size,
                                        num_workers=0, seed=seed)
        val_loader = build_dataloader(datasets['val'], batch_size,
                                      num_workers=0, shuffle=False)
        best, last = checkpoint_callbacks(
            run_dir / 'checkpoints', logged_key, higher_is_better,
            steps_per_epoch=len(train_loader))
        trainer = Trainer(accelerator='cpu', devices=1,
                          max_epochs=max_epochs, logger=False,
                          callbacks=[clock, history, best, last],
                          enable_progress_bar=progress_bar,
                          enable_model_summary=False, num_sanity_val_steps=0,
                          deterministic=True, default_root_dir=str(run_dir))
        with warnings.catch_warnings():
            warnings.filterwarnings('ignore', message='.*does not have many '
                                    'workers.*')
            # chemprop checkpoints pickle its metric objects.
            trainer.fit(model, train_loader, val_loader,
                        ckpt_path=str(last.path) if resume else None,
                        weights_only=False)
        selected = MPNN.load_from_checkpoint(best.best_model_path,
                                             map_location='cpu')
        # The model scales descriptors itself when predicting: val's raw.
        datasets['val'].reset()
        val_predictions, test_predictions = (
            predict_chemprop(selected, datasets[split], batch_size)
            for split in ('val', 'test'))

    best_row = history.best_row(higher_is_better)
    write_predictions(run_dir / 'test_predictions.csv', splits['test'],
                      test_predictions, target_names)
    plot_curves(history.rows, run_dir / 'curves.png', metric,
                title=f"chemprop D-MPNN"
                f"{''.join(f' + {n}' for n in molecule_featurizers)} on "
                f"{title}, seed={seed}")
    results = {
        'dataset': dataset,
        'benchmark': benchmark,
        'train_molecules': len(splits['train']),
        'dataset_title': title,
        **({'targets': target_names, 'split_seed': csv_molecules.data[
            'split_seed'], 'skipped_rows': csv_molecules.skipped_rows}
           if csv_molecules else {}),
        'model_family': MODEL_FAMILY,
        'chemprop_version': chemprop.__version__,
        'molecule_featurizers': list(molecule_featurizers),
        'descriptor_columns': datasets['train'].d_xd,
        'seed': seed,
        'metric': metric,
        'higher_is_better': higher_is_better,
        'num_parameters': sum(p.numel() for p in selected.parameters()),
        'steps': int(trainer.global_step),
        'epochs_completed': len(history.rows),
        'max_epochs': max_epochs,
        'max_cpu_minutes': max_cpu_minutes,
        'stopped_by_cpu_budget': clock.stopped_by_budget,
        'wall_time_s': clock.wall_time_s,
        'cpu_time_s': clock.cpu_time_s,
        'featurize_cpu_time_s': featurize_cpu_s,
        'best_epoch': best_row['epoch'] if best_row else None,
        'best_step': best_row['step'] if best_row else None,
        'best_val_metric': _metric(metric, val_predictions,
                                   splits['val'].targets),
        'test_metric_at_best_val': _metric(metric, test_predictions,
                                           splits['test'].targets),
        'test_protocol': TEST_PROTOCOLS['end'],
        'molecules': {
            split: {'scored': len(splits[split]),
                    'dropped': len(splits[split].dropped_ids),
                    'dropped_ids': splits[split].dropped_ids}
            for split in SPLITS
        },
        'test_predictions': 'test_predictions.csv',
        'hardware': {
            'accelerator': 'cpu',
            'device_name': hardware_name('cpu'),
            'threads': threads,
            'torch': torch.__version__,
            'rdkit': rdkit.__version__,
        },
    }
    with open(run_dir / 'results.json', 'w') as f:
        json.dump(json_safe(results), f, indent=2)
    return results

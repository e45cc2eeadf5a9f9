r"""What a finished training run leaves: the best model with its card,
the history and curves, the test predictions and :obj:`results.json`
(:func:`finalize_run`)."""
from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path
from typing import Optional

import torch

from .hardware import hardware_name, resolved_accelerator

__all__ = ['finalize_run', 'json_safe', 'TEST_PROTOCOLS', 'test_protocol']

#: How :obj:`results.json` says the test split was scored (its
#: :obj:`test_protocol`), by :obj:`train.test_at`. Runs written before the
#: field existed were all scored the old way, :obj:`"every_validation"`.
TEST_PROTOCOLS: dict[str, str] = {
    'end': 'test scored once at the end, by the best-validation checkpoint',
    'every_validation': 'test scored at every validation and read at the '
                        'best-validation epoch',
}


def test_protocol(config: dict) -> Optional[str]:
    r"""The :obj:`test_protocol` of :obj:`results.json` for a validated
    configuration (:data:`TEST_PROTOCOLS`); :obj:`None` when
    :obj:`train.eval_test` is false (test never read)."""
    train = config['train']
    return TEST_PROTOCOLS[train['test_at']] if train['eval_test'] else None


def finalize_run(config: dict, run_dir: Path, module, trainer,
                 best_cb) -> dict:
    r"""Writes :obj:`model.safetensors` (best model), :obj:`metrics.csv`,
    :obj:`curves.png`, :obj:`results.json`, :obj:`report.html` and, when the test split is
    evaluated, :obj:`test_predictions.csv`; returns the results.

    With :obj:`train.test_at=end` the test metrics of :obj:`results.json`
    are computed here, once, from the very values written to
    :obj:`test_predictions.csv` (:func:`~.evaluate.written_scores`), so
    the two cannot disagree; with :obj:`every_validation` they are the
    history's at the best-validation epoch."""
    from ..checkpoint import ModelCard, save_model
    from ..data.csv_splits import identifier_columns
    from ..models import GraphormerSepNorm
    from .console import notice
    from .evaluate import (per_target, predict_split,
                           write_split_predictions, written_scores)
    from .init_from import read_record
    from .lit_module import history_columns, write_history
    from .metrics import (HIGHER_IS_BETTER, compute_metrics,
                          tests_every_validation)
    from .plots import plot_curves

    info = module.info
    metric = module.metric
    best = module.best_row()
    history = module.history
    best_path = Path(best_cb.best_model_path or run_dir / 'checkpoints' /
                     'best.ckpt')
    model = GraphormerSepNorm(**module.model.config,
                              attention_buckets=module.model.attention_buckets)
    if best is not None and best_path.is_file():
        state = torch.load(best_path, map_location='cpu',
                           weights_only=True)['state_dict']
        weights = {k[len('model.'):]: v for k, v in state.items()
                   if k.startswith('model.')}
        model.load_state_dict(weights)
    else:  # nothing to select by: keep the final weights
        if history:
            # best.ckpt then holds the first validated epoch, whatever the
            # weights (ModelCheckpoint never ranks NaN above it)
            warnings.warn(
                f"val_{metric} is undefined at every validation (see the "
                f"warnings above); model.safetensors holds the final weights "
                f"(epoch {history[-1]['epoch']}), not a model selected on "
                f"the validation split", RuntimeWarning, stacklevel=2)
        else:
            notice(f"no validation ran in {trainer.global_step} steps: "
                   f"best_val_metric is null and model.safetensors holds "
                   f"the final weights, not a model selected on the "
                   f"validation split; train at least one epoch for one")
        model.load_state_dict(module.model.state_dict())
        best_path = None
    write_history(history, run_dir / 'metrics.csv',
                  history_columns(module.metric_keys))
    if history:
        plot_curves(history, run_dir / 'curves.png', metric,
                    title=f"{info.title}, norm={config['model']['norm']}, "
                    f"seed={config['seed']}")
    world_size = trainer.world_size
    train_graphs = module.train_graphs * world_size
    throughput = (train_graphs / module.train_time_s
                  if module.train_time_s > 0 else math.nan)
    accelerator = resolved_accelerator(config)
    target_mean, target_std = module.target_scaling.statistics()
    results = {
        'dataset': info.name,
        'dataset_title': info.title,
        'task': info.task,
        'targets': list(info.target_names),
        'norm': config['model']['norm'],
        'seed': config['seed'],
        'run_dir': str(run_dir),
        'num_parameters': sum(p.numel() for p in model.parameters()),
        'steps': int(trainer.global_step),
        'epochs_completed': len(history),
        'wall_time_s': module.wall_time_s,
        'cpu_time_s': module.cpu_time_s,
        'train_time_s': module.train_time_s,
        'metric': metric,
        'higher_is_better': HIGHER_IS_BETTER[metric],
        'best_val_metric': best[f'val_{metric}'] if best else None,
        'best_epoch': best['epoch'] if best else None,
        'best_step': best['step'] if best else None,
        'test_metric_at_best_val': best[f'test_{metric}'] if best else None,
        'final_val_metric': history[-1][f'val_{metric}'] if history else None,
        'final_test_metric': (history[-1][f'test_{metric}']
                              if history else None),
        'final_train_loss': history[-1]['train_loss'] if history else None,
        'val_metrics_at_best_val': _split_metrics(best, 'val',
                                                  module.metric_keys),
        'test_metrics_at_best_val': _split_metrics(best, 'test',
                                                   module.metric_keys),
        'test_protocol': test_protocol(config),
        'split_sizes': _split_sizes(trainer),
        'target_mean': _one_or_list(target_mean),
        'target_std': _one_or_list(target_std),
        'throughput_graphs_per_s': throughput,
        'train_graphs_seen': train_graphs,
        'hardware': {
            'accelerator': accelerator,
            'device_name': hardware_name(accelerator),
            'world_size': world_size,
            'precision': str(trainer.precision),
            'torch': torch.__version__,
        },
        # Relative to the run directory: results.json stays valid when the
        # run directory moves, and holds no path of the machine that ran it.
        'best_checkpoint': (Path(os.path.relpath(best_path, run_dir))
                            .as_posix() if best_path else None),
        'model_file': 'model.safetensors',
        'test_predictions': None,
        # The model it started from (model.init_from), null: random.
        'init_from': read_record(run_dir),
    }
    splits = getattr(trainer.datamodule, 'splits', None)
    results['forest'] = None
    if config['model']['forest_trees'] and splits is not None:
        _blend_forest(config, model, splits, results, best_path is not None)
    if config['train']['eval_test'] and splits is not None:
        # Per molecule, so that other models can be scored on exactly the
        # same molecules and the errors looked at (parity plots, ROC).
        ids, preds, targets = predict_split(
            model, splits['test'], info.task, results['target_mean'],
            results['target_std'], config['data']['eval_batch_size'] or 256)
        write_split_predictions(
            run_dir / 'test_predictions.csv', ids, preds, targets, info.task,
            info.target_names, identifier_columns(
                splits['test'], config['data']['id_column']))
        results['test_predictions'] = 'test_predictions.csv'
        # Without a selected model (best_path None) no test at best either.
        if best_path is not None and not tests_every_validation(config):
            test = compute_metrics(
                info.task, written_scores(preds, info.task), targets,
                info.target_names, split='test',
                target_std=per_target(results['target_std']))
            results['test_metric_at_best_val'] = test[metric]
            results['test_metrics_at_best_val'] = test
    # The featurizer fitted on the training split (data.molecule_features),
    # from which prediction computes the same features; null: none.
    featurizer = getattr(trainer.datamodule, 'molecule_featurizer', None)
    molecule_features = (None if featurizer is None else dict(
        featurizer.state_dict(),
        rejected=dict(trainer.datamodule.features_rejected)))
    results['molecule_features'] = (None if featurizer is None else {
        **featurizer.settings(),
        'rejected': dict(trainer.datamodule.features_rejected)})
    card = ModelCard(
        model_config=dict(model.config), featurizer=info.featurizer,
        task=info.task, target_mean=results['target_mean'],
        target_std=results['target_std'], dataset=info.title,
        target_names=list(info.target_names),
        extra={
            'data': dict(config['data']),
            'metric': metric,
            'best_val_metric': results['best_val_metric'],
            'test_metric_at_best_val': results['test_metric_at_best_val'],
            'best_epoch': results['best_epoch'],
            'best_step': results['best_step'],
            'seed': config['seed'],
            'run_name': run_dir.name,
            'init_from': results['init_from'],
            'molecule_features': molecule_features,
            'forest': results['forest'],
        })
    save_model(run_dir / 'model.safetensors', model, card)
    with open(run_dir / 'results.json', 'w') as f:
        json.dump(json_safe(results), f, indent=2)
    _write_report(run_dir)
    return results


def _blend_forest(config: dict, model, splits, results: dict,
                  selected: bool) -> None:
    r"""Fits :obj:`model.forest_trees`' forest into :obj:`model`
    (:func:`~.forest_blend.fit_forest_blend`) and records it in
    :obj:`results`: :obj:`forest`, its time added to the run's, and
    :obj:`best_val_metric` the blend's (the network's kept as
    :obj:`network_best_val_metric`)."""
    from .console import notice
    from .forest_blend import fit_forest_blend
    if not selected:
        notice("model.forest_trees: no model was selected on validation, "
               "so no forest is blended (its weight is chosen there)")
        return
    trees = config['model']['forest_trees']
    notice(f"model.forest_trees: fitting {trees} trees per target on the "
           f"training split's molecule features")
    record = fit_forest_blend(
        model, splits, results['task'], results['metric'], trees,
        config['seed'], results['target_mean'], results['target_std'],
        results['targets'], config['data']['eval_batch_size'] or 256)
    notice(f"model.forest_trees: validation {results['metric']} network "
           f"{record['val_metric_network']:.4f}, forest "
           f"{record['val_metric_forest']:.4f}, blend "
           f"{record['val_metric_blend']:.4f} at the network's share "
           f"{record['weight']:.2f} ({record['cpu_time_s'] / 60:.1f} CPU "
           f"min)")
    results['forest'] = record
    results['network_best_val_metric'] = results['best_val_metric']
    results['best_val_metric'] = record['val_metric_blend']
    results['cpu_time_s'] += record['cpu_time_s']
    results['wall_time_s'] += record['wall_time_s']


def _write_report(run_dir: Path) -> None:
    r"""Writes :obj:`report.html`; a failure is a warning, never the loss
    of a finished run (the report can be written again with evaluate
    --report)."""
    from ..report.run_report import write_run_report
    try:
        write_run_report(run_dir)
    except Exception as error:  # noqa: BLE001 - the run itself is saved
        warnings.warn(f"report.html was not written ({type(error).__name__}"
                      f": {error}); write it with: evaluate --checkpoint "
                      f"{run_dir} --report", RuntimeWarning, stacklevel=2)


def _one_or_list(values: list[float]):
    # One target: a float, as before there were several.
    return float(values[0]) if len(values) == 1 else [float(v) for v in values]


def _split_metrics(best: Optional[dict], split: str,
                   keys: list[str]) -> Optional[dict]:
    if best is None:
        return None
    return {key: best[f'{split}_{key}'] for key in keys}


def _split_sizes(trainer) -> Optional[dict]:
    splits = getattr(trainer.datamodule, 'splits', None)
    if splits is None:
        return None
    return {name: len(splits[name]) for name in ('train', 'val', 'test')}


def json_safe(value):
    r"""A copy of :obj:`value` that JSON can hold: NaN and infinities as
    :obj:`None`, tuples as lists."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value

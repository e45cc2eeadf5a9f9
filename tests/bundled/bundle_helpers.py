"""Helpers of the bundled-model tests: tiny random ZINC models, saved alone
or as the run directory scripts/train.py leaves."""
import json
from pathlib import Path

import torch
import yaml

from graphormer_sepnorm import GraphormerSepNorm
from graphormer_sepnorm.checkpoint import ModelCard, save_model
from graphormer_sepnorm.data.featurize import featurizer_vocab_sizes


def tiny_model(seed: int, hidden_channels: int = 16,
               num_layers: int = 1,
               featurizer: str = 'zinc',
               graph_feature_channels: int = 0) -> GraphormerSepNorm:
    """A random model of the :obj:`featurizer`'s vocabulary, larger weights
    than the default initialization so that outputs differ between
    molecules."""
    atoms, bonds = featurizer_vocab_sizes(featurizer)
    torch.manual_seed(seed)
    model = GraphormerSepNorm(num_layers=num_layers,
                              hidden_channels=hidden_channels,
                              ffn_channels=hidden_channels, num_heads=2,
                              max_nodes=64, atom_vocab_sizes=atoms,
                              bond_vocab_sizes=bonds,
                              graph_feature_channels=graph_feature_channels)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() > 1:
                parameter.normal_(0, 0.3)
    return model.eval()


def zinc_card(data: dict, featurizer: str = 'zinc') -> ModelCard:
    return ModelCard({}, featurizer, 'regression', 0.1, 2.0, 'ZINC-subset',
                     extra={'data': data, 'metric': 'mae'})


def write_run(run_dir: Path, seed: int, final: bool = False,
              raw_source: str = '../shared/data/ZINC-proxy',
              **model_kwargs) -> Path:
    """A finished ZINC-subset run directory: model.safetensors (float32),
    config.yaml and results.json, a final run (test metric recorded) or a
    tuning trial."""
    data = {'name': 'zinc_subset', 'root': 'data', 'raw_source': raw_source,
            'max_nodes': 512, 'limit_train': None, 'limit_val': None,
            'limit_test': None}
    run_dir.mkdir(parents=True)
    save_model(run_dir / 'model.safetensors',
               tiny_model(seed, **model_kwargs), zinc_card(data))
    (run_dir / 'config.yaml').write_text(yaml.safe_dump(
        {'seed': seed, 'run_name': run_dir.name, 'data': data,
         'train': {'eval_test': final}}))
    (run_dir / 'results.json').write_text(json.dumps({
        'dataset': 'zinc_subset', 'dataset_title': 'ZINC-subset',
        'norm': 'sep', 'seed': seed, 'run_dir': f'runs/{run_dir.name}',
        'num_parameters': 1000, 'steps': 100, 'epochs_completed': 2,
        'wall_time_s': 60.0, 'cpu_time_s': 50.0, 'metric': 'mae',
        'best_val_metric': 1.5, 'best_epoch': 1, 'best_step': 100,
        'test_metric_at_best_val': 1.6 if final else None,
        'hardware': {'accelerator': 'cpu', 'device_name': 'Test CPU',
                     'world_size': 1, 'precision': '32-true',
                     'torch': torch.__version__}}))
    return run_dir

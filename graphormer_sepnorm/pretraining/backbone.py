r"""A pretrained backbone on disk: the encoder's weights and a
:class:`~graphormer_sepnorm.checkpoint.ModelCard` with
:obj:`task="pretraining"` that says how it was made (corpus, objectives,
budget), in the package's safetensors format."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Union

from ..checkpoint import BACKBONE_TASK, ModelCard, save_model
from .descriptors import DESCRIPTOR_NAMES, EXCLUDED

__all__ = ['save_backbone', 'backbone_summary', 'corpus_summary']


def backbone_summary(module, corpus_folder: Optional[Path] = None) -> dict:
    r"""What a backbone's card records: the objectives and their targets,
    the corpus (its manifest's counts, when :obj:`corpus_folder` has one),
    and the budget spent so far (steps, graphs, CPU and wall time)."""
    config = module.config
    pretrain = config['pretrain']
    summary = {
        'objectives': {
            'masked_atoms': {'weight': pretrain['atom_loss_weight'],
                             'mask_rate': pretrain['mask_rate']},
            'descriptors': {'weight': pretrain['descriptor_loss_weight'],
                            'names': list(DESCRIPTOR_NAMES),
                            'excluded': list(EXCLUDED)},
        },
        'descriptor_scaler': (module.scaler.state_dict()
                              if module.scaler is not None else None),
        'steps': int(module.global_step),
        'graphs_seen': int(module.train_graphs
                           * module.trainer.world_size),
        'cpu_time_s': float(module.cpu_time_s),
        'wall_time_s': float(module.wall_time_s),
        'world_size': int(module.trainer.world_size),
        'batch_size': int(config['data']['batch_size']),
        'seed': int(config['seed']),
        'norm': config['model']['norm'],
        'last_validation': dict(module.history[-1]) if module.history
        else None,
    }
    manifest = corpus_folder / 'manifest.json' if corpus_folder else None
    if manifest is not None and manifest.is_file():
        summary['corpus'] = corpus_summary(json.loads(manifest.read_text()))
    return summary


def corpus_summary(manifest: dict) -> dict:
    r"""The part of a corpus manifest a backbone's card keeps: the source,
    the counts and what was removed from which split (no paths of the
    machine that built it)."""
    exclusions = manifest.get('exclusions', {})
    return {
        'corpus': manifest.get('corpus'),
        'source': {key: manifest.get('source', {}).get(key)
                   for key in ('wheel', 'sha256', 'license')},
        'counts': manifest.get('counts'),
        'removed_by_rule': exclusions.get('removed_by_rule'),
        'removed_from': [
            {key: split.get(key) for key in
             ('source', 'split', 'molecules', 'matched_total')}
            for split in exclusions.get('splits', [])],
        'skipped_exclusions': exclusions.get('skipped'),
        'rdkit_version': manifest.get('rdkit_version'),
    }


def save_backbone(path: Union[str, Path], module,
                  corpus_folder: Optional[Path] = None) -> Path:
    r"""Writes the encoder of a
    :class:`~graphormer_sepnorm.pretraining.lit_module.PretrainingLitModule`
    (with its descriptor head, which fine-tuning replaces) as a backbone
    file, atomically."""
    path = Path(path)
    card = ModelCard(model_config={},
                     featurizer=module.config['data']['featurizer'],
                     task=BACKBONE_TASK, dataset='pretraining corpus',
                     target_names=list(DESCRIPTOR_NAMES),
                     extra={'pretraining': backbone_summary(module,
                                                            corpus_folder)})
    tmp = path.with_name(path.name + '.tmp')
    save_model(tmp, module.model, card)
    tmp.replace(path)
    return path

r"""``train --csv FILE``: training on your own CSV of SMILES and targets in
one command, from the shipped CSV example (``csv_zinc_properties``) or,
with ``--pretrained``, its fine-tuning config
(``csv_zinc_properties_pretrained``: the bundled pretrained SepNorm
backbone)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Optional, Sequence

__all__ = ['CSV_CONFIG', 'PRETRAINED_CSV_CONFIG', 'add_csv_arguments',
           'csv_config']

#: The shipped configs whose data, model and schedule ``--csv`` takes.
CSV_CONFIG = 'csv_zinc_properties'
PRETRAINED_CSV_CONFIG = 'csv_zinc_properties_pretrained'


def add_csv_arguments(parser: argparse.ArgumentParser) -> None:
    r"""Adds ``--csv``, ``--smiles-column``, ``--targets``,
    ``--molecule-features``, ``--forest-trees`` and ``--pretrained`` to
    :obj:`parser`."""
    group = parser.add_argument_group(
        'your own CSV (instead of --config)',
        f'Train on a CSV of SMILES and targets with the settings of the '
        f'shipped config {CSV_CONFIG} (a scaffold split 80/10/10, 15 epochs '
        f'of a 4-layer model), or with --pretrained those of '
        f'{PRETRAINED_CSV_CONFIG} (fine-tuning the bundled pretrained SepNorm '
        f'backbone). The run is named after the CSV unless run_name= is '
        f'given; a binary task needs data.task=binary.')
    group.add_argument('--csv', type=Path, metavar='FILE',
                       help='The CSV file (data.path).')
    group.add_argument('--smiles-column', default='smiles', metavar='NAME',
                       help='Its SMILES column (data.smiles_column; '
                       'default: smiles).')
    group.add_argument('--targets', metavar='NAMES',
                       type=lambda names: [n for n in names.split(',') if n],
                       help='Its target columns, separated by commas '
                       '(data.target_columns; e.g. y or logp,tpsa).')
    group.add_argument('--molecule-features', metavar='NAMES',
                       type=lambda names: [n for n in names.split(',') if n],
                       help='Molecule features added to the graph token, '
                       'separated by commas: rdkit2d (RDKit 2D descriptors, '
                       'standardized on the training split), morgan (Morgan '
                       'count fingerprint) (data.molecule_features; e.g. '
                       'rdkit2d,morgan; CSV columns: '
                       'data.feature_columns=[a,b]).')
    group.add_argument('--forest-trees', type=int, metavar='N',
                       help='Also fit a random forest of N trees per target '
                       'on the molecule features once training ends, and '
                       "blend it with the network, the network's share "
                       'chosen on validation (model.forest_trees; needs '
                       '--molecule-features or data.feature_columns).')
    group.add_argument('--pretrained', action='store_true',
                       help='Fine-tune the bundled pretrained backbone '
                       'instead of training from scratch.')


def csv_config(args: argparse.Namespace,
               overrides: Sequence[str]) -> Optional[dict]:
    r"""The validated config of ``train --csv`` from parsed arguments:
    the shipped CSV config, the CSV's path and columns, then
    :obj:`overrides`; :obj:`None` without ``--csv`` (raises
    :class:`ConfigError`, also for an option of ``--csv`` without it).

    Its :obj:`run_name`, unless an override sets one, is the CSV's name,
    the norm and the seed (``<csv>_sep_seed0``), with ``pretrained`` before
    the norm for ``--pretrained``, so that runs on two CSVs, or from
    scratch and fine-tuned, go to different folders.
    """
    from ..training.config import (ConfigError, load_config,
                                   parse_override, resolved_run_name)
    if args.csv is None:
        given = [option for option, value in (
            ('--smiles-column', args.smiles_column != 'smiles'),
            ('--targets', args.targets), ('--pretrained', args.pretrained),
            ('--molecule-features', args.molecule_features),
            ('--forest-trees', args.forest_trees is not None))
            if value]
        if given:
            raise ConfigError(f"{', '.join(given)} go(es) with --csv "
                              f"<file.csv>; add it, or drop {given[0]}")
        return None
    if args.config is not None:
        raise ConfigError("Pass either --config or --csv, not both (--csv "
                          f"takes its settings from the shipped config "
                          f"{CSV_CONFIG}; change them with key=value)")
    if not args.targets:
        raise ConfigError("--csv needs --targets: the CSV's target columns, "
                          "separated by commas (e.g. --targets y)")
    if not args.csv.is_file():
        raise ConfigError(f"--csv {args.csv} does not exist; pass the path "
                          f"of your CSV file")
    # JSON is YAML: names with YAML's special characters stay strings.
    given = [f'data.path={json.dumps(str(args.csv))}',
             f'data.smiles_column={json.dumps(args.smiles_column)}',
             f'data.target_columns={json.dumps(args.targets)}',
             'run_name=null']
    if args.molecule_features:
        given.append('data.molecule_features='
                     f'{json.dumps(args.molecule_features)}')
    if args.forest_trees is not None:
        given.append(f'model.forest_trees={args.forest_trees}')
    config = load_config(PRETRAINED_CSV_CONFIG if args.pretrained
                         else CSV_CONFIG, [*given, *overrides])
    if not any(parse_override(item)[0] == 'run_name' for item in overrides):
        name = resolved_run_name(config)
        if args.pretrained:
            norm = f"_{config['model']['norm']}_seed"
            head, _, seed = name.rpartition(norm)
            name = f'{head}_pretrained{norm}{seed}'
        config['run_name'] = name
    return config

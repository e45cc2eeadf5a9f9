#!/usr/bin/env python
r"""Same molecule, same answer? Each bundled model predicts real ZINC
molecules written several ways (the SMILES as given plus random, equally
valid SMILES from RDKit), twice:

* *as written*: each SMILES featurized in its own atom order (the package
  before canonical atom order, ``canonical=False``), through PyG's
  ``Batch`` and the model;
* *canonical*: through :class:`graphormer_sepnorm.predict.Predictor`, the
  user's path, which featurizes in RDKit's canonical atom order.

A molecule's spread is its largest minus its smallest prediction over its
spellings. The script also re-measures each model card's validation metric
from the validation molecules' SMILES, as written and canonical, beside the
card's own (measured on the dataset's graphs). Writes a JSON and a markdown
table; ``--readme`` puts one line per model in the ``smiles-invariance``
block of ``benchmarks/README.md`` (or of the README named).

    python benchmarks/smiles_invariance.py \
        --output-dir benchmarks/results/smiles_invariance --readme
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from rdkit import Chem
from torch_geometric.data import Batch

# The research tooling (benchmarks/) is imported from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.analysis.readme_blocks import update_readme
from graphormer_sepnorm.bundled import BUNDLED_MODELS, bundled_model_paths
from graphormer_sepnorm.checkpoint import load_model, read_card
from graphormer_sepnorm.data.featurize import (FeaturizationError,
                                               get_featurizer)
from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.predict.workers import single_thread
from graphormer_sepnorm.training.metrics import compute_metric
from graphormer_sepnorm.training.hardware import hardware_name
from graphormer_sepnorm.transforms import AddShortestPaths

SHARED = Path(__file__).resolve().parents[2] / 'shared' / 'data'
BLOCK = 'smiles-invariance'
#: The README holding the block (--readme without a file).
README = Path('benchmarks/README.md')
METRIC_NAMES = {'mae': 'MAE', 'rocauc': 'ROC-AUC'}
#: Raw files of each bundled model's dataset under ../shared/data.
RAW_SOURCES = {'zinc_subset': 'ZINC-proxy', 'molhiv': 'ogbg_molhiv'}


def spellings(smiles: str, count: int, seed: int) -> list[str]:
    r""":obj:`smiles` and :obj:`count - 1` random SMILES of it (seeded)."""
    return [smiles, *Chem.MolToRandomSmilesVect(
        Chem.MolFromSmiles(smiles), count - 1, randomSeed=seed)]


def as_written(member: Path, smiles: list[str],
               batch_size: int = 256) -> np.ndarray:
    r"""The member's first output for each SMILES featurized in its
    written atom order, in the units :class:`Predictor` reports (NaN where
    the SMILES is rejected)."""
    model, card = load_model(member)
    model.eval()
    featurize = get_featurizer(card.featurizer)
    paths = AddShortestPaths(max_nodes=model.max_nodes)
    graphs, kept = [], []
    for k, text in enumerate(smiles):
        try:
            graphs.append(paths(featurize(text, model.max_nodes,
                                          canonical=False)))
            kept.append(k)
        except FeaturizationError:
            continue
    values = np.full(len(smiles), np.nan)
    with torch.no_grad():
        for start in range(0, len(graphs), batch_size):
            out = model(Batch.from_data_list(
                graphs[start:start + batch_size]))[:, 0].double()
            values[kept[start:start + batch_size]] = (
                torch.sigmoid(out) if card.task == 'binary' else
                out * np.ravel(card.target_std)[0] +
                np.ravel(card.target_mean)[0]).numpy()
    return values


def canonical(predictor: Predictor, smiles: list[str]) -> np.ndarray:
    r"""The predictor's first output for each SMILES (NaN if rejected)."""
    values = []
    for p in predictor.predict(smiles, num_workers=0):
        value = p.value if p.ok else np.nan
        values.append(next(iter(value.values())) if isinstance(value, dict)
                      else value)
    return np.array(values, dtype=float)


def spread_summary(values: np.ndarray, count: int) -> dict:
    r"""Spread statistics of :obj:`values` (molecule-major, :obj:`count`
    spellings each)."""
    per_molecule = values.reshape(-1, count)
    spread = per_molecule.max(1) - per_molecule.min(1)
    return {'max': float(spread.max()), 'mean': float(spread.mean()),
            'median': float(np.median(spread)),
            'fraction_above_0.05': float((spread > 0.05).mean())}


def validation_molecules(dataset: str) -> tuple[list[str], np.ndarray]:
    r"""SMILES and labels of the validation split of a bundled model's
    dataset, in split order."""
    if dataset == 'zinc_subset':
        import csv
        with open(SHARED / 'ZINC-proxy' / 'smiles' / 'val.csv',
                  newline='') as f:
            rows = list(csv.DictReader(f))
        return ([r['smiles'] for r in rows],
                np.array([float(r['y']) for r in rows]))
    folder = SHARED / 'ogbg_molhiv'
    with gzip.open(folder / 'mapping' / 'mol.csv.gz', 'rt') as f:
        next(f)
        rows = [line.rstrip('\n').split(',') for line in f]
    with gzip.open(folder / 'split' / 'scaffold' / 'valid.csv.gz', 'rt') as f:
        index = [int(line) for line in f if line.strip()]
    return ([rows[i][1] for i in index],
            np.array([float(rows[i][0]) for i in index]))


def validation_metric(card, values: np.ndarray, labels: np.ndarray) -> dict:
    r"""The card's validation metric on :obj:`values`, over the molecules
    that were predicted."""
    recorded = card.extra['evaluation']['val']
    kept = ~np.isnan(values)
    # Probabilities for the AUCs, whose values depend on the order only.
    value = compute_metric(recorded['metric'], torch.from_numpy(values[kept]),
                           torch.from_numpy(labels[kept]))
    return {'metric': recorded['metric'], 'value': float(value),
            'num_molecules': int(kept.sum())}


def measure(name: str, molecules: list[str], count: int,
            data_root: Path) -> dict:
    r"""Spreads and validation metrics of the bundled model :obj:`name`."""
    member = bundled_model_paths(name)[0]
    card, _ = read_card(member)
    predictor = Predictor.from_checkpoint(member)
    written = [s for k, m in enumerate(molecules)
               for s in spellings(m, count, seed=k)]
    start = time.perf_counter()
    before = as_written(member, written)
    after = canonical(predictor, written)
    # The two paths agree on canonical SMILES (a check of this script).
    check = [Chem.MolToSmiles(Chem.MolFromSmiles(m)) for m in molecules[:100]]
    if np.abs(as_written(member, check) - canonical(predictor, check)).max() \
            > 1e-5:
        raise RuntimeError(f'{name}: the as-written path and the predictor '
                           f'disagree on canonical SMILES')
    val_smiles, labels = validation_molecules(BUNDLED_MODELS[name].dataset)
    return {
        'member': member.name,
        'molecules': len(molecules), 'spellings': count,
        'spread_as_written': spread_summary(before, count),
        'spread_canonical': spread_summary(after, count),
        'validation': {
            'dataset_graphs': card.extra['evaluation']['val'],
            'smiles_as_written': validation_metric(
                card, as_written(member, val_smiles), labels),
            'smiles_canonical': validation_metric(
                card, canonical(predictor, val_smiles), labels),
        },
        'renumbering': renumbering_spread(name, count, data_root,
                                          val_smiles),
        'seconds': time.perf_counter() - start,
    }


def renumbering_spread(name: str, count: int, data_root: Path,
                       val_smiles: list[str], seed: int = 0) -> dict:
    r"""Spread of the bundled model :obj:`name` over :obj:`count` numberings
    (the dataset's own and random ones) of the graphs of its dataset's
    validation split, without and with
    :class:`~graphormer_sepnorm.transforms.CanonicalNodeOrder` before
    :class:`~graphormer_sepnorm.transforms.AddShortestPaths`: what a user
    who builds graphs without SMILES sees. :obj:`val_smiles`: the
    validation molecules of :func:`validation_molecules`, which a model
    trained from SMILES is scored on."""
    from torch_geometric.transforms import Compose

    from graphormer_sepnorm.data import load_data_splits
    from graphormer_sepnorm.transforms import CanonicalNodeOrder

    member = bundled_model_paths(name)[0]
    model, card = load_model(member)
    model.eval()
    if card.extra['dataset'] == 'csv':
        # Trained from the SMILES of its benchmark's splits: the validation
        # molecules featurized as in training, in the order written.
        featurize = get_featurizer(card.featurizer)
        graphs = [featurize(smiles) for smiles in val_smiles]
    else:
        data = dict(card.extra['data'], root=str(data_root),
                    raw_source=str(SHARED / RAW_SOURCES[
                        card.extra['dataset']]))
        graphs = load_data_splits(data)['val']
    generator = torch.Generator().manual_seed(seed)
    strip = ('spd', 'path_next')
    plain = [graph.clone() for graph in graphs]
    for graph in plain:
        for key in strip:
            del graph[key]
    # Edges sorted by (row, col) in each numbering, as PyG's datasets and
    # coalesce() store them: tied paths are then broken by that numbering.
    numberings = [plain] + [
        [g.subgraph(torch.randperm(g.num_nodes, generator=generator)).sort()
         for g in plain] for _ in range(count - 1)]
    spreads = {}
    for label, transform in (
            ('without', AddShortestPaths(max_nodes=model.max_nodes)),
            ('with', Compose([CanonicalNodeOrder(),
                              AddShortestPaths(max_nodes=model.max_nodes)]))):
        outputs = []
        with torch.no_grad():
            for numbering in numberings:
                out = torch.cat([model(Batch.from_data_list(
                    [transform(g.clone()) for g in numbering[i:i + 256]]))
                    for i in range(0, len(numbering), 256)])[:, 0].double()
                outputs.append(torch.sigmoid(out) if card.task == 'binary'
                               else out * np.ravel(card.target_std)[0])
        stacked = torch.stack(outputs)
        spread = (stacked.max(0).values - stacked.min(0).values).numpy()
        spreads[label] = {'max': float(spread.max()),
                          'mean': float(spread.mean())}
    return {'graphs': len(plain), 'numberings': count, **spreads}


def readme_lines(results: dict) -> str:
    r"""One line per bundled model: the spread before and after, and the
    validation metric by input."""
    lines = []
    for name, r in results['models'].items():
        b, a, v = (r['spread_as_written'], r['spread_canonical'],
                   r['validation'])
        metric = METRIC_NAMES.get(v['dataset_graphs']['metric'],
                                  v['dataset_graphs']['metric'])
        lines.append(
            f"- `{name}`: spread over {r['spellings']} spellings of "
            f"{r['molecules']:,} ZINC molecules, max {b['max']:.3g} / mean "
            f"{b['mean']:.3g} as written → max {a['max']:.1g} / mean "
            f"{a['mean']:.1g} canonical; validation {metric} "
            f"{v['dataset_graphs']['value']:.4f} on the dataset graphs (the "
            f"card's), {v['smiles_as_written']['value']:.4f} from SMILES as "
            f"written, {v['smiles_canonical']['value']:.4f} from canonical "
            f"SMILES.")
        n = r['renumbering']
        lines.append(
            f"  Its {n['graphs']:,} validation graphs, numbered "
            f"{n['numberings']} ways (the dataset's and random): max spread "
            f"{n['without']['max']:.3g} (mean {n['without']['mean']:.3g}) "
            f"with the reference's tie-breaking, "
            f"{n['with']['max']:.1g} with `CanonicalNodeOrder`.")
    return '\n'.join(lines) + '\n'


def markdown(results: dict) -> str:
    rows = ['| model | input | max spread | mean | median | spread > 0.05 |',
            '| --- | --- | --- | --- | --- | --- |']
    for name, r in results['models'].items():
        for label, key in (('as written', 'spread_as_written'),
                           ('canonical', 'spread_canonical')):
            s = r[key]
            rows.append(f"| `{name}` | {label} | {s['max']:.3g} | "
                        f"{s['mean']:.3g} | {s['median']:.3g} | "
                        f"{s['fraction_above_0.05']:.1%} |")
    return ('# Same molecule, same answer\n\n'
            f"{results['hardware']}; generated by "
            f"`benchmarks/smiles_invariance.py`.\n\n" + '\n'.join(rows) +
            '\n\n' + readme_lines(results))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--molecules', type=Path,
                        default=SHARED / 'zinc250k' / 'jtvae_test.txt',
                        help='one SMILES per line (default: %(default)s)')
    parser.add_argument('--count', type=int, default=1000,
                        help='molecules to read (default: %(default)s)')
    parser.add_argument('--spellings', type=int, default=5,
                        help='ways to write each molecule, the first being '
                        'the given SMILES (default: %(default)s)')
    # The first member of each bundled ensemble (a -single model is one of
    # its members).
    ensembles = sorted(name for name, entry in BUNDLED_MODELS.items()
                       if entry.single_of is None)
    parser.add_argument('--models', nargs='+', default=ensembles,
                        choices=ensembles,
                        help='bundled models (default: all)')
    parser.add_argument('--data-root', type=Path, default=Path('data'),
                        help='writable data root where the datasets of the '
                        'bundled models are processed from ../shared/data '
                        '(default: %(default)s)')
    parser.add_argument('--output-dir', type=Path, required=True,
                        help='where to write smiles_invariance.json and .md')
    parser.add_argument('--readme', type=Path, nargs='?', default=None,
                        const=README,
                        help='also write the smiles-invariance block of this '
                        'README, from the JSON written (without a file: '
                        '%(const)s)')
    parser.add_argument('--readme-only', action='store_true',
                        help='measure nothing: write the README block from '
                        'the smiles_invariance.json already in --output-dir')
    args = parser.parse_args(argv)
    if args.readme_only:
        if args.readme is None:
            parser.error('--readme-only needs --readme')
        results = json.loads(
            (args.output_dir / 'smiles_invariance.json').read_text())
        update_readme(args.readme, readme_lines(results), BLOCK,
                      generator='benchmarks/smiles_invariance.py')
        return 0
    if args.spellings < 2:
        parser.error('--spellings must be at least 2')
    try:
        lines = args.molecules.read_text().splitlines()
    except OSError as error:
        print(f'error: cannot read --molecules: {error}', file=sys.stderr)
        return 2
    molecules = [line.split()[0] for line in lines if line.strip()]
    molecules = molecules[:args.count]
    # One thread, restored after (tests call main in their own process).
    with single_thread():
        results = {
            'hardware': f"{hardware_name('cpu')}, torch {torch.__version__}, "
                        f"1 thread",
            'models': {name: measure(name, molecules, args.spellings,
                                     args.data_root)
                       for name in args.models}}
    args.output_dir.mkdir(parents=True, exist_ok=True)
    (args.output_dir / 'smiles_invariance.json').write_text(
        json.dumps(results, indent=2) + '\n')
    (args.output_dir / 'smiles_invariance.md').write_text(markdown(results))
    print(markdown(results))
    if args.readme is not None:
        update_readme(args.readme, readme_lines(results), BLOCK,
                      generator='benchmarks/smiles_invariance.py')
    return 0


if __name__ == '__main__':
    sys.exit(main())

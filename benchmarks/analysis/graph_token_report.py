r"""Compare the graph-token geometry of trained models (SepNorm vs
ShareNorm): uniformity and anisotropy of each run on a split of its
dataset, or of each model or pretrained backbone on the molecules of a
SMILES file, summarized over seeds per dataset and norm (see
:mod:`~benchmarks.analysis.graph_token_summary`), as a JSON report
and a plot of the pairwise cosine similarities."""
import json
import math
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np
from torch_geometric.data import Data

from graphormer_sepnorm.checkpoint import RUN_WEIGHTS_COMMIT
from graphormer_sepnorm.training.evaluate import load_checkpoint_split
from graphormer_sepnorm.analysis.graph_token import (
    anisotropy, graph_token_embeddings, pairwise_cosine, uniformity)
from .formatting import mean_std
from .graph_token_summary import group_rows, summarize_geometry
from .result_plots import save_figure
from .runs import NORM_LABELS, load_runs

PathLike = Union[str, Path]

#: The files :func:`graph_token_report` writes into its output folder.
REPORT_FILE = 'graph_token_geometry.json'
PLOT_FILE = 'graph_token_geometry.png'
#: Cosine similarities are counted in [-1, 1] at a resolution of 0.0001,
#: then plotted in about :data:`_PLOT_BINS` bins over the range they cover.
_FINE_BINS = 20_000
_PLOT_BINS = 80


def find_model_runs(folder: PathLike,
                    weights: Optional[PathLike] = None) -> list[Path]:
    r"""The run directories of the Graphormer recipe runs below
    :obj:`folder` whose model is at hand: runs whose :obj:`results.json`
    has no :obj:`model_family` (another model family, *e.g.* chemprop) and
    no :obj:`variant` (*e.g.* a Graphormer trained from a CSV of the
    benchmark's SMILES), each where its :obj:`model.safetensors` is (runs
    without one are passed over), in path order.

    Args:
        folder (str or Path): *e.g.* :obj:`"benchmarks/results/runs"`.
        weights (str or Path, optional): Where the models are, when not in
            the run directories: the model of run :obj:`folder/<path>` is
            :obj:`weights/<path>/model.safetensors` (run weights are not
            committed; ``benchmarks/cpu_protocol.py`` trains a plan's runs
            in its ``--workdir``, *e.g.* :obj:`"runs/cpu/runs"` for the
            destination :obj:`benchmarks/results/runs`).
            (default: :obj:`None`, the run directories themselves)

    Raises:
        FileNotFoundError: :obj:`folder` is missing, or no recipe run has a
            model there; the message says where the committed runs'
            weights are.
    """
    root = Path(folder if weights is None else weights)
    models = [root / Path(run['path']).relative_to(folder) /
              'model.safetensors' for run in load_runs(folder)
              if not run.get('model_family') and not run.get('variant')]
    found = [model.parent for model in models if model.is_file()]
    if not found:
        raise FileNotFoundError(
            f"No Graphormer run below {folder} has its model.safetensors "
            f"in {root} (run weights are not kept in git): pass --weights, "
            f"the folder the runs were trained in (benchmarks/cpu_protocol.py"
            f": its --workdir, e.g. runs/cpu/runs), or restore the weights of "
            f"the committed runs from commit {RUN_WEIGHTS_COMMIT} with: git "
            f"restore --source={RUN_WEIGHTS_COMMIT} -- "
            f"'{Path(folder).as_posix()}/*/model.safetensors'")
    return found


def portable_path(path: PathLike, base: Optional[PathLike] = None) -> str:
    r""":obj:`path` as recorded in a report, never absolute: relative to the
    current directory when it lies below it, else relative to :obj:`base`
    when it lies below that, else its name alone.

    Args:
        path (str or Path): A run directory.
        base (str or Path, optional): The folder the runs were found in.
            (default: :obj:`None`)
    """
    path = Path(path).resolve()
    for folder in (Path.cwd(), base):
        if folder is not None and path.is_relative_to(Path(folder).resolve()):
            return path.relative_to(Path(folder).resolve()).as_posix()
    return path.name


def smiles_graphs(path: PathLike, featurizer: str, max_nodes: int,
                  smiles_column: str = 'smiles') -> tuple[list[Data], int]:
    r"""The graphs of the molecules of a SMILES file (CSV or TSV with a
    :obj:`smiles_column`, or :obj:`.smi`), featurized as prediction
    featurizes them (canonical atom order), and the number of molecules
    skipped because they cannot be featurized.

    Raises:
        ValueError: The file is missing, unreadable, an SDF file, or holds
            fewer than two molecules that can be featurized.
    """
    from graphormer_sepnorm.data.featurize import FeaturizationError
    from graphormer_sepnorm.data.prepared_data import prepared_data
    from graphormer_sepnorm.data.molecule_graphs import prepare_graph
    from graphormer_sepnorm.predict.molecules import SMILES
    from graphormer_sepnorm.predict.prediction import PredictionError
    from graphormer_sepnorm.predict.readers import MoleculeReader
    try:
        reader = MoleculeReader(path, smiles_column=smiles_column)
        if reader.kind != SMILES:
            raise ValueError(f"{path}: the geometry reads SMILES files (CSV, "
                             f"TSV or .smi), not {reader.format.upper()}")
        graphs, skipped = [], 0
        for _, smiles in reader.rows():
            try:
                graphs.append(prepared_data(
                    prepare_graph(smiles, featurizer, max_nodes)))
            except FeaturizationError:
                skipped += 1
    except PredictionError as error:
        raise ValueError(str(error)) from None
    if len(graphs) < 2:
        raise ValueError(f"{path}: {len(graphs)} molecule(s) can be "
                         f"featurized; the geometry needs at least two")
    return graphs, skipped


def load_encoder_file(checkpoint: PathLike, device: str = 'cpu'):
    r"""A model or pretrained backbone in evaluation mode, with its card and
    file: a :obj:`.safetensors` file, a training run directory (its
    :obj:`model.safetensors`) or a pretraining run directory (its
    :obj:`backbone.safetensors`)."""
    from graphormer_sepnorm.checkpoint import load_model
    from graphormer_sepnorm.training.init_from import resolve_init_from
    path = resolve_init_from(str(checkpoint))
    model, card = load_model(path, map_location=device)
    return model, card, path


def graph_token_report(checkpoints: Sequence[PathLike], output_dir: PathLike,
                       split: str = 'test',
                       data_overrides: Optional[dict[str, Any]] = None,
                       batch_size: int = 256, device: str = 'cpu',
                       base: Optional[PathLike] = None,
                       on_row: Optional[Callable[[dict[str, Any]], None]] =
                       None, smiles_file: Optional[PathLike] = None
                       ) -> dict[str, Any]:
    r"""Evaluates the graph-token geometry of every checkpoint on
    :obj:`split` of its own dataset, or on the molecules of
    :obj:`smiles_file`, and writes :data:`REPORT_FILE` and
    :data:`PLOT_FILE` into :obj:`output_dir`.

    Args:
        checkpoints (list of str or Path): :obj:`model.safetensors` files or
            run directories (*e.g.* :func:`find_model_runs`); with
            :obj:`smiles_file`, pretrained backbones too (their
            :obj:`.safetensors` or pretraining run directory).
        output_dir (str or Path): Where the report and the plot go.
        split (str, optional): :obj:`"train"`, :obj:`"val"` or
            :obj:`"test"`. (default: :obj:`"test"`)
        data_overrides (dict, optional): Data settings that replace the
            model card's, *e.g.* :obj:`{"root": "data"}`.
            (default: :obj:`None`)
        batch_size (int, optional): Graphs per forward. (default: :obj:`256`)
        device (str, optional): Where the models run. (default: :obj:`"cpu"`)
        base (str or Path, optional): The folder the runs were found in, for
            :func:`portable_path`. (default: :obj:`None`)
        on_row (callable, optional): Called with each run's row as soon as
            it is computed (progress). (default: :obj:`None`)
        smiles_file (str or Path, optional): Measure every model on these
            molecules (see :func:`smiles_graphs`) instead of a split of its
            dataset; the rows' :obj:`dataset` is the file's name and
            :obj:`split` is :obj:`"all"`. (default: :obj:`None`)

    Returns:
        The report: :obj:`split` (:obj:`"all"` with :obj:`smiles_file`),
        :obj:`molecules` (the file as given if relative, else its name;
        :obj:`None` without :obj:`smiles_file`), :obj:`plot`
        (the plot's file name, beside the report), :obj:`runs` (per run
        :obj:`dataset`, :obj:`norm`,
        :obj:`seed`, :obj:`run`, :obj:`split`, :obj:`num_graphs`,
        :obj:`skipped` (molecules of :obj:`smiles_file` that cannot be
        featurized; 0 for a split), :obj:`uniformity`,
        :obj:`anisotropy`) and the
        :func:`~benchmarks.analysis.graph_token_summary.
        summarize_geometry` of the runs.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    if smiles_file is not None:
        split = 'all'
    rows, counts = [], []
    # The file's graphs depend on the featurizer and size limit only, so
    # models that share them share one featurization.
    graphs_by_featurizer: dict[tuple[str, int], tuple[list[Data], int]] = {}
    for checkpoint in checkpoints:
        if smiles_file is None:
            model, card, info, dataset, path = load_checkpoint_split(
                checkpoint, split, data_overrides, device)
            dataset_name, skipped = info.name, 0
        else:
            model, card, path = load_encoder_file(checkpoint, device)
            key = (card.featurizer, int(model.max_nodes))
            if key not in graphs_by_featurizer:
                graphs_by_featurizer[key] = smiles_graphs(smiles_file, *key)
            dataset, skipped = graphs_by_featurizer[key]
            dataset_name = Path(smiles_file).name
        embeddings = graph_token_embeddings(model, dataset, batch_size,
                                            device)
        row = {
            'dataset': dataset_name,
            'norm': model.config['norm'],
            # A backbone's card keeps its seed with its pretraining record.
            'seed': card.extra.get('seed', card.extra.get(
                'pretraining', {}).get('seed')),
            'run': portable_path(path.parent, base),
            'split': split,
            'num_graphs': int(embeddings.size(0)),
            'skipped': skipped,
            'uniformity': uniformity(embeddings),
            'anisotropy': anisotropy(embeddings),
        }
        rows.append(row)
        counts.append(np.histogram(
            pairwise_cosine(embeddings).clamp(-1, 1).numpy(),
            bins=_FINE_BINS, range=(-1, 1))[0])
        if on_row is not None:
            on_row(row)
    report = {'split': split, 'molecules': _molecules_name(smiles_file),
              'plot': PLOT_FILE, 'runs': rows, **summarize_geometry(rows)}
    with open(output_dir / REPORT_FILE, 'w') as f:
        json.dump(report, f, indent=2)
        f.write('\n')
    _plot(rows, counts, split, output_dir / PLOT_FILE)
    return report


def _molecules_name(smiles_file: Optional[PathLike]) -> Optional[str]:
    r"""How a report names its SMILES file: the path as given when it is
    relative (*e.g.* under ``../shared/data``), else the file's name alone,
    so that no absolute path of this machine enters a report."""
    if smiles_file is None:
        return None
    path = Path(smiles_file)
    return path.name if path.is_absolute() else path.as_posix()


def _coarse(counts: Sequence[np.ndarray]) -> tuple[int, int, int]:
    r"""The plotted bins of the fine :obj:`counts` of some runs: the first
    occupied fine bin, fine bins per plotted bin, and plotted bins, so that
    about :data:`_PLOT_BINS` bins cover every occupied one."""
    occupied = np.flatnonzero(np.sum(counts, axis=0))
    first, span = int(occupied[0]), int(occupied[-1] + 1 - occupied[0])
    step = math.ceil(span / _PLOT_BINS)
    return first, step, math.ceil(span / step)


def _density(counts: np.ndarray, first: int, step: int,
             bins: int) -> np.ndarray:
    r"""The density of one run's fine :obj:`counts` in the plotted bins."""
    window = np.zeros(bins * step)
    kept = counts[first:first + bins * step]
    window[:len(kept)] = kept
    return window.reshape(bins, step).sum(1) / (counts.sum() * step * 2 /
                                                _FINE_BINS)


def _plot(rows, counts, split: str, path: Path) -> None:
    r"""One panel per dataset over the range its cosine similarities cover:
    per norm their density, averaged over its runs."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    groups = group_rows(rows)
    datasets = sorted({dataset for dataset, _ in groups})
    fig, axes = plt.subplots(1, len(datasets), squeeze=False,
                             figsize=(6 * len(datasets), 4.2))
    for ax, dataset in zip(axes[0], datasets):
        first, step, bins = _coarse([c for row, c in zip(rows, counts)
                                     if row['dataset'] == dataset])
        edges = -1 + 2 / _FINE_BINS * (first + step * np.arange(bins + 1))
        for (name, norm), members in groups.items():
            if name != dataset:
                continue
            density = np.mean([_density(c, first, step, bins)
                               for row, c in zip(rows, counts)
                               if (row['dataset'], row['norm']) == (name, norm)
                               ], axis=0)
            ax.stairs(density, edges, label=(
                f"{NORM_LABELS.get(norm, norm)} (n = {len(members)})\n"
                f"uniformity {mean_std([r['uniformity'] for r in members])}, "
                f"anisotropy {mean_std([r['anisotropy'] for r in members])}"))
        ax.set_title(f'{dataset}, {split} split')
        ax.set_xlabel('cosine similarity of two graph-token embeddings')
        ax.set_ylabel('density (mean over runs)')
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)

r"""Turning training runs into a bundled model: :func:`bundle_runs`, behind
``scripts/bundle_model.py``.

Each training run directory (``model.safetensors``, ``results.json``,
``config.yaml``, as :func:`graphormer_sepnorm.training.train` leaves it)
becomes one member ``<name>_seed<seed>.safetensors`` of the bundled model
:obj:`name` (see :mod:`graphormer_sepnorm.bundled`): the run's best model
stored as float16, with a model card whose :obj:`extra` says what the model
is (dataset, training split, protocol, seed, steps, CPU time, hardware) and
what it scores: its validation metrics, and its test metrics for a final run
only, measured again on the dataset's own graphs with the float16-stored
weights, exactly as the member file holds them.

A member may take at most :data:`MAX_MEMBER_BYTES` and all members of a
bundled model together :data:`MAX_BUNDLE_BYTES`, so that the package stays
small enough to install anywhere.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import torch
import yaml

from graphormer_sepnorm.bundled import (ENV_VAR, BundledModel, bundled_dir, get_bundled_model,
                                        member_filename, member_paths)
from graphormer_sepnorm.checkpoint import (ModelCard, load_model, read_card,
                                           resolve_model_file, save_model)

__all__ = ['MAX_MEMBER_BYTES', 'MAX_BUNDLE_BYTES', 'BundleError',
           'STAND_IN_TRAIN_SPLITS', 'bundle_runs', 'check_sizes']

PathLike = Union[str, Path]

MB = 1_000_000
#: Largest member file (5 MB).
MAX_MEMBER_BYTES = 5 * MB
#: Largest total of the member files of one bundled model (10 MB).
MAX_BUNDLE_BYTES = 10 * MB

#: Raw-data folders (:obj:`data.raw_source`, by folder name) whose train
#: split is a stand-in for the dataset's own, with what they hold instead;
#: the model card says so.
STAND_IN_TRAIN_SPLITS = {
    'ZINC-proxy': (
        "the stand-in train split of ZINC-proxy: 10,000 molecules of "
        "ZINC-full's validation split (none of them in the ZINC-subset val "
        "or test split), featurized as ZINC and labelled with the same "
        "normalized penalized logP, in place of the real ZINC-subset train "
        "split, which was not available; its val and test splits are the "
        "real ZINC-subset ones"),
}

#: What a run that is not a final run says in place of test metrics.
TEST_NOT_MEASURED = (
    "not measured: a tuning trial (trained with train.eval_test=false); the "
    "test split is read only for final runs")

#: Entries of a run's results.json that a copy given with :obj:`--results`
#: must share with it.
_RUN_IDENTITY = ('dataset', 'seed', 'steps', 'best_val_metric')


class BundleError(ValueError):
    r"""A run cannot be bundled, or the bundle would be too large; the
    message says why."""


@dataclass
class _Run:
    r"""A training run to bundle: its directory, model file, results (with
    the protocol of :obj:`--results` when given) and configuration."""
    run_dir: Path
    model_file: Path
    results: dict[str, Any]
    config: dict[str, Any]

    @property
    def seed(self) -> int:
        return int(self.results['seed'])

    @property
    def final(self) -> bool:
        r"""A final run: trained with :obj:`train.eval_test=true`, so its
        results.json holds a test metric."""
        value = self.results.get('test_metric_at_best_val')
        return value is not None and not (isinstance(value, float)
                                          and math.isnan(value))


def bundle_runs(name: str, run_dirs: Sequence[PathLike],
                results_files: Sequence[PathLike] = (),
                output_dir: Optional[PathLike] = None,
                data_root: Optional[PathLike] = None,
                raw_source: Optional[PathLike] = None,
                note: Optional[str] = None, batch_size: int = 256,
                device: str = 'cpu') -> list[Path]:
    r"""Writes the training runs :obj:`run_dirs` as the members of the
    bundled model :obj:`name`, replacing its previous members, and returns
    the member files (mode 0644), ordered by seed.

    Args:
        name (str): A registered bundled model (:obj:`"zinc"`,
            :obj:`"molhiv"`); every run must be trained on its dataset, with
            its featurizer and task, and with a different seed.
        run_dirs (list of str or Path): Finished training run directories.
        results_files (list of str or Path, optional): One results.json per
            run, in the same order, recording the run with its
            :obj:`protocol` entry (the copy that
            ``benchmarks/cpu_protocol.py`` commits); its dataset, seed,
            steps and best validation metric must equal the run's. Empty:
            the runs' own results.json. (default: :obj:`()`)
        output_dir (str or Path, optional): Where to write the members.
            (default: the bundled folder,
            :func:`~graphormer_sepnorm.bundled.bundled_dir`)
        data_root (str or Path, optional): Data root of the evaluation
            (default: the run's :obj:`data.root`).
        raw_source (str or Path, optional): Folder the raw files are copied
            from when the data root lacks them (default: the run's
            :obj:`data.raw_source`).
        note (str, optional): A sentence for the model card, e.g. that the
            model is interim.
        batch_size (int, optional): Graphs per evaluation batch.
            (default: :obj:`256`)
        device (str, optional): Where to evaluate. (default: :obj:`"cpu"`)

    Raises:
        BundleError: A run that does not fit :obj:`name`, is unfinished or
            lacks a file, two runs with one seed, a member above
            :data:`MAX_MEMBER_BYTES` or members above
            :data:`MAX_BUNDLE_BYTES`, an absolute path in a card.
    """
    entry = get_bundled_model(name)
    if entry.single_of is not None:
        raise BundleError(
            f"'{entry.name}' is the best-validation member of "
            f"'{entry.single_of}' and has no files of its own; bundle "
            f"'{entry.single_of}' instead")
    if not run_dirs:
        raise BundleError("Pass at least one training run directory")
    if results_files and len(results_files) != len(run_dirs):
        raise BundleError(
            f"Pass one --results file per run directory, in the same order "
            f"({len(results_files)} for {len(run_dirs)} runs)")
    runs = [_read_run(entry, Path(run_dir),
                      Path(results_files[i]) if results_files else None)
            for i, run_dir in enumerate(run_dirs)]
    for run in runs:
        twins = [str(other.run_dir) for other in runs
                 if other.seed == run.seed]
        if len(twins) > 1:
            raise BundleError(
                f"Several runs have seed {run.seed} ({', '.join(twins)}); the "
                f"members of a bundled model are its training seeds")
    folder = bundled_dir(output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    overrides = {key: str(value) for key, value in
                 (('root', data_root), ('raw_source', raw_source))
                 if value is not None}
    # Written next to their destination, moved there only once every member
    # is done: a failure leaves the previous members in place.
    staging = Path(tempfile.mkdtemp(prefix='.bundle-', dir=folder))
    try:
        members = []
        for run in sorted(runs, key=lambda r: r.seed):
            path = staging / member_filename(entry.name, run.seed)
            model, card = load_model(run.model_file)
            if run.results.get('benchmark'):
                # Trained on a CSV of a benchmark's splits, whose label column
                # make_split_csv.py names 'target': predict under the name
                # the benchmark's own models use, 'prediction'.
                card.target_names = []
            extra = _describe(entry, run, note)
            if card.extra.get('molecule_features'):
                # The fitted molecule featurizer (its normalization
                # statistics), which evaluation and prediction compute the
                # model's graph features with.
                extra['molecule_features'] = card.extra['molecule_features']
            _save_member(path, model, card, extra)
            members.append((run, path, model, card, extra))
        paths = [member[1] for member in members]
        check_sizes(paths)  # Before the evaluation, which takes minutes.
        for run, path, model, card, extra in members:
            extra['evaluation'] = _evaluate(path, run, overrides, batch_size,
                                            device)
            # The same float32 weights cast to float16 again: the very
            # tensors that were evaluated.
            _save_member(path, model, card, extra)
        check_sizes(paths)
        written = []
        for path in paths:
            path.chmod(0o644)
            written.append(folder / path.name)
            path.replace(written[-1])
        for stale in set(member_paths(entry.name, folder)) - set(written):
            stale.unlink()
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def check_sizes(paths: Sequence[Path]) -> None:
    r"""Raises :class:`BundleError` if a member file is above
    :data:`MAX_MEMBER_BYTES` or all of them together above
    :data:`MAX_BUNDLE_BYTES`."""
    for path in paths:
        size = path.stat().st_size
        if size > MAX_MEMBER_BYTES:
            raise BundleError(
                f"{path.name} takes {size / MB:.2f} MB (float16), above the "
                f"{MAX_MEMBER_BYTES / MB:g} MB limit of a bundled member; "
                f"keep the model outside the package instead (predict with "
                f"--checkpoint, or point {ENV_VAR} at its folder)")
    total = sum(path.stat().st_size for path in paths)
    if total > MAX_BUNDLE_BYTES:
        raise BundleError(
            f"The {len(paths)} members take {total / MB:.2f} MB together "
            f"(float16), above the {MAX_BUNDLE_BYTES / MB:g} MB limit of a "
            f"bundled model; bundle fewer runs")


def _read_run(entry: BundledModel, run_dir: Path,
              results_file: Optional[Path]) -> _Run:
    r"""Reads a run directory and checks that it fits :obj:`entry`."""
    model_file = resolve_model_file(run_dir)  # Says when a run is unfinished.
    files = {}
    for filename in ('results.json', 'config.yaml'):
        files[filename] = model_file.parent / filename
        if not files[filename].is_file():
            raise BundleError(f"{model_file.parent} has no {filename}; pass "
                              f"a run directory written by scripts/train.py")
    results = json.loads(files['results.json'].read_text())
    if results_file is not None:
        recorded = json.loads(Path(results_file).read_text())
        differing = [key for key in _RUN_IDENTITY
                     if recorded.get(key) != results.get(key)]
        if differing:
            raise BundleError(
                f"{results_file} does not record the run {run_dir}: "
                + ', '.join(f"{key} {recorded.get(key)!r} there, "
                            f"{results.get(key)!r} in the run"
                            for key in differing))
        results = recorded
    config = yaml.safe_load(files['config.yaml'].read_text())
    card, _ = read_card(model_file)
    # A run on a CSV of a benchmark's molecules counts as that benchmark's.
    dataset = results.get('benchmark') or config['data']['name']
    trained = (dataset, card.featurizer, card.task)
    expected = (entry.dataset, entry.featurizer, entry.task)
    if trained != expected:
        raise BundleError(
            f"{run_dir} is a model of dataset {trained[0]!r} (featurizer "
            f"{trained[1]!r}, task {trained[2]!r}); the bundled "
            f"'{entry.name}' model needs {expected[0]!r} ({expected[1]!r}, "
            f"{expected[2]!r})")
    return _Run(run_dir, model_file, results, config)


def _describe(entry: BundledModel, run: _Run,
              note: Optional[str]) -> dict[str, Any]:
    r"""What the model card says about the member of :obj:`run`, before
    its evaluation."""
    results = run.results
    data = {key: Path(value).name if _is_absolute(value) else value
            for key, value in run.config['data'].items()}
    extra = {
        'bundled_as': entry.name,
        'kind': 'final run' if run.final else 'tuning trial',
        'note': note,
        'dataset': data['name'],
        'training_data': _training_data(run),
        'protocol': results.get('protocol'),
        'seed': run.seed,
        'norm': results.get('norm'),
        'steps': results.get('steps'),
        'epochs': results.get('epochs_completed'),
        'cpu_time_s': results.get('cpu_time_s'),
        'wall_time_s': results.get('wall_time_s'),
        'hardware': results.get('hardware'),
        'num_parameters': results.get('num_parameters'),
        'run_name': run.config.get('run_name'),
        # The pretrained backbone the run was fine-tuned from, with its
        # pretraining record (None: trained from scratch).
        'init_from': results.get('init_from'),
        # As logged during training, with the float32 weights.
        'training_log': {key: results.get(key) for key in (
            'best_val_metric', 'best_epoch', 'best_step',
            'test_metric_at_best_val')},
        'stored_as': 'float16',
        'metric': results['metric'],
        # The data section without machine paths: scripts/evaluate.py reads
        # it (with --data.root and --data.raw_source).
        'data': data,
    }
    absolute = _absolute_paths(extra)
    if absolute:
        raise BundleError(
            f"The model card of {run.run_dir} would hold the absolute paths "
            f"{absolute}; model cards must not name paths of this machine")
    return extra


def _training_data(run: _Run) -> str:
    r"""Which split the model was trained on, in words."""
    data = run.config['data']
    source = data.get('raw_source')
    if source is not None and Path(source).name in STAND_IN_TRAIN_SPLITS:
        return STAND_IN_TRAIN_SPLITS[Path(source).name]
    size = (run.results.get('split_sizes') or {}).get('train')
    where = (f"raw files from {Path(source).name}" if source is not None
             else "as downloaded by PyG/OGB")
    return (f"the {run.results.get('dataset_title', data['name'])} train "
            f"split{f' ({size:,} graphs)' if size else ''}, {where}")


def _evaluate(path: Path, run: _Run, overrides: Mapping[str, str],
              batch_size: int, device: str) -> dict[str, Any]:
    r"""Validation (and, for a final run, test) metrics of the member file
    :obj:`path` on the whole splits of its dataset."""
    from graphormer_sepnorm.training.evaluate import evaluate_checkpoint

    evaluation: dict[str, Any] = {
        'weights': 'float16, as stored in this file (loaded as float32)'}
    for split in ('val', 'test'):
        if split == 'test' and not run.final:
            evaluation['test'] = TEST_NOT_MEASURED
            continue
        result = evaluate_checkpoint(path, split, dict(overrides),
                                     batch_size, device, full_split=True)
        evaluation[split] = {
            'metric': result['metric'], 'value': result['value'],
            'metrics': result['metrics'], 'num_graphs': result['num_graphs']}
    return evaluation


def _save_member(path: Path, model: torch.nn.Module, card: ModelCard,
                 extra: dict[str, Any]) -> None:
    from graphormer_sepnorm.training.run_results import json_safe

    # NaN (a metric undefined on a split) becomes null: strict JSON.
    save_model(path, model, replace(card, extra=json_safe(extra)),
               dtype=torch.float16)


def _is_absolute(value: Any) -> bool:
    return isinstance(value, str) and os.path.isabs(value)


def _absolute_paths(value: Any) -> list[str]:
    r"""The absolute paths in :obj:`value` (nested dicts and lists): whole
    strings, or words of a sentence."""
    if isinstance(value, Mapping):
        return [p for v in value.values() for p in _absolute_paths(v)]
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in _absolute_paths(v)]
    if not isinstance(value, str):
        return []
    words = [word.strip('\'"()[]{},;:') for word in value.split()]
    return [word for word in words if len(word) > 1 and _is_absolute(word)]

r"""Command-line entry points behind ``scripts/train.py`` and
``scripts/evaluate.py``."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, Optional, Sequence

import yaml

from ..training.config.environment import DATA_ROOT_ENV
from .options import add_batch_size, add_device, fail
from .train_csv import add_csv_arguments, csv_config

TRAIN_EPILOG = f"""\
overrides:
  Any config key as dotted.key=value, value parsed as YAML, e.g.
    train.max_steps=200 data.root=/data seed=3 model.norm=share
    optim.betas=[0.9,0.98] data.limit_train=null
  {DATA_ROOT_ENV}=<dir> in the environment sets data.root (a data.root=
  override still wins). List every key with --list-options.

examples:
  %(prog)s --config configs/zinc_subset_sepnorm.yaml
  %(prog)s --config cpu/zinc_subset_sepnorm        # a shipped config, by name
  %(prog)s --csv my.csv --smiles-column smiles --targets y [--pretrained]
  %(prog)s --config configs/zinc_subset_sepnorm.yaml \\
      data.raw_source=../shared/data/ZINC-proxy train.max_steps=1000
  %(prog)s --config configs/zinc_subset_sepnorm.yaml --resume
  %(prog)s --resume runs/zinc_subset_sep_seed0 train.max_steps=2000
  torchrun --nproc_per_node 4 -m graphormer_sepnorm train \\
      --config configs/molhiv_sepnorm.yaml train.strategy=ddp train.devices=4
"""


def train_parser(prog: str = 'train.py',
                 own_csv: bool = True) -> argparse.ArgumentParser:
    r"""The parser of :obj:`scripts/train.py`; :obj:`prog` names the
    program in the usage line and the examples; :obj:`own_csv` adds the
    options of training on your own CSV (``--csv``)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description='Train GraphormerSepNorm from a YAML config (Lightning): '
        'writes config.yaml, checkpoints/{last,best}.ckpt, model.safetensors,'
        ' metrics.csv, curves.png and results.json into '
        '<output_dir>/<run_name>.',
        epilog=TRAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--config', type=Path, help='YAML config file, or '
                        'the name of a shipped config (configs/*.yaml; '
                        "'configs' lists them). Optional with --resume "
                        'RUN_DIR, which reads RUN_DIR/config.yaml.')
    parser.add_argument('--resume', nargs='?', const=True, default=False,
                        metavar='RUN_DIR', help='Continue from '
                        '<run dir>/checkpoints/last.ckpt. Without a value, '
                        'the run directory of the config; with RUN_DIR, that '
                        'directory (its saved config.yaml is the base).')
    parser.add_argument('--print-config', action='store_true',
                        help='Print the resolved config and exit (no data '
                        'is touched).')
    parser.add_argument('--list-options', action='store_true',
                        help='Print every config key (markdown table) and '
                        'exit.')
    parser.add_argument('overrides', nargs='*', metavar='KEY=VALUE',
                        help='Config overrides (see below).')
    if own_csv:
        add_csv_arguments(parser)
    return parser


def resolve_train_args(args: argparse.Namespace) -> tuple[dict, bool]:
    r"""The validated config and whether to resume, from parsed arguments
    (raises :class:`ConfigError`)."""
    from ..training.config import ConfigError, load_config
    overrides = list(args.overrides)
    resume = args.resume
    if isinstance(resume, str) and '=' in resume and not Path(resume).is_dir():
        # "--resume key=value": argparse took an override as RUN_DIR.
        overrides.insert(0, resume)
        resume = True
    if isinstance(resume, str):
        run_dir = Path(resume)
        if run_dir.name == 'last.ckpt' and run_dir.parent.name == 'checkpoints':
            run_dir = run_dir.parent.parent
        saved = run_dir / 'config.yaml'
        if not saved.is_file():
            raise ConfigError(f"--resume {run_dir}: {saved} does not exist; "
                              f"pass a run directory written by train.py")
        with open(saved) as f:
            base = yaml.safe_load(f)
        config = load_config(args.config, overrides, base=base)
        config['output_dir'] = str(run_dir.parent)
        config['run_name'] = run_dir.name
        return config, True
    csv = csv_config(args, overrides) if hasattr(args, 'csv') else None
    if csv is not None:
        return csv, bool(resume)
    if args.config is None:
        raise ConfigError("Pass --config <file.yaml or shipped name> (e.g. "
                          "zinc_subset_sepnorm), --csv <file.csv> --targets "
                          "<columns>, or --resume <run dir>")
    return load_config(args.config, overrides), bool(resume)


def run_main(args: argparse.Namespace,
             run: Callable[[dict, bool], Optional[dict]],
             summary_keys: Sequence[str]) -> int:
    r"""The body of ``train.py`` and ``pretrain.py`` once their arguments
    are parsed: ``--list-options``, the config (an error exits with 2),
    ``--print-config``, then :obj:`run(config, resume)`, whose errors are
    exit statuses too (2: config or data, 3: the loss became non-finite,
    128 + N: stopped by signal N after writing ``last.ckpt``),
    and the :obj:`summary_keys` of its results printed as JSON."""
    from ..training.config import ConfigError, options_markdown
    if args.list_options:
        print(options_markdown())
        return 0
    try:
        config, resume = resolve_train_args(args)
        from ..training.resuming import requeued_run
        if not resume and requeued_run(config):
            print("SLURM requeued this job: resuming its run", file=sys.stderr)
            resume = True
        if args.print_config:
            print(yaml.safe_dump(config, sort_keys=False), end='')
            return 0
    except ConfigError as error:
        return fail(error)
    from ..data.datasets import RawFilesMismatchError
    from ..data.errors import DataError
    from ..training.checkpointing import RunStopped
    from ..training.run_module import NonFiniteLossError
    try:  # the runs check paths and checkpoints before any work
        results = run(config, resume)
    except NonFiniteLossError as error:
        return fail(error, 3)
    except RunStopped as error:  # non-zero, so that a scheduler requeues
        return fail(error, 128 + error.signum)
    except (ConfigError, RawFilesMismatchError, DataError) as error:
        return fail(error)
    if results is not None:
        print(json.dumps({k: results[k] for k in summary_keys}, indent=2))
    return 0


def _train(config: dict, resume: bool) -> Optional[dict]:
    from ..training.trainer import train
    return train(config, resume=resume)


def train_main(argv: Optional[Sequence[str]] = None,
               prog: str = 'train.py') -> int:
    r"""Runs :obj:`scripts/train.py`; returns the exit status (2: bad
    config or data, 3: the loss became non-finite)."""
    return run_main(train_parser(prog).parse_args(argv), _train, (
        'dataset', 'norm', 'seed', 'steps', 'metric', 'best_val_metric',
        'best_epoch', 'test_metric_at_best_val', 'wall_time_s',
        'throughput_graphs_per_s', 'run_dir'))


def evaluate_parser(prog: str = 'evaluate.py') -> argparse.ArgumentParser:
    r"""The parser of :obj:`scripts/evaluate.py`; :obj:`prog` names the
    program in the usage line and the example."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description='Re-evaluate a trained model (model.safetensors or a run '
        'directory) on a split of its dataset and print the metric (ZINC: '
        'MAE, MolHIV: ROC-AUC) as JSON.',
        epilog='example: %(prog)s --checkpoint '
        'runs/zinc_subset_sep_seed0 --split test --data.root data')
    parser.add_argument('--checkpoint', required=True, type=Path,
                        help='model.safetensors, or a run directory holding '
                        'one.')
    parser.add_argument('--split', default='test',
                        choices=('train', 'val', 'test'),
                        help='Split to evaluate (default: test).')
    parser.add_argument('--data.root', dest='data_root', default=None,
                        help='Data root (default: the one used in training; '
                        f'{DATA_ROOT_ENV} also works).')
    parser.add_argument('--data.raw_source', dest='raw_source', default=None,
                        help='Folder to copy raw files from when the root '
                        'lacks them.')
    parser.add_argument('--full', action='store_true',
                        help="Ignore the run's data.limit_* settings and use "
                        'the whole split.')
    add_batch_size(parser, 256)
    add_device(parser)
    parser.add_argument('--predictions', type=Path, default=None,
                        help='Also write every molecule\'s label and '
                        'prediction to this CSV (id, target, prediction; '
                        'a CSV-trained model: its id column or id, and the '
                        'SMILES, first; binary tasks: probabilities).')
    parser.add_argument('--report', action='store_true',
                        help="Write the run's report.html (curves, results, "
                        'test predictions, the worst-predicted test molecules '
                        'drawn) into its run directory from the files it '
                        'holds, and stop: no evaluation, no data needed.')
    return parser


def evaluate_main(argv: Optional[Sequence[str]] = None,
                  prog: str = 'evaluate.py') -> int:
    r"""Runs :obj:`scripts/evaluate.py`; returns the exit status (2 with a
    one-line message for a missing checkpoint, data or output folder)."""
    import os
    args = evaluate_parser(prog).parse_args(argv)
    from ..training.evaluate import evaluate_checkpoint, resolve_checkpoint
    from ..training.preflight import check_writable_folder
    overrides = {}
    root = args.data_root or os.environ.get(DATA_ROOT_ENV)
    if root:
        overrides['root'] = root
    if args.raw_source:
        overrides['raw_source'] = args.raw_source
    if args.report:
        from ..report.run_report import write_run_report
        run_dir = (args.checkpoint if args.checkpoint.is_dir()
                   else args.checkpoint.parent)
        try:
            path = write_run_report(run_dir)
        except (FileNotFoundError, ValueError) as error:
            return fail(error)
        print(f'Wrote {path}', file=sys.stderr)
        return 0
    try:
        resolve_checkpoint(args.checkpoint)
        if args.raw_source and not Path(args.raw_source).is_dir():
            raise FileNotFoundError(f"--data.raw_source {args.raw_source} "
                                    f"does not exist")
        if args.predictions is not None:
            # Checked before the model runs, so a bad path costs nothing.
            check_writable_folder('--predictions', args.predictions.parent)
            args.predictions.parent.mkdir(parents=True, exist_ok=True)
        result = evaluate_checkpoint(args.checkpoint, args.split, overrides,
                                     args.batch_size, args.device, args.full,
                                     args.predictions)
    except (FileNotFoundError, ValueError) as error:
        return fail(error)
    print(json.dumps(result, indent=2))
    return 0

r"""A plan file (see ``benchmarks/cpu_protocol.py``) read into its runs:
:func:`load_plan` gives one :class:`Run` per (trial, seed, config), or per
(trial, seed) for a chemprop plan, and :func:`check_selection_exists`
checks a selection of trials and seeds against the plans."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml

#: Plan keys copied into each kept results.json (how the results group it).
RESULT_LABELS = ('benchmark', 'variant')


class PlanError(ValueError):
    r"""The plan file is invalid; the message names the key."""


@dataclass
class Run:
    r"""One training run of a plan."""
    trial: str
    seed: int
    config: str
    overrides: list[str]
    trial_overrides: list[str]
    norm: str
    destination: Path
    workdir: Path
    labels: dict = field(default_factory=dict)
    chemprop_args: list[str] = field(default_factory=list)
    #: Whether :func:`~benchmarks.protocol.artefacts.keep_artefacts` keeps
    #: the run's test_predictions.csv (the plan's or the trial's
    #: :obj:`keep_test_predictions`).
    keep_test_predictions: bool = True
    process: Optional[subprocess.Popen] = field(default=None, repr=False)
    started: float = 0.0

    @property
    def name(self) -> str:
        return f'{self.norm}_seed{self.seed}'

    @property
    def run_dir(self) -> Path:
        if self.chemprop_args:
            # chemprop_baseline.py names its run directory itself, inside
            # the output folder it is given.
            return next((self.workdir / self.trial / self.name).glob(
                '*_chemprop*_seed*'), self.workdir / self.trial / self.name)
        return self.workdir / self.trial / self.name

    @property
    def kept_dir(self) -> Path:
        return self.destination / self.trial / self.name

    @property
    def reads_test(self) -> bool:
        r"""Whether the run scores the test split (a final run): every
        chemprop run does; ours with :obj:`train.eval_test`."""
        if self.chemprop_args:
            return True
        from graphormer_sepnorm.training.config import load_config
        return bool(load_config(self.config, self.overrides +
                                self.trial_overrides, env={},
                                check_paths=False)['train']['eval_test'])

    @property
    def finished(self) -> bool:
        return (self.kept_dir / 'results.json').is_file()

    def command(self) -> list[str]:
        if self.chemprop_args:
            args = [sys.executable, 'benchmarks/chemprop_baseline.py',
                    *self.chemprop_args, *self.trial_overrides, '--seed',
                    str(self.seed), '--output-dir',
                    str(self.workdir / self.trial / self.name),
                    '--no-progress-bar']
        else:
            args = [sys.executable, 'scripts/train.py', '--config',
                    self.config, *self.overrides, *self.trial_overrides,
                    f'seed={self.seed}', f'output_dir={self.run_dir.parent}',
                    f'run_name={self.name}', 'train.progress_bar=false']
        if (self.run_dir / 'checkpoints' / 'last.ckpt').is_file():
            args.append('--resume')
        return args


def load_plan(path: Path, workdir: Path) -> list[Run]:
    r"""The runs of a plan file, in execution order (trial, seed, config)."""
    if not path.is_file():
        raise PlanError(f"plan {path} does not exist")
    plan = yaml.safe_load(path.read_text()) or {}
    missing = {'destination', 'seeds', 'trials'} - set(plan)
    if missing:
        raise PlanError(f"plan {path} lacks {', '.join(sorted(missing))}")
    if ('configs' in plan) == ('chemprop' in plan):
        raise PlanError(f"plan {path} needs either 'configs' (our runs) or "
                        f"'chemprop' (the baseline's arguments), not both")
    unknown = set(plan) - {'destination', 'configs', 'chemprop', 'seeds',
                           'trials', 'common', 'keep_test_predictions',
                           *RESULT_LABELS}
    if unknown:
        raise PlanError(f"plan {path}: unknown keys {sorted(unknown)}")
    if not isinstance(plan['trials'], dict) or not plan['trials']:
        raise PlanError(f"plan {path}: 'trials' must map trial names to "
                        f"lists of overrides (or to {{overrides: [...], "
                        f"seeds: [...]}})")
    _check_keep(path, 'the plan', plan.get('keep_test_predictions', True))
    destination = Path(plan['destination'])
    if destination.is_absolute():
        raise PlanError(f"plan {path}: 'destination' must be relative to the "
                        f"repository, got {destination}")
    if 'chemprop' in plan:
        return _chemprop_runs(path, plan, destination, workdir)
    for config in plan['configs']:
        if not Path(config).is_file():
            raise PlanError(f"plan {path}: config {config} does not exist")
    # The norm names the run's folder: the config's, unless the common or
    # the trial's overrides set model.norm (the seed does not change it).
    trials = _trials(path, plan)
    norms = {(config, trial): _norm_of(config, with_seed(
        [*(plan.get('common') or []), *overrides], seeds[0]))
        for config in plan['configs']
        for trial, (overrides, seeds, _) in trials.items()}
    runs = []
    for trial, (trial_overrides, seeds, keep) in trials.items():
        for seed in seeds:
            for config in plan['configs']:
                runs.append(Run(trial=str(trial), seed=int(seed),
                                config=config,
                                overrides=with_seed(plan.get('common'), seed),
                                trial_overrides=with_seed(trial_overrides,
                                                          seed),
                                norm=norms[config, trial],
                                destination=destination,
                                workdir=workdir / destination.name,
                                labels={key: str(plan[key]) for key in
                                        RESULT_LABELS if key in plan},
                                keep_test_predictions=keep))
    return runs


def _chemprop_runs(path: Path, plan: dict, destination: Path,
                   workdir: Path) -> list[Run]:
    r"""The runs of a chemprop plan: its :obj:`chemprop` mapping as
    ``--key value`` arguments of ``benchmarks/chemprop_baseline.py`` (a
    list value as ``--key value1 value2 ...``)."""
    options = plan['chemprop']
    if not isinstance(options, dict) or not options:
        raise PlanError(f"plan {path}: 'chemprop' must map the arguments of "
                        f"benchmarks/chemprop_baseline.py to values, e.g. "
                        f"{{dataset: molhiv, source: ../shared/data/"
                        f"ogbg_molhiv}}")
    if plan.get('common'):
        raise PlanError(f"plan {path}: a chemprop plan takes no 'common' "
                        f"(put arguments under 'chemprop')")
    arguments = [item for key, value in options.items()
                 for item in (f"--{str(key).replace('_', '-')}",
                              *map(str, value if isinstance(value, list)
                                   else [value]))]
    return [Run(trial=str(trial), seed=int(seed), config='', overrides=[],
                trial_overrides=with_seed(trial_arguments, seed),
                norm='chemprop', destination=destination,
                workdir=workdir / destination.name,
                labels={key: str(plan[key]) for key in RESULT_LABELS
                        if key in plan},
                chemprop_args=with_seed(arguments, seed),
                keep_test_predictions=keep)
            for trial, (trial_arguments, seeds, keep) in _trials(
                path, plan).items()
            for seed in seeds]


def _trials(path: Path, plan: dict
            ) -> dict[str, tuple[list, list[int], bool]]:
    r"""Each trial of a plan as :obj:`(overrides, seeds,
    keep_test_predictions)`: a trial is a list of overrides, run for the
    plan's :obj:`seeds`, or a mapping :obj:`{overrides: [...], seeds: [...]}`
    that names its own seeds (e.g. the chosen recipe's row and its baseline
    run for more seeds than the search did) and may set
    :obj:`keep_test_predictions` against the plan's."""
    trials = {}
    plan_keeps = plan.get('keep_test_predictions', True)
    for trial, value in plan['trials'].items():
        if isinstance(value, dict):
            unknown = set(value) - {'overrides', 'seeds',
                                    'keep_test_predictions'}
            if unknown or 'seeds' not in value:
                raise PlanError(
                    f"plan {path}: trial {trial} must be a list of overrides "
                    f"or a mapping {{overrides: [...], seeds: [...]}} "
                    f"(keep_test_predictions optional), got keys "
                    f"{sorted(value)}")
            overrides, seeds = value.get('overrides') or [], value['seeds']
            keep = value.get('keep_test_predictions', plan_keeps)
            _check_keep(path, f'trial {trial}', keep)
        else:
            overrides, seeds, keep = value or [], plan['seeds'], plan_keeps
        if (not isinstance(seeds, list) or not seeds
                or not all(isinstance(seed, int) for seed in seeds)):
            raise PlanError(f"plan {path}: the seeds of trial {trial} must "
                            f"be a list of integers, got {seeds!r}")
        trials[str(trial)] = (overrides, seeds, keep)
    return trials


def _check_keep(path: Path, where: str, value) -> None:
    r"""Refuses a :obj:`keep_test_predictions` that is not a boolean."""
    if not isinstance(value, bool):
        raise PlanError(f"plan {path}: keep_test_predictions of {where} must "
                        f"be true or false, got {value!r}")


def with_seed(items, seed: int) -> list[str]:
    r"""The overrides or arguments :obj:`items` (a list or :obj:`None`) as
    strings, with ``{seed}`` replaced by :obj:`seed`."""
    return [str(item).replace('{seed}', str(seed)) for item in items or []]


def _norm_of(config: str, overrides: list[str]) -> str:
    from graphormer_sepnorm.training.config import load_config
    return load_config(config, overrides, env={},
                       check_paths=False)['model']['norm']


def check_selection_exists(runs: list[Run], trials: list[str] | None = None,
                           seeds: list[int] | None = None) -> None:
    r"""Raises :class:`PlanError` naming each of :obj:`trials` and
    :obj:`seeds` that none of :obj:`runs` (those of every plan asked for)
    holds (a typo would otherwise run nothing)."""
    for kind, wanted, held in (
            ('trials', trials, {run.trial for run in runs}),
            ('seeds', seeds, {run.seed for run in runs})):
        unknown = [item for item in wanted or [] if item not in held]
        if unknown:
            raise PlanError(
                f"no plan holds the {kind} {', '.join(map(str, unknown))}; "
                f"their {kind}: {', '.join(map(str, sorted(held)))}")

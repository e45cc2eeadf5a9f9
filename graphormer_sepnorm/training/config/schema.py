r"""The option schema: every configuration key is a field of its section's
dataclass (:class:`RunConfig` for the top-level keys, :class:`DataConfig`,
:class:`OptimConfig`, :class:`TrainConfig`, :class:`PretrainConfig`, and for
:obj:`model` the arguments of
:class:`~graphormer_sepnorm.GraphormerSepNorm`, read from its signature,
with :class:`ModelRunConfig`), with its type, default and one-line meaning.
:data:`OPTIONS` lists them as dotted keys for validation, and
:func:`options_markdown` as the key table of ``configs/README.md``."""
import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, Optional, Union

import yaml

from ...data.datasets import DATASET_NAMES
from ...models import GraphormerSepNorm
from ...models.config import choices, model_options, strip_optional
from ..metrics import METRIC_NAMES, TASK_METRICS
from .environment import DATA_ROOT_ENV

#: :obj:`data.name` of self-supervised pretraining on a SMILES corpus
#: (``scripts/pretrain.py``).
PRETRAINING_DATA = 'pretraining'

#: :obj:`data.num_workers`: a count of processes (0: none) or :obj:`"auto"`.
Workers = Union[int, Literal['auto']]
#: :obj:`train.devices`: a count, a list of device ids, or :obj:`"auto"`.
Devices = Union[int, list[int], Literal['auto']]


def option(default: Any, doc: str, **metadata: Any) -> Any:
    r"""A dataclass field with its default and its one-line meaning, and
    :obj:`metadata` such as the :obj:`length` of a list or the
    :obj:`range` the configuration's validation checks."""
    metadata['doc'] = doc
    if isinstance(default, list):
        return dataclasses.field(default_factory=default.copy,
                                 metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


class ConfigError(ValueError):
    r"""An invalid configuration: the message names the key or file and how
    to fix it."""


@dataclass
class RunConfig:
    r"""The top-level keys."""
    seed: int = option(0, 'Seed of every random number generator '
        '(`lightning.seed_everything(seed, workers=True)`).')
    output_dir: str = option('runs', 'Folder holding the run directories.')
    run_name: Optional[str] = option(None, 'Run directory name under '
        'output_dir; null: `<data.name>_<model.norm>_seed<seed>` (csv: the '
        'file name instead of data.name).')


@dataclass
class DataConfig:
    r"""The :obj:`data` section."""
    name: Literal[DATASET_NAMES + ('csv', PRETRAINING_DATA)] = option(
        None, 'Dataset: ZINC-full, ZINC-subset (12k), OGB ogbg-molhiv, your '
        'own CSV (data.path), or the pretraining corpus (pretrain.corpus; '
        'scripts/pretrain.py only).')
    root: str = option('data', 'Writable folder for datasets '
        '(`<root>/ZINC`, `<root>/ogbg_molhiv`) and CSV caches '
        f'(`<root>/csv`); the environment variable {DATA_ROOT_ENV} overrides '
        'it.')
    path: Optional[str] = option(None, 'csv: the CSV file (`.csv` or '
        '`.csv.gz`, header row, one molecule per row).')
    smiles_column: str = option('smiles', 'csv: the column holding the '
        'SMILES.')
    target_columns: Optional[list[str]] = option(None, 'csv: the column(s) '
        'to predict, one model output each (empty cells: missing labels).')
    task: Optional[Literal[tuple(TASK_METRICS)]] = option(None, 'csv: '
        '`regression`, or `binary` (0/1 labels; several target columns: '
        'multi-label).')
    featurizer: Literal['ogb', 'zinc'] = option('ogb', 'csv and '
        "pretraining: SMILES to graph, `ogb` (OGB's 9 atom / 3 bond "
        "features) or `zinc` (ZINC's 28 atom types).")
    split: Literal['scaffold', 'random', 'column'] = option('scaffold', 'csv: '
        'balanced Bemis-Murcko scaffold split, random split, or the split '
        'named in data.split_column.')
    split_sizes: list[float] = option([0.8, 0.1, 0.1], 'csv: fractions '
        '(train, valid, test) of the scaffold or random split.', length=3)
    split_seed: int = option(0, 'csv: seed of the scaffold or random split.')
    split_column: Optional[str] = option(None, 'csv, split=column: the '
        'column holding train, valid or test for every row.')
    id_column: Optional[str] = option(None, 'csv: a column naming each row '
        '(e.g. a compound id), written first in test_predictions.csv; null: '
        "the molecule's index (`id`).")
    raw_source: Optional[str] = option(None, 'Offline: a folder with the '
        'raw files (e.g. `../shared/data/ZINC-proxy` or '
        '`../shared/data/ogbg_molhiv`) copied into the root when missing; '
        'null: download as PyG/OGB do.')
    max_nodes: int = option(512, 'Largest graph AddShortestPaths accepts '
        '(pre_transform).', range='> 0')
    batch_size: int = option(256, 'Graphs per optimizer step, over all '
        'processes (each of N processes gets batch_size/N).', range='> 0')
    eval_batch_size: Optional[int] = option(None, 'Graphs per evaluation '
        'batch and process; null: data.batch_size.', range='> 0')
    num_workers: Workers = option('auto', 'DataLoader worker processes per '
        'training process, which collate batches and lay them out; auto: '
        'none on the CPU (its cores train), on an accelerator one per CPU '
        'core of the process but one, at most 8.')
    pin_memory: bool = option(True, 'Pin host memory (CUDA only).')
    on_device: bool = option(False, 'Keep the preprocessed dataset on the '
        'accelerator and batch there (no DataLoader).')
    limit_train: Optional[int] = option(None, 'Use only the first N '
        'training graphs (null: all).', range='>= 0')
    limit_val: Optional[int] = option(None, 'Use only the first N '
        'validation graphs (null: all).', range='>= 0')
    limit_test: Optional[int] = option(None, 'Use only the first N test '
        'graphs (null: all).', range='>= 0')
    standardize_targets: bool = option(True, 'Regression: train on (y - '
        'mean) / std of the training split (stored in the model card).')
    molecule_features: Optional[list[str]] = option(None, 'Molecule '
        'features added to '
        'the graph token (sets model.graph_feature_channels): `rdkit2d` (39 '
        'RDKit 2D descriptors, standardized on the training split) and/or '
        '`morgan` (Morgan count fingerprint); the SMILES of MolHIV and '
        'ZINC come from data.raw_source. A molecule whose features cannot '
        'be computed is left out (data/molecule_features.py). null: none.')
    morgan_radius: int = option(2, 'molecule_features morgan: radius of the '
        'Morgan fingerprint.', range='> 0')
    morgan_size: int = option(2048, 'molecule_features morgan: entries of '
        'the Morgan fingerprint.', range='> 0')
    feature_columns: Optional[list[str]] = option(None, 'csv: numeric '
        'columns of the CSV added to the molecule features (standardized on '
        'the training split); a row with an empty or non-numeric cell there '
        'is left out. Prediction reads them by name from its input CSV.')


@dataclass
class OptimConfig:
    r"""The :obj:`optim` section."""
    lr: float = option(2e-4, 'Peak learning rate (AdamW).', range='> 0')
    weight_decay: float = option(0.01, 'AdamW weight decay.', range='>= 0')
    betas: list[float] = option([0.9, 0.999], 'AdamW betas.', length=2)
    eps: float = option(1e-8, 'AdamW epsilon.', range='> 0')
    warmup_steps: int = option(40000, 'Linear warmup from 0 to optim.lr '
        'over this many steps.', range='>= 0')
    warmup_ratio: Optional[float] = option(None, 'If set, warmup = this '
        'fraction of the total steps (overrides warmup_steps).',
        range='[0, 1)')
    total_steps: Optional[int] = option(None, 'Steps of the schedule (decay '
        'reaches end_lr there); null: train.max_steps, or max_epochs x '
        'steps per epoch.', range='> 0')
    end_lr: float = option(1e-9, 'Learning rate at the end of the '
        'polynomial decay.', range='>= 0')
    power: float = option(1.0, 'Power of the polynomial decay (1: linear).',
        range='> 0')
    layer_lr_decay: float = option(1.0, 'Fine-tuning: layer-wise '
        'learning-rate decay. The prediction head, final norm and '
        'molecule-feature projection learn at optim.lr, encoder layer i of L '
        '(from 0) at optim.lr x decay^(L - i), the embeddings at optim.lr x '
        'decay^(L + 1); the schedule scales every rate alike. 1: one rate '
        'for all (training/layer_lr.py).', range='(0, 1]')
    ema_decay: Optional[float] = option(None, 'An exponential moving average '
        'of the weights, updated after every optimizer step with this decay '
        '(warmed up as min(decay, (1 + n) / (10 + n)) after n updates), '
        'validated in their place: the best checkpoint, the test scores and '
        'model.safetensors are the averaged weights '
        '(training/weight_ema.py). Its horizon is about 1 / (1 - decay) '
        'steps. A resumed run keeps it. null: no averaging.',
        range='(0, 1)')


@dataclass
class TrainConfig:
    r"""The :obj:`train` section."""
    max_steps: Optional[int] = option(None, 'Stop after this many optimizer '
        'steps (null: max_epochs decides).', range='> 0')
    max_epochs: Optional[int] = option(None, 'Stop after this many epochs '
        '(null: max_steps decides).', range='> 0')
    max_minutes: Optional[float] = option(None, 'Also stop after this '
        'much training time (wall-clock minutes, counted across resumes; '
        "Lightning's max_time), whichever limit comes first; the schedule "
        'still spans optim.total_steps. null: no time limit.', range='> 0')
    precision: Literal['auto', '32-true', 'bf16-mixed', '16-mixed',
                       '64-true'] = option(
        'auto', 'Lightning precision; auto: bf16-mixed on a bf16-capable '
        'GPU, 32-true otherwise.')
    gradient_clip_val: Optional[float] = option(5.0, 'Clip the gradient '
        'norm (null: no clipping).', range='>= 0')
    accelerator: Literal['auto', 'cpu', 'gpu', 'cuda', 'mps'] = option(
        'auto', 'Lightning accelerator.')
    devices: Devices = option('auto', 'Devices per node: a count, a list of '
        'ids, or auto.')
    strategy: Literal['auto', 'ddp', 'ddp_spawn',
                      'ddp_find_unused_parameters_true',
                      'single_device'] = option(
        'auto', 'Lightning strategy (ddp for data parallel, also under '
        'torchrun).')
    num_nodes: int = option(1, 'Machines (DDP).', range='> 0')
    check_val_every_n_epoch: int = option(1, 'Validate every N epochs '
        '(unless train.val_every_n_steps is set).', range='> 0')
    val_every_n_steps: Optional[int] = option(None, 'Validate every N '
        'optimizer steps, counted across epochs (at train.max_steps if that '
        'comes first), instead of every check_val_every_n_epoch epochs; '
        'metrics.csv then has a row per validation step. null: by epochs. '
        'Pretraining uses pretrain.val_every_n_steps.', range='> 0')
    eval_test: bool = option(True, 'Score the test split, when '
        'train.test_at says (false: never read test, for tuning trials; the '
        'test columns of metrics.csv stay empty).')
    test_at: Literal['end', 'every_validation'] = option('end', 'When '
        'train.eval_test scores test: `end`: once, after training, with the '
        "best-validation checkpoint (results.json's test metrics are those "
        'of test_predictions.csv; the test columns of metrics.csv stay '
        'empty); `every_validation`: beside every validation, read at the '
        'best-validation epoch (how the committed benchmark runs ran).')
    log_every_n_steps: int = option(50, 'Logging interval of the step-level '
        'logs (CSV/TensorBoard).', range='> 0')
    checkpoint_every_n_steps: int = option(1000, 'Write '
        'checkpoints/last.ckpt every N steps and after every validation (a '
        'step that ends an epoch: at the end of that epoch).', range='> 0')
    checkpoint_every_minutes: Optional[float] = option(5.0, 'Also write '
        'checkpoints/last.ckpt once this many wall-clock minutes have '
        'passed since the last write, so that a stopped or killed run loses '
        'at most about this much work (null: steps and validations only).',
        range='> 0')
    deterministic: Literal['true', 'false', 'warn'] = option(
        'warn', 'torch deterministic algorithms: true, false, or warn '
        '(deterministic where possible).')
    progress_bar: bool = option(True, 'Show the progress bar.')
    num_threads: Optional[int] = option(None, "torch's intra-op threads per "
        'process; null: OMP_NUM_THREADS when set, else the idle cores (the '
        'cores less the load average, at least 1). Set it when two runs, or '
        'a run and its resumption, must compute bit for bit alike.',
        range='> 0')
    tensorboard: bool = option(False, 'Also log to TensorBoard (needs the '
        'tensorboard package).')
    num_sanity_val_steps: int = option(0, 'Validation batches run before '
        'training as a smoke test.', range='>= 0')
    compile: bool = option(False, 'Compile the network for training with '
        '`torch.compile(dynamic=True)`, in place, so checkpoints keep their '
        'key names; the first steps (and each new graph size pattern) are '
        'slower while it compiles.')
    compile_scope: Literal['model', 'regions'] = option('model', 'What '
        'train.compile compiles: `model`: the whole forward in one graph; '
        '`regions`: the node encoder, the attention bias and the layers '
        'apart (GraphormerSepNorm.compile_regions: the layers share their '
        'compilation, which took half the time on the CPU, with slower '
        'steps there; benchmarks/results/compile_time.md).')
    precise_bn_batches: Optional[int] = option(None, 'Before each '
        "validation, re-estimate the BatchNorm statistics (SepNorm's graph "
        'token) on this many training batches with the weights frozen '
        '(training/precise_bn.py); null: validate with the running '
        'statistics.', range='> 0')
    monitor: Optional[Literal[METRIC_NAMES]] = option(None, 'Validation '
        'metric that selects the best model (averaged over targets); null: '
        'follows the task, rocauc (binary), mae (one regression target) or '
        "std_mae (several: each target's MAE over the std of its training "
        'labels). std_* need several regression targets.')


@dataclass
class PretrainConfig:
    r"""The :obj:`pretrain` section (data.name: pretraining)."""
    corpus: Optional[str] = option(None, 'pretraining: the folder holding '
        'train.smi and val.smi (scripts/make_pretraining_corpus.py); null: '
        '`<data.root>/pretraining/moses`.')
    mask_rate: float = option(0.15, "pretraining: fraction of each graph's "
        'atoms masked (at least one).')
    atom_loss_weight: float = option(1.0, 'pretraining: weight of the '
        'masked-atom cross-entropy (0: objective off).')
    descriptor_loss_weight: float = option(1.0, 'pretraining: weight of the '
        'descriptor regression from the graph token (0: objective off, and '
        'no descriptor is computed).')
    val_every_n_steps: int = option(1000, 'pretraining: validate (and write '
        'backbone.safetensors) every N optimizer steps.')
    scaler_molecules: int = option(10000, 'pretraining: training molecules '
        'whose descriptors fix the standardization.')
    in_memory: bool = option(False, 'pretraining: featurize the training '
        'molecules (data.limit_train of them) once, in '
        'pretrain.featurize_processes processes, before the first step, and '
        'train from memory (the validation molecules stay featurized on the '
        'fly): for a GPU that on-the-fly featurization in data.num_workers '
        'workers cannot keep busy. Needs about 1.8 kB per molecule of 23 '
        'heavy atoms in each training process; featurizes about 400 '
        'molecules/s per process.')
    featurize_processes: Optional[int] = option(None, 'pretraining, '
        'in_memory: processes featurizing the training molecules; null: '
        'the CPU cores of each training process (the cores available / '
        'the devices of the node), at least 1.')


@dataclass
class ModelRunConfig:
    r"""The keys of the :obj:`model` section beside the arguments of
    :class:`~graphormer_sepnorm.GraphormerSepNorm`: how a run uses the
    model, not saved with it."""
    init_from: Optional[str] = option(None, 'Fine-tune: start from the '
        'encoder of this model (a pretrained backbone or a trained model: a '
        '`.safetensors` file, a run directory, or `bundled:<name>`; '
        'relative paths from the working directory) with a fresh prediction '
        'head; the other model keys must match it except the dropouts, '
        'max_nodes and attention_buckets, and a smaller multi_hop_max_dist '
        '(its first hop matrices); fixed when the run starts (--resume '
        'refuses a change). null: random initialization.')
    forest_trees: int = option(0, 'Blend a random forest on the molecule '
        'features (data.molecule_features / data.feature_columns) with the '
        'network: after training, this many trees per target are fitted on '
        'the training split (scikit-learn, max_features sqrt), and the '
        "network's share w of w x network + (1 - w) x forest (probabilities, "
        'or values) is chosen on validation in steps of 0.05; '
        'model.safetensors keeps the trees as tensors, and test, evaluate '
        'and predict give the blend (forest/). Its CPU time counts in the '
        "run's. 0: the network alone.", range='>= 0')


#: Model arguments filled from the dataset, never from the configuration.
MODEL_KEYS_FROM_DATA = ('atom_vocab_sizes', 'bond_vocab_sizes', 'out_channels',
                        'graph_feature_channels', 'featurization')

#: Keys of the :obj:`model` section that are not arguments of
#: :class:`~graphormer_sepnorm.GraphormerSepNorm` (see
#: :func:`model_arguments`).
MODEL_KEYS_NOT_ARGUMENTS = ('init_from', 'forest_trees')


def model_arguments(model: dict[str, Any]) -> dict[str, Any]:
    r"""The arguments of :class:`~graphormer_sepnorm.GraphormerSepNorm` in
    a validated :obj:`model` section: all its keys but
    :data:`MODEL_KEYS_NOT_ARGUMENTS`."""
    return {key: value for key, value in model.items()
            if key not in MODEL_KEYS_NOT_ARGUMENTS}


@dataclass(frozen=True)
class Option:
    r"""One configuration key, read from a field of its section's dataclass:
    :obj:`type` names the field's type (:obj:`"int"`, :obj:`"float"`,
    :obj:`"bool"`, :obj:`"str"`, :obj:`"floats"`, :obj:`"strs"`,
    :obj:`"workers"`, :obj:`"devices"`), :obj:`choices` are the values of a
    :obj:`Literal`, :obj:`nullable` says whether it is :obj:`Optional`,
    :obj:`range` is :obj:`"> 0"`, :obj:`">= 0"` or :obj:`"[0, 1)"`."""
    key: str
    type: str
    default: Any
    doc: str
    choices: Optional[tuple] = None
    nullable: bool = False
    length: Optional[int] = None
    range: Optional[str] = None


_TYPE_NAMES = {bool: 'bool', int: 'int', float: 'float', str: 'str',
               list[float]: 'floats', list[str]: 'strs', Workers: 'workers',
               Devices: 'devices'}


def _option(key: str, type_: Any, default: Any, doc: str,
            metadata: Any) -> Option:
    type_, nullable = strip_optional(type_)
    allowed = choices(type_)
    return Option(key, 'str' if allowed else _TYPE_NAMES[type_], default, doc,
                  allowed, nullable, metadata.get('length'),
                  metadata.get('range'))


def _options(cls: type, section: str = '') -> list[Option]:
    return [_option(f'{section}.{f.name}' if section else f.name, f.type,
                    f.default_factory() if f.default is dataclasses.MISSING
                    else f.default, f.metadata['doc'], f.metadata)
            for f in dataclasses.fields(cls)]


def _model_options() -> list[Option]:
    # The arguments of GraphormerSepNorm, from its signature.
    return [_option(f'model.{o.name}', o.type, o.default, o.doc.text,
                    {'range': o.doc.range})
            for o in model_options(GraphormerSepNorm)
            if o.name not in MODEL_KEYS_FROM_DATA]


#: Every configuration key, with its type, default and meaning.
OPTIONS: list[Option] = (
    _options(RunConfig) + _options(DataConfig, 'data') +
    _options(OptimConfig, 'optim') + _options(TrainConfig, 'train') +
    _options(PretrainConfig, 'pretrain') +
    _model_options() + _options(ModelRunConfig, 'model'))
_BY_KEY: dict[str, Option] = {option.key: option for option in OPTIONS}
_SECTIONS = sorted({k.split('.')[0] for k in _BY_KEY if '.' in k})


def options_markdown() -> str:
    r"""Every key as a markdown table (key, type, default, meaning)."""
    lines = ['| key | type | default | meaning |', '| --- | --- | --- | --- |']
    for option in OPTIONS:
        type_ = option.type
        if option.choices:
            type_ = ' \\| '.join(f'`{c}`' for c in option.choices)
        if option.nullable:
            type_ += ' or null'
        default = ('*required*' if option.default is None
                   and not option.nullable else
                   f'`{yaml.safe_dump(option.default, default_flow_style=True).strip().removesuffix("...").strip()}`')
        lines.append(f'| `{option.key}` | {type_} | {default} | '
                     f'{option.doc.replace("|", "/")} |')
    return '\n'.join(lines)

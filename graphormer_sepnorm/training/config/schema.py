r"""The option schema: every configuration key (:data:`OPTIONS`) with its
type, default and meaning, the model keys filled from the data, and the
markdown table of ``configs/README.md`` (:func:`options_markdown`)."""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Optional

import yaml

from ...data.datasets import DATASET_NAMES
from ...models import NORM_NAMES
from ..metrics import METRIC_NAMES, TASK_METRICS

#: Environment variable that overrides ``data.root`` (a command-line
#: ``data.root=...`` still wins).
DATA_ROOT_ENV = 'GRAPHORMER_DATA_ROOT'

#: :obj:`data.name` of self-supervised pretraining on a SMILES corpus
#: (``scripts/pretrain.py``).
PRETRAINING_DATA = 'pretraining'


class ConfigError(ValueError):
    r"""An invalid configuration: the message names the key or file and how
    to fix it."""


@dataclass(frozen=True)
class Option:
    r"""One configuration key.

    Args:
        key (str): Dotted key, *e.g.* :obj:`"train.max_steps"`.
        type (str): :obj:`"int"`, :obj:`"float"`, :obj:`"bool"`,
            :obj:`"str"`, :obj:`"floats"` (a list of floats), :obj:`"strs"`
            (a list of strings; one string is a list of one) or
            :obj:`"devices"` (an int, a list of ints, or :obj:`"auto"`).
        default: The value when the key is left out.
        doc (str): What the key means (one line, for the key table).
        choices (tuple, optional): The allowed values.
        nullable (bool, optional): Whether :obj:`null` is allowed.
    """
    key: str
    type: str
    default: Any
    doc: str
    choices: Optional[tuple] = None
    nullable: bool = False
    length: Optional[int] = None


def _model_defaults() -> dict[str, Any]:
    from ...models import GraphormerSepNorm
    params = inspect.signature(GraphormerSepNorm.__init__).parameters
    return {name: p.default for name, p in params.items() if name != 'self'}


#: Model arguments filled from the dataset, never from the configuration.
MODEL_KEYS_FROM_DATA = ('atom_vocab_sizes', 'bond_vocab_sizes', 'out_channels')

#: Keys of the :obj:`model` section that are not arguments of
#: :class:`~graphormer_sepnorm.GraphormerSepNorm` (see
#: :func:`model_arguments`).
MODEL_KEYS_NOT_ARGUMENTS = ('init_from', )


def model_arguments(model: dict[str, Any]) -> dict[str, Any]:
    r"""The arguments of :class:`~graphormer_sepnorm.GraphormerSepNorm` in
    a validated :obj:`model` section: all its keys but
    :data:`MODEL_KEYS_NOT_ARGUMENTS`."""
    return {key: value for key, value in model.items()
            if key not in MODEL_KEYS_NOT_ARGUMENTS}

_MODEL_DOCS: list[tuple[str, str, str, Optional[tuple], bool]] = [
    # key, type, doc, choices, nullable
    ('num_layers', 'int', 'Transformer blocks.', None, False),
    ('hidden_channels', 'int', 'Token (embedding) size.', None, False),
    ('ffn_channels', 'int', 'Feed-forward hidden size.', None, False),
    ('num_heads', 'int', 'Attention heads.', None, False),
    ('dropout', 'float',
     'Dropout on the input tokens and on each residual branch.', None,
     False),
    ('attention_dropout', 'float', 'Dropout on attention weights.', None,
     False),
    ('activation_dropout', 'float',
     'Dropout after the GELU of the feed-forward networks.', None, False),
    ('pre_norm', 'bool', 'Pre-LN blocks if true, post-LN otherwise.', None,
     False),
    ('final_norm', 'bool', 'With pre-LN, normalize the last block output.',
     None, False),
    ('embedding_norm', 'bool',
     'Normalize the input tokens (encoder_normalize_before).', None, False),
    ('norm', 'str', 'SepNorm (`sep`) or one shared LayerNorm (`share`).',
     tuple(NORM_NAMES), False),
    ('graph_token_norm', 'str', "SepNorm's graph-token norm.",
     ('batch', 'layer'), False),
    ('node_token_norm', 'str', "SepNorm's node-token norm.",
     ('layer', 'batch'), False),
    ('sepnorm_positions', 'str',
     'Which norms are SepNorm when norm=sep (`blocks` = all but the final '
     'norm).', ('all', 'blocks', 'final'), False),
    ('edge_encoding', 'str', "Graphormer's edge encoding.",
     ('multi_hop', 'single'), False),
    ('multi_hop_max_dist', 'int',
     'Hops of a shortest path that enter the multi-hop edge encoding.', None,
     False),
    ('max_degree', 'int', 'Largest degree with its own embedding.', None,
     False),
    ('max_distance', 'int',
     'Largest distance with its own spatial encoding.', None, False),
    ('max_attention_distance', 'int',
     'If set, node pairs farther apart do not attend to each other.', None,
     True),
    ('max_nodes', 'int', 'Largest graph the model accepts.', None, False),
    ('directed', 'bool', 'Separate in- and out-degree embeddings.', None,
     False),
    ('attention_buckets', 'int', 'Run the encoder on this many buckets of '
     'graphs of similar size, each padded only to its own largest graph '
     '(same result, less padding).', None, False),
]


def _build_options() -> list[Option]:
    o = Option
    options = [
        o('seed', 'int', 0, 'Seed of every random number generator '
          '(`lightning.seed_everything(seed, workers=True)`).'),
        o('output_dir', 'str', 'runs',
          'Folder holding the run directories.'),
        o('run_name', 'str', None, 'Run directory name under output_dir; '
          'null: `<data.name>_<model.norm>_seed<seed>` (csv: the file name '
          'instead of data.name).', nullable=True),
        # data
        o('data.name', 'str', None, 'Dataset: ZINC-full, ZINC-subset (12k), '
          'OGB ogbg-molhiv, your own CSV (data.path), or the pretraining '
          'corpus (pretrain.corpus; scripts/pretrain.py only).',
          choices=DATASET_NAMES + ('csv', PRETRAINING_DATA)),
        o('data.root', 'str', 'data', 'Writable folder for datasets '
          '(`<root>/ZINC`, `<root>/ogbg_molhiv`) and CSV caches '
          f'(`<root>/csv`); the environment variable {DATA_ROOT_ENV} '
          'overrides it.'),
        o('data.path', 'str', None, 'csv: the CSV file (`.csv` or `.csv.gz`, '
          'header row, one molecule per row).', nullable=True),
        o('data.smiles_column', 'str', 'smiles',
          'csv: the column holding the SMILES.'),
        o('data.target_columns', 'strs', None, 'csv: the column(s) to '
          'predict, one model output each (empty cells: missing labels).',
          nullable=True),
        o('data.task', 'str', None, 'csv: `regression`, or `binary` (0/1 '
          'labels; several target columns: multi-label).',
          choices=tuple(TASK_METRICS), nullable=True),
        o('data.featurizer', 'str', 'ogb', 'csv and pretraining: SMILES to '
          "graph, `ogb` (OGB's 9 atom / 3 bond features) or `zinc` (ZINC's "
          '28 atom types).', choices=('ogb', 'zinc')),
        o('data.split', 'str', 'scaffold', 'csv: balanced Bemis-Murcko '
          'scaffold split, random split, or the split named in '
          'data.split_column.', choices=('scaffold', 'random', 'column')),
        o('data.split_sizes', 'floats', [0.8, 0.1, 0.1], 'csv: fractions '
          '(train, valid, test) of the scaffold or random split.', length=3),
        o('data.split_seed', 'int', 0, 'csv: seed of the scaffold or random '
          'split.'),
        o('data.split_column', 'str', None, 'csv, split=column: the column '
          'holding train, valid or test for every row.', nullable=True),
        o('data.id_column', 'str', None, 'csv: a column naming each row '
          '(e.g. a compound id), written first in test_predictions.csv; '
          "null: the molecule's index (`id`).", nullable=True),
        o('data.raw_source', 'str', None, 'Offline: a folder with the raw '
          'files (e.g. `../shared/data/ZINC-proxy` or '
          '`../shared/data/ogbg_molhiv`) copied into the root when missing; '
          'null: download as PyG/OGB do.', nullable=True),
        o('data.max_nodes', 'int', 512, 'Largest graph AddShortestPaths '
          'accepts (pre_transform).'),
        o('data.batch_size', 'int', 256, 'Graphs per optimizer step, over '
          'all processes (each of N processes gets batch_size/N).'),
        o('data.eval_batch_size', 'int', None, 'Graphs per evaluation batch '
          'and process; null: data.batch_size.', nullable=True),
        o('data.num_workers', 'workers', 'auto', 'DataLoader worker '
          'processes per training process, which collate batches and lay '
          'them out; auto: none on the CPU (its cores train), on an '
          'accelerator one per CPU core of the process but one, at most 8.'),
        o('data.pin_memory', 'bool', True, 'Pin host memory (CUDA only).'),
        o('data.on_device', 'bool', False, 'Keep the preprocessed dataset on '
          'the accelerator and batch there (no DataLoader).'),
        o('data.limit_train', 'int', None, 'Use only the first N training '
          'graphs (null: all).', nullable=True),
        o('data.limit_val', 'int', None, 'Use only the first N validation '
          'graphs (null: all).', nullable=True),
        o('data.limit_test', 'int', None, 'Use only the first N test graphs '
          '(null: all).', nullable=True),
        o('data.standardize_targets', 'bool', True, 'Regression: train on '
          '(y - mean) / std of the training split (stored in the model '
          'card).'),
        # optim
        o('optim.lr', 'float', 2e-4, 'Peak learning rate (AdamW).'),
        o('optim.weight_decay', 'float', 0.01, 'AdamW weight decay.'),
        o('optim.betas', 'floats', [0.9, 0.999], 'AdamW betas.', length=2),
        o('optim.eps', 'float', 1e-8, 'AdamW epsilon.'),
        o('optim.warmup_steps', 'int', 40000,
          'Linear warmup from 0 to optim.lr over this many steps.'),
        o('optim.warmup_ratio', 'float', None, 'If set, warmup = this '
          'fraction of the total steps (overrides warmup_steps).',
          nullable=True),
        o('optim.total_steps', 'int', None, 'Steps of the schedule (decay '
          'reaches end_lr there); null: train.max_steps, or max_epochs x '
          'steps per epoch.', nullable=True),
        o('optim.end_lr', 'float', 1e-9, 'Learning rate at the end of the '
          'polynomial decay.'),
        o('optim.power', 'float', 1.0, 'Power of the polynomial decay '
          '(1: linear).'),
        # train
        o('train.max_steps', 'int', None, 'Stop after this many optimizer '
          'steps (null: max_epochs decides).', nullable=True),
        o('train.max_epochs', 'int', None, 'Stop after this many epochs '
          '(null: max_steps decides).', nullable=True),
        o('train.precision', 'str', 'auto', 'Lightning precision; auto: '
          'bf16-mixed on a bf16-capable GPU, 32-true otherwise.',
          choices=('auto', '32-true', 'bf16-mixed', '16-mixed', '64-true')),
        o('train.gradient_clip_val', 'float', 5.0, 'Clip the gradient norm '
          '(null: no clipping).', nullable=True),
        o('train.accelerator', 'str', 'auto', 'Lightning accelerator.',
          choices=('auto', 'cpu', 'gpu', 'cuda', 'mps')),
        o('train.devices', 'devices', 'auto', 'Devices per node: a count, a '
          'list of ids, or auto.'),
        o('train.strategy', 'str', 'auto', 'Lightning strategy (ddp for '
          'data parallel, also under torchrun).',
          choices=('auto', 'ddp', 'ddp_spawn', 'ddp_find_unused_parameters_true',
                   'single_device')),
        o('train.num_nodes', 'int', 1, 'Machines (DDP).'),
        o('train.check_val_every_n_epoch', 'int', 1,
          'Validate every N epochs (unless '
          'train.val_every_n_steps is set).'),
        o('train.val_every_n_steps', 'int', None, 'Validate every '
          'N optimizer steps, counted across epochs (at train.max_steps if '
          'that comes first), instead of every check_val_every_n_epoch '
          'epochs; metrics.csv then has a row per validation step. null: '
          'by epochs. Pretraining uses pretrain.val_every_n_steps.',
          nullable=True),
        o('train.eval_test', 'bool', True, 'Score the test split, when '
          'train.test_at says (false: never read test, for tuning trials; '
          'the test columns of metrics.csv stay empty).'),
        o('train.test_at', 'str', 'end', 'When train.eval_test scores test: '
          '`end`: once, after training, with the best-validation '
          'checkpoint (results.json\'s test metrics are those of '
          'test_predictions.csv; the test columns of metrics.csv stay '
          'empty); `every_validation`: beside every validation, read at the '
          'best-validation epoch (how the committed benchmark runs ran).',
          choices=('end', 'every_validation')),
        o('train.log_every_n_steps', 'int', 50,
          'Logging interval of the step-level logs (CSV/TensorBoard).'),
        o('train.checkpoint_every_n_steps', 'int', 1000,
          'Write checkpoints/last.ckpt every N steps and after every '
          'validation (a step that ends an epoch: at the end of that '
          'epoch).'),
        o('train.checkpoint_every_minutes', 'float', 5.0, 'Also write '
          'checkpoints/last.ckpt once this many wall-clock minutes have '
          'passed since the last write, so that a stopped or killed run '
          'loses at most about this much work (null: steps and validations '
          'only).', nullable=True),
        o('train.deterministic', 'str', 'warn', 'torch deterministic '
          'algorithms: true, false, or warn (deterministic where possible).',
          choices=('true', 'false', 'warn')),
        o('train.progress_bar', 'bool', True, 'Show the progress bar.'),
        o('train.num_threads', 'int', None, "torch's intra-op threads per "
          'process; null: OMP_NUM_THREADS when set, else the idle cores '
          '(the cores less the load average, at least 1). Set it when two '
          'runs, or a run and its resumption, must compute bit for bit '
          'alike.', nullable=True),
        o('train.tensorboard', 'bool', False, 'Also log to TensorBoard (needs '
          'the tensorboard package).'),
        o('train.num_sanity_val_steps', 'int', 0, 'Validation batches run '
          'before training as a smoke test.'),
        o('train.compile', 'bool', False, 'Compile the network for training '
          'with `torch.compile(dynamic=True)`, in place, so checkpoints keep '
          'their key names; the first steps (and each new graph size '
          'pattern) are slower while it compiles.'),
        # pretrain (data.name: pretraining)
        o('pretrain.corpus', 'str', None, 'pretraining: the folder holding '
          'train.smi and val.smi (scripts/make_pretraining_corpus.py); null: '
          '`<data.root>/pretraining/moses`.', nullable=True),
        o('pretrain.mask_rate', 'float', 0.15, 'pretraining: fraction of '
          "each graph's atoms masked (at least one)."),
        o('pretrain.atom_loss_weight', 'float', 1.0, 'pretraining: weight of '
          'the masked-atom cross-entropy (0: objective off).'),
        o('pretrain.descriptor_loss_weight', 'float', 1.0, 'pretraining: '
          'weight of the descriptor regression from the graph token (0: '
          'objective off).'),
        o('pretrain.val_every_n_steps', 'int', 1000, 'pretraining: validate '
          '(and write backbone.safetensors) every N optimizer steps.'),
        o('pretrain.scaler_molecules', 'int', 10000, 'pretraining: training '
          'molecules whose descriptors fix the standardization.'),
        o('train.precise_bn_batches', 'int', None, 'Before each validation, '
          "re-estimate the BatchNorm statistics (SepNorm's graph token) on "
          'this many training batches with the weights frozen '
          '(training/precise_bn.py); null: validate with the running '
          'statistics.', nullable=True),
        o('train.monitor', 'str', None, 'Validation metric that selects the '
          'best model (averaged over targets); null: follows the task, '
          'rocauc (binary), mae (one regression target) or std_mae (several: '
          "each target's MAE over the std of its training labels). std_* "
          'need several regression targets.', choices=METRIC_NAMES,
          nullable=True),
    ]
    defaults = _model_defaults()
    documented = {key for key, *_ in _MODEL_DOCS}
    rows = [row for row in _MODEL_DOCS if row[0] in defaults]
    # A model argument added later is still configurable (type from its
    # default) until it gets a line above.
    for key, default in defaults.items():
        if key in documented or key in MODEL_KEYS_FROM_DATA:
            continue
        kind = {bool: 'bool', int: 'int', float: 'float', str: 'str'}.get(
            type(default))
        if kind is not None:
            rows.append((key, kind, 'See GraphormerSepNorm.', None, False))
        elif default is None:
            rows.append((key, 'int', 'See GraphormerSepNorm.', None, True))
    for key, type_, doc, choices, nullable in rows:
        default = defaults[key]
        if isinstance(default, tuple):
            default = list(default)
        options.append(Option(f'model.{key}', type_, default, doc, choices,
                              nullable))
    options.append(o(
        'model.init_from', 'str', None, 'Fine-tune: start from the encoder '
        'of this model (a pretrained backbone or a trained model: a '
        '`.safetensors` file, a run directory, or `bundled:<name>`; relative '
        'paths from the working directory) with a fresh prediction head; the '
        'other model keys must match it except the dropouts, max_nodes and '
        'attention_buckets, and a smaller multi_hop_max_dist (its first hop '
        'matrices); fixed when the run starts (--resume refuses a change). '
        'null: random initialization.',
        nullable=True))
    return options


#: Every configuration key, with its type, default and meaning.
OPTIONS: list[Option] = _build_options()
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

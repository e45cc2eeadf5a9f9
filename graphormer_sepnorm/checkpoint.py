r"""Model checkpoints that load without unpickling anything.

A checkpoint is one `safetensors <https://huggingface.co/docs/safetensors>`_
file: the model's state dict (weights and batch-norm running statistics) and,
in the file's string metadata, JSON with everything needed to predict: the
model configuration, the featurizer, the task and the target normalization,
and the package version that wrote it.

Floating-point tensors can be stored as float16, half the size (the bundled
models are, see :mod:`graphormer_sepnorm.bundled`); :func:`load_model` always
returns a float32 model.
"""
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import torch
import yaml
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from . import __version__
from .errors import CheckpointError
from .forest import FOREST_MODULE, FeatureForest
from .models import GraphormerSepNorm
from .models.config import refuse_featurization

FORMAT_NAME = 'graphormer-sepnorm'
FORMAT_VERSION = 1

#: The task of a pretrained *backbone*: an encoder trained self-supervised,
#: whose head predicts the pretraining targets. It is not a predictor; it
#: initializes a training run (config key :obj:`model.init_from`).
BACKBONE_TASK = 'pretraining'

#: The tasks a :class:`ModelCard` may name.
TASKS = ('regression', 'binary', BACKBONE_TASK)

PathLike = Union[str, Path]

#: The dtypes :func:`save_model` can store floating-point tensors in.
STORAGE_DTYPES = (torch.float32, torch.float16)

#: The commit of the graphormer-sepnorm repository whose tree still holds
#: the weights of the runs committed under ``benchmarks/results/`` up to
#: then: run weights are no longer tracked (the metrics and predictions
#: kept beside them regenerate every table and figure).
RUN_WEIGHTS_COMMIT = 'cabb7a1'


@dataclass
class ModelCard:
    r"""What a checkpoint says about its model, beside the weights.

    Args:
        model_config (dict): Arguments of
            :class:`~graphormer_sepnorm.GraphormerSepNorm`.
        featurizer (str): Name of the featurization of the training data
            (:obj:`"zinc"` or :obj:`"ogb"`, see
            :func:`graphormer_sepnorm.data.featurize.get_featurizer`;
            :obj:`"pyg"` or :obj:`"custom"` for models trained in one's own
            loop), also the model's :obj:`featurization` option.
        task (str): :obj:`"regression"`, :obj:`"binary"` (outputs are
            logits of the positive class) or :obj:`"pretraining"`
            (:data:`BACKBONE_TASK`: a pretrained backbone, whose outputs
            are its pretraining targets and whose :obj:`extra` describes
            the pretraining).
        target_mean (float or list of float, optional): Regression targets
            were standardized as :obj:`(y - mean) / std` for training;
            predictions are mapped back. One value per target (a float for
            a single target). (default: :obj:`0.0`)
        target_std (float or list of float, optional): See
            :obj:`target_mean`. (default: :obj:`1.0`)
        dataset (str, optional): Name of the training dataset.
            (default: :obj:`""`)
        extra (dict, optional): Anything else worth keeping (metrics, seed,
            the data configuration). (default: :obj:`{}`)
        target_names (list of str, optional): The name of each output, the
            target columns of a training CSV; empty for the built-in
            single-target datasets. (default: :obj:`[]`)
    """
    model_config: dict[str, Any]
    featurizer: str
    task: str
    target_mean: Union[float, list[float]] = 0.0
    target_std: Union[float, list[float]] = 1.0
    dataset: str = ''
    extra: dict[str, Any] = field(default_factory=dict)
    target_names: list[str] = field(default_factory=list)


def save_model(path: PathLike, model: GraphormerSepNorm, card: ModelCard,
               dtype: torch.dtype = torch.float32) -> Path:
    r"""Writes :obj:`model` and its :class:`ModelCard` to one safetensors
    file and returns its path.

    Args:
        path (str or Path): The file to write (its folder is created).
        model (GraphormerSepNorm): The model.
        card (ModelCard): Its card (:obj:`model_config` is filled in).
        dtype (torch.dtype, optional): How floating-point tensors are stored:
            :obj:`torch.float32`, or :obj:`torch.float16` for half the file
            size (each weight rounded to 11 significant bits; integer
            buffers are stored as they are). :func:`load_model` returns a
            float32 model either way. (default: :obj:`torch.float32`)

    Raises:
        ValueError: For an unknown task or :obj:`dtype`, or a tensor with
            values outside the range of float16.
    """
    if card.task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(map(repr, TASKS))}"
                         f", got {card.task!r}")
    if dtype not in STORAGE_DTYPES:
        raise ValueError(f"dtype must be one of {STORAGE_DTYPES}, got "
                         f"{dtype!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    card.model_config = dict(model.config)
    model_featurization = card.model_config.get('featurization', 'custom')
    if model_featurization == 'custom':
        card.model_config['featurization'] = card.featurizer
    elif model_featurization != card.featurizer:
        raise ValueError(
            f"The model's featurization is {model_featurization!r} but its "
            f"card's featurizer is {card.featurizer!r}; they must agree")
    tensors = {
        name: _stored(name, tensor.detach().cpu().contiguous(), dtype)
        for name, tensor in model.state_dict().items()
    }
    metadata = {
        'format': FORMAT_NAME,
        'format_version': str(FORMAT_VERSION),
        'package_version': __version__,
        'dtype': str(dtype).removeprefix('torch.'),
        'card': json.dumps(asdict(card)),
    }
    save_file(tensors, str(path), metadata=metadata)
    # safetensors creates the file readable by its owner only (0600);
    # give it the mode any new file gets here (0644 under umask 022).
    path.chmod(0o666 & ~_umask())
    return path


def _umask() -> int:
    r"""The process's file-creation mask (read by setting it, then put
    back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _stored(name: str, tensor: torch.Tensor,
            dtype: torch.dtype) -> torch.Tensor:
    r""":obj:`tensor` as stored: floating-point tensors in :obj:`dtype`,
    others (e.g. batch norm's :obj:`num_batches_tracked`) and a blended
    forest's (float64 thresholds: a rounded one would send molecules down
    other branches) unchanged."""
    if (not tensor.is_floating_point() or tensor.dtype == dtype
            or name.split('.', 1)[0] == FOREST_MODULE):
        return tensor
    stored = tensor.to(dtype)
    # A finite weight that float16 cannot hold would load as inf.
    if not torch.equal(stored.isfinite(), tensor.isfinite()):
        raise ValueError(
            f"{name} has values outside the range of {dtype} (largest "
            f"magnitude {tensor.abs().max().item():.4g}); save it with "
            f"dtype=torch.float32")
    return stored


def read_card(path: PathLike) -> tuple[ModelCard, dict[str, str]]:
    r"""Reads the :class:`ModelCard` and the raw metadata of a checkpoint
    without loading its weights."""
    path = _existing(path)
    try:
        from safetensors import safe_open
        with safe_open(str(path), framework='pt') as f:
            metadata = f.metadata() or {}
    except (SafetensorError, OSError) as error:
        hint = _training_checkpoint_hint(path)
        if hint is not None:
            raise CheckpointError(hint) from None
        raise CheckpointError(
            f"{path} is not a readable safetensors checkpoint ({error}); "
            f"pass a file written by graphormer_sepnorm (scripts/train.py "
            f"writes model.safetensors in the run directory)") from error
    if metadata.get('format') != FORMAT_NAME:
        raise CheckpointError(
            f"{path} is a safetensors file but not a graphormer-sepnorm model "
            f"checkpoint (metadata format={metadata.get('format')!r}); pass "
            f"the model.safetensors of a training run")
    version = int(metadata.get('format_version', '0'))
    if version > FORMAT_VERSION:
        raise CheckpointError(
            f"{path} was written by graphormer-sepnorm "
            f"{metadata.get('package_version')} (checkpoint format {version}),"
            f" newer than this installation ({__version__}, format "
            f"{FORMAT_VERSION}); upgrade graphormer-sepnorm")
    try:
        card = ModelCard(**json.loads(metadata['card']))
    except (KeyError, TypeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{path} has a damaged model card ({error}); "
                              f"re-export the model") from error
    return card, metadata


def load_model(path: PathLike,
               map_location: Optional[Union[str, torch.device]] = 'cpu',
               featurization: Optional[str] = None
               ) -> tuple[GraphormerSepNorm, ModelCard]:
    r"""Loads a checkpoint written by :func:`save_model` (no pickle involved)
    and returns the model in evaluation mode with its :class:`ModelCard`.
    The model is float32 whatever the stored dtype: float16 weights are cast
    on load (exactly: every float16 is a float32).

    The model's :obj:`featurization` is its card's :obj:`featurizer` (the
    training data's); checkpoints written before the model option existed
    get it from there too. With :obj:`featurization` (the data's:
    :obj:`"zinc"`, :obj:`"ogb"`, :obj:`"pyg"` for
    :func:`torch_geometric.utils.from_smiles` graphs, or :obj:`"custom"`),
    a model trained on another is refused with a :class:`CheckpointError`
    that names both.

    A model trained with :obj:`model.forest_trees` comes with its blended
    forest as the submodule :obj:`model.forest`
    (:func:`~graphormer_sepnorm.forest.model_forest`), which prediction
    and evaluation apply to the network's outputs."""
    card, _ = read_card(path)
    config = dict(card.model_config)
    if config.setdefault('featurization', card.featurizer) != card.featurizer:
        raise CheckpointError(
            f"{path}: its model's featurization "
            f"{config['featurization']!r} is not its card's featurizer "
            f"{card.featurizer!r}; the file is damaged")
    card.model_config = config
    if featurization is not None:
        try:
            refuse_featurization(card.featurizer, featurization, path)
        except ValueError as error:
            raise CheckpointError(str(error)) from None
    try:
        model = GraphormerSepNorm.from_config(config)
    except (TypeError, ValueError) as error:
        raise CheckpointError(
            f"{path}: its model configuration does not fit this version of "
            f"graphormer-sepnorm ({error})") from error
    device = 'cpu' if map_location is None else str(map_location)
    state = load_file(str(path), device=device)
    prefix = FOREST_MODULE + '.'
    forest = {name[len(prefix):]: state.pop(name)
              for name in [name for name in state if name.startswith(prefix)]}
    state = {name: tensor.float() if tensor.is_floating_point() else tensor
             for name, tensor in state.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise CheckpointError(
            f"{path}: weights do not match the model configuration (missing: "
            f"{missing[:5]}, unexpected: {unexpected[:5]}); the file is "
            f"damaged or from an incompatible version")
    if forest:
        try:
            setattr(model, FOREST_MODULE, FeatureForest.from_state_dict(forest))
        except (ValueError, TypeError, RuntimeError) as error:
            raise CheckpointError(f"{path}: its blended forest is damaged "
                                  f"({error})") from None
    return model.to(device).eval(), card


def refuse_backbone(card: ModelCard, source: object) -> None:
    r"""Raises :class:`CheckpointError` if :obj:`card` is a pretrained
    backbone's (task :data:`BACKBONE_TASK`): its outputs are pretraining
    targets, not predictions of a property. Called wherever a checkpoint is
    loaded to predict or evaluate."""
    if card.task == BACKBONE_TASK:
        raise CheckpointError(
            f"{source} is a pretrained backbone (task {BACKBONE_TASK!r}, "
            f"outputs are its pretraining targets), not a predictor; "
            f"fine-tune it with model.init_from: {source} in a training "
            f"config and predict with that run's model.safetensors")


def resolve_model_file(path: PathLike) -> Path:
    r"""The :obj:`model.safetensors` that :obj:`path` names: the file
    itself, or the one in a training run directory (or in the run of its
    :obj:`checkpoints/` folder).

    Raises:
        CheckpointError: If there is none; for a run that has not finished,
            the message says that training writes the file when it ends.
    """
    path = Path(path)
    if not path.is_dir():
        return _existing(path)
    run_dir = path.parent if path.name == 'checkpoints' else path
    if (run_dir / 'model.safetensors').is_file():
        return run_dir / 'model.safetensors'
    if (run_dir / 'checkpoints').is_dir() or _pretraining_run(run_dir):
        raise CheckpointError(_unfinished_run(run_dir))
    if (run_dir / 'results.json').is_file():
        raise CheckpointError(weights_not_kept(run_dir))
    raise CheckpointError(
        f"{path} is a folder without model.safetensors; pass the run "
        f"directory of scripts/train.py or a .safetensors file")


def _pretraining_run(run_dir: Path) -> Optional[str]:
    r"""If :obj:`run_dir` is a pretraining run (``scripts/pretrain.py``: a
    ``backbone.safetensors``, or ``data.name: pretraining`` in its
    ``config.yaml``), a message saying it holds a backbone to fine-tune."""
    backbone = run_dir / 'backbone.safetensors'
    if not backbone.is_file():
        try:
            saved = yaml.safe_load((run_dir / 'config.yaml').read_text())
            name = saved['data']['name']
        except (OSError, yaml.YAMLError, KeyError, TypeError):
            return None  # no config, unreadable, another layout
        if name != 'pretraining':
            return None
    written = ('' if backbone.is_file() else
               ' (it writes that file at its first validation)')
    return (f"{run_dir} is a pretraining run (scripts/pretrain.py): it holds "
            f"a backbone to fine-tune, not a predictor; fine-tune it with "
            f"model.init_from: {run_dir} (or {backbone}{written}) in a "
            f"training config, and predict or evaluate with that run")


def weights_not_kept(run_dir: PathLike) -> str:
    r"""The one-line message for a kept copy of a finished run without its
    weights (as ``benchmarks/cpu_protocol.py`` keeps runs): where the
    weights are, and how to restore those of a run committed with them."""
    model_file = (Path(run_dir) / 'model.safetensors').as_posix()
    return (f"{run_dir} holds a finished run's results but not its "
            f"model.safetensors (run weights are not kept in git): pass the "
            f"run directory it was trained in, or restore the weights of a "
            f"run committed under benchmarks/results/ from commit "
            f"{RUN_WEIGHTS_COMMIT} with: git restore "
            f"--source={RUN_WEIGHTS_COMMIT} -- '{model_file}'")


def _unfinished_run(run_dir: Path) -> str:
    pretraining = _pretraining_run(run_dir)
    if pretraining is not None:
        return pretraining
    return (f"The training run {run_dir} has no model.safetensors yet: "
            f"scripts/train.py writes it when training ends; let the run "
            f"finish (or continue it with scripts/train.py --resume "
            f"{run_dir}), then pass {run_dir}")


def _training_checkpoint_hint(path: Path) -> Optional[str]:
    r"""If :obj:`path` is a PyTorch or Lightning checkpoint (a zip archive or
    a pickle, e.g. :obj:`checkpoints/last.ckpt`), a message saying what to
    pass instead; such files are never loaded here (that would unpickle)."""
    try:
        with open(path, 'rb') as f:
            magic = f.read(4)
    except OSError:
        return None
    if not (magic == b'PK\x03\x04' or magic[:1] == b'\x80'):
        return None
    run_dir = path.parent.parent if path.parent.name == 'checkpoints' \
        else path.parent
    kind = ('a Lightning training checkpoint' if path.suffix == '.ckpt'
            else 'a PyTorch pickle (torch.save)')
    what = (f"{path} is {kind}, not a graphormer-sepnorm model checkpoint; "
            f"it was not loaded (that would mean unpickling it)")
    model_file = run_dir / 'model.safetensors'
    if model_file.is_file() and model_file.resolve() != path.resolve():
        return (f"{what}; pass the run directory {run_dir} (its "
                f"model.safetensors holds the best model)")
    if (run_dir / 'config.yaml').is_file():
        return f"{what}. {_unfinished_run(run_dir)}"
    return (f"{what}; pass the model.safetensors that scripts/train.py "
            f"writes in the run directory")


def _existing(path: PathLike) -> Path:
    path = Path(path)
    if not path.is_file() and path.name == 'model.safetensors' and \
            (path.parent / 'results.json').is_file():
        raise CheckpointError(weights_not_kept(path.parent))
    if not path.is_file():
        raise CheckpointError(
            f"Checkpoint {path} does not exist; pass the model.safetensors "
            f"file of a training run (see scripts/train.py)")
    return path

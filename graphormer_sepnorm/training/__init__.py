r"""YAML-configured training (Lightning) of GraphormerSepNorm on ZINC,
ZINC-subset, OGB MolHIV and your own CSV of SMILES and targets; see
:func:`train` and :func:`load_config`."""
from .config import (DATA_ROOT_ENV, OPTIONS, ConfigError, load_config,
                     options_markdown, run_dir_of)
from .evaluate import evaluate_checkpoint
from .lr_schedule import PolynomialDecayWithWarmup, polynomial_decay_scheduler
from .metrics import compute_metrics

__all__ = [
    'ConfigError', 'DATA_ROOT_ENV', 'OPTIONS', 'load_config',
    'options_markdown', 'run_dir_of', 'compute_metrics', 'evaluate_checkpoint',
    'PolynomialDecayWithWarmup', 'polynomial_decay_scheduler', 'train',
    'GraphormerLitModule', 'NonFiniteLossError'
]


def __getattr__(name):  # Lightning-heavy parts load on first use
    if name == 'train':
        from .trainer import train
        return train
    if name in ('GraphormerLitModule', 'NonFiniteLossError'):
        from . import lit_module
        return getattr(lit_module, name)
    raise AttributeError(name)

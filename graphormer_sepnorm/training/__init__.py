r"""YAML-configured training (Lightning) of GraphormerSepNorm on ZINC,
ZINC-subset, OGB MolHIV and your own CSV of SMILES and targets; see
:func:`train` and :func:`load_config`."""
from ..lazy_imports import lazy_getattr

__all__ = [
    'ConfigError', 'DATA_ROOT_ENV', 'OPTIONS', 'load_config',
    'options_markdown', 'run_dir_of', 'compute_metrics', 'evaluate_checkpoint',
    'PolynomialDecayWithWarmup', 'polynomial_decay_scheduler', 'train',
    'GraphormerLitModule', 'NonFiniteLossError'
]

#: Where each public name lives; a name loads its module on first use (PEP
#: 562): Lightning, torchmetrics and the model load only when a run needs
#: them, and a command's help or config check starts without them.
_HOMES = {
    **dict.fromkeys(('ConfigError', 'DATA_ROOT_ENV', 'OPTIONS', 'load_config',
                     'options_markdown', 'run_dir_of'), '.config'),
    'evaluate_checkpoint': '.evaluate',
    'PolynomialDecayWithWarmup': '.lr_schedule',
    'polynomial_decay_scheduler': '.lr_schedule',
    'compute_metrics': '.metrics',
    'train': '.trainer',
    'GraphormerLitModule': '.lit_module',
    'NonFiniteLossError': '.run_module',
}

__getattr__ = lazy_getattr(__name__, _HOMES)

"""Helpers of the training tests (imported by the test modules; not a
conftest.py, so that ``from conftest import ...`` elsewhere keeps finding
tests/conftest.py, which holds the data-root fixtures)."""
from pathlib import Path

from safetensors.torch import load_file

from script_helpers import (TINY_MODEL, assert_rows_close,  # noqa: F401
                            metric_values, metrics_rows, run_script,
                            without_time)

REPO = Path(__file__).resolve().parents[2]
TRAIN = str(REPO / 'scripts' / 'train.py')
EVALUATE = str(REPO / 'scripts' / 'evaluate.py')
CONFIGS = REPO / 'configs'

#: ZINC: 64 training graphs in batches of 16 = 4 steps per epoch, validated
#: every epoch.
ZINC_SMALL = ['data.limit_train=64', 'data.limit_val=32',
              'data.limit_test=32', 'data.batch_size=16',
              'optim.warmup_steps=4', 'optim.lr=1e-3',
              'train.progress_bar=false', 'train.log_every_n_steps=4',
              'train.val_every_n_steps=null', *TINY_MODEL]


def zinc_args(zinc_root, out, name, *extra) -> list[str]:
    """train.py arguments of a small ZINC-subset run ``<out>/<name>`` on the
    ``zinc_root`` fixture's data."""
    root, source = zinc_root
    return ['--config', str(CONFIGS / 'zinc_subset_sepnorm.yaml'),
            f'data.root={root}', f'data.raw_source={source}',
            f'output_dir={out}', f'run_name={name}', *ZINC_SMALL, *extra]


def max_weight_diff(a, b) -> float:
    """Largest difference between the model.safetensors of two runs."""
    wa, wb = load_file(str(a / 'model.safetensors')), load_file(
        str(b / 'model.safetensors'))
    assert wa.keys() == wb.keys()
    return max((wa[k].double() - wb[k].double()).abs().max().item()
               for k in wa)

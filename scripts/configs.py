#!/usr/bin/env python
r"""List the YAML configs shipped in the package, or copy one (with the files
it includes) into a folder to edit.

Example:

    python scripts/configs.py
    python scripts/configs.py cpu/zinc_subset_sepnorm --to my_configs

See ``python scripts/configs.py --help`` and
:mod:`graphormer_sepnorm.training.config.shipped`.
"""
import sys
from pathlib import Path

# Runs from a checkout without installation too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphormer_sepnorm.cli.configs import configs_main  # noqa: E402

if __name__ == '__main__':
    sys.exit(configs_main())

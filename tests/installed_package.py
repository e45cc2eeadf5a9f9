"""What ``pip install graphormer-sepnorm`` gives a user: a wheel of this
checkout, installed (not editable) into a fresh virtual environment, run
from a folder outside the checkout. Built once per session by the
``installed_package`` fixture (conftest.py)."""
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from graphormer_sepnorm.bundled import ENV_VAR

REPO = Path(__file__).resolve().parents[1]
PACKAGE = 'graphormer_sepnorm'
# What setup.cfg packages, besides the package folder.
PROJECT_FILES = ('setup.cfg', 'pyproject.toml', 'README.md')


@dataclass(frozen=True)
class InstalledPackage:
    """The wheel, the environment it is installed in, and how to run in it.

    Attributes:
        source: The copy of the checkout the wheel was built from.
        wheel: The wheel file.
        bin: The environment's scripts folder (python, graphormer-sepnorm).
        site_packages: Where the package is installed.
        outside: A working folder outside the checkout.
        env: The environment variables to run with: no PYTHONPATH, no
            bundled-model folder override.
    """
    source: Path
    wheel: Path
    bin: Path
    site_packages: Path
    outside: Path
    env: dict

    def run(self, program: str, *args: str, check: bool = True,
            timeout: float = 300) -> subprocess.CompletedProcess:
        """Runs ``program`` (a name in :attr:`bin`) with ``args`` in
        :attr:`outside`; with ``check``, asserts exit status 0."""
        result = subprocess.run([str(self.bin / program), *args],
                                cwd=self.outside, env=self.env,
                                capture_output=True, text=True,
                                timeout=timeout)
        if check:
            assert result.returncode == 0, result.stdout + result.stderr
        return result


def _run(*args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def install_wheel(folder: Path) -> InstalledPackage:
    """Builds a wheel of the checkout and installs it into a new virtual
    environment under ``folder``."""
    # Build from a copy of what setup.cfg packages, so that the build
    # leaves no build/ or *.egg-info in the checkout.
    source = folder / 'source'
    source.mkdir()
    for name in PROJECT_FILES:
        shutil.copy(REPO / name, source)
    shutil.copytree(REPO / PACKAGE, source / PACKAGE,
                    ignore=shutil.ignore_patterns('__pycache__'))
    # Offline: without build isolation, with pyproject.toml's build
    # requirements checked in this environment (the [test] extra has them).
    _run(sys.executable, '-m', 'pip', 'wheel', '--no-deps',
         '--no-build-isolation', '--check-build-dependencies', '--quiet',
         '-w', str(folder / 'wheels'), str(source))
    wheel, = (folder / 'wheels').glob(f'{PACKAGE}-*.whl')

    venv = folder / 'venv'
    _run(sys.executable, '-m', 'venv', '--system-site-packages',
         '--without-pip', str(venv))
    python = venv / 'bin' / 'python'
    _run(sys.executable, '-m', 'pip', '--python', str(python), 'install',
         '--no-deps', '--quiet', str(wheel))
    # The dependencies (torch, PyG, ...) are in this interpreter's
    # environment, which is itself often a venv that --system-site-packages
    # does not see: a .pth file adds its site-packages after the new venv's
    # own (its .pth files, such as an editable install, are not run).
    site_packages = Path(_run(
        str(python), '-c', 'import sysconfig; print(sysconfig.get_paths()'
        '["purelib"])').stdout.strip())
    outer = {sysconfig.get_paths()[key] for key in ('purelib', 'platlib')}
    (site_packages / 'outer_environment.pth').write_text(
        '\n'.join(sorted(outer)) + '\n')

    outside = folder / 'elsewhere'
    outside.mkdir()
    env = {key: value for key, value in os.environ.items()
           if key not in ('PYTHONPATH', ENV_VAR)}
    env['COLUMNS'] = '80'  # help texts wrapped as in the tests' own process
    return InstalledPackage(source, wheel, venv / 'bin', site_packages,
                            outside, env)

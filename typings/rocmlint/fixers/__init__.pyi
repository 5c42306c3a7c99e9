# For mypy only (mypy_path in pyproject.toml): fixers/ is installed as rocmlint.fixers through
# setuptools' package-dir, which mypy cannot follow, so each module re-exports fixers/<module>.py
# under its installed name. One line per module; tests/test_typecheck.py keeps them in step.
from fixers import *

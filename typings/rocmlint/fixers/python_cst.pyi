# Type-checking shim: see __init__.pyi.
from fixers.python_cst import *

# Type-checking shim: see __init__.pyi.
from fixers.apply import *

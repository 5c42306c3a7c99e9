# Type-checking shim: see __init__.pyi.
from fixers.cpp_gate import *

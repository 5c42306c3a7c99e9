# Type-checking shim: see __init__.pyi.
from fixers.lane_group_fix import *

import sys
from pathlib import Path

# Test helpers (fixture_harness) import as plain modules.
sys.path.insert(0, str(Path(__file__).resolve().parent))

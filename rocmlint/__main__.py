"""``python -m rocmlint``. For ``-m`` Python puts the current folder first on ``sys.path``:
run inside a repository, its ``random.py`` or ``ast.py`` would shadow the standard library
module rocmlint imports next, and run. The folder is taken off before anything else loads."""
import os
import sys

if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from .cli import main  # noqa: E402

sys.exit(main())

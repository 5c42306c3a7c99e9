"""Import statements: where one runs (at import time of its module, or only on some path) and what it loads."""
from __future__ import annotations

import ast

from .context import FUNCTIONS
from .flow import called_name
from .gates import catches_import_error, names_import_error


def runs_at_import(path: list[ast.AST], decided_if_conditional: bool = False) -> bool:
    """Module or class level, not in a function, not guarded by `try/except ImportError`,
    not TYPE_CHECKING-only, not in the `if __name__ == "__main__":` block of a script
    (``path``: Module first, the import statement last).

    ``decided_if_conditional``: an import under any ``if`` (``if is_flash_attn_2_available():``)
    or in the ``else:`` of a ``try`` that probed for the package is one someone already
    decided on, for optional accelerator packages."""
    for parent, child in zip(path, path[1:]):
        if isinstance(parent, FUNCTIONS):
            return False
        if decided_if_conditional and (isinstance(parent, ast.If) or
                                       (isinstance(parent, ast.Try) and any(s is child for s in parent.orelse))):
            return False
        if isinstance(parent, ast.Try) and any(s is child for s in parent.body):
            if any(catches_import_error(handler) for handler in parent.handlers):
                return False
        if isinstance(parent, (ast.With, ast.AsyncWith)) and any(_suppresses_import_error(item.context_expr)
                                                                  for item in parent.items):
            return False  # `with contextlib.suppress(ImportError): import pynvml`
        if isinstance(parent, ast.If) and any(s is child for s in parent.body):
            test = parent.test
            name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
            if name == "TYPE_CHECKING" or _script_entry(test):
                return False  # type checkers only, or only when the file is run as a script
    return True


def _suppresses_import_error(context: ast.expr) -> bool:
    """`contextlib.suppress(ImportError)`, `suppress(ModuleNotFoundError, ...)`: a try/except."""
    if not (isinstance(context, ast.Call) and context.args) or called_name(context) != "suppress":
        return False
    return names_import_error(context.args)


def _script_entry(test: ast.expr) -> bool:
    """`__name__ == "__main__"`."""
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and {type(side) for side in (test.left, test.comparators[0])} == {ast.Name, ast.Constant}
            and {getattr(side, "id", getattr(side, "value", None)) for side in (test.left, test.comparators[0])}
            == {"__name__", "__main__"})


def imported_modules(stmt: ast.AST) -> list[str]:
    """The absolute modules an import statement loads (``from . import x`` loads none we can name)."""
    if isinstance(stmt, ast.ImportFrom):
        return [stmt.module or ""] if not stmt.level else []
    if isinstance(stmt, ast.Import):
        return [alias.name for alias in stmt.names]
    return []

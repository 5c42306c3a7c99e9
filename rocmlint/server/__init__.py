"""``rocmlint server``: rocmlint in the editor, as a language server (``lsp.py``) over the
engine ``rocmlint check`` runs (``session.py``)."""

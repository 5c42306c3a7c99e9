"""Output formats: text (humans), json (tools), sarif (code scanning), github (annotations)."""
from __future__ import annotations

FORMATS = ("text", "json", "sarif", "github")

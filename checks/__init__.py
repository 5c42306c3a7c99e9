"""Rules: one module per rule, ``checks/python`` and ``checks/cpp``."""

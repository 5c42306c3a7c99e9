"""Python rules (ROC1xx)."""

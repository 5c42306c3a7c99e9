"""Fix application and gated-fix builders shared by the rules."""

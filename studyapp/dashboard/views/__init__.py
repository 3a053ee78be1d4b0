"""Researcher pages, one module per page group (home, tables, ...)."""

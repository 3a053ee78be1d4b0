"""The paper's experiment protocol: concurrent games, one JSONL record per finished game, resume,
and the Table 2 summary. ``python -m games experiment --help`` for the command line."""

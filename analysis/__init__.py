"""Pure pandas analysis of finished games: frames, rewards, cumulative curves, reports, plots, export.

Nothing here imports Django, so the same code reads an experiment's JSONL in a notebook and the
records the web platform builds from its database (``studyapp.dashboard.records``).
"""

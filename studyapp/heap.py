"""Long-running processes (daphne, Celery workers) take what they loaded at startup out of
Python's cyclic garbage collector.

A full collection walks every object the process holds: Django, Channels, Celery and the games'
word lists make about 370,000 objects before the first request, and one full collection of them
took 230 ms on the 2-core benchmark machine (300 to 480 ms once the process had served a while:
every socket of that daphne process waited that long, several times a minute). Those objects
live as long as the process, so scanning them finds nothing. ``gc.freeze`` moves them to a
generation that is never scanned; what the process makes afterwards is collected as before.
"""

from __future__ import annotations

import gc


def freeze_startup() -> None:
    """Collect what startup left behind, then freeze the rest (call once the app is loaded)."""
    gc.collect()
    gc.freeze()

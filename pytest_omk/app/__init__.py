"""The app under test: your own code answers the samples, and its model calls are intercepted.

The app runs live for every sample (``live.LiveApp``); the model calls it makes go through this
process's model gateway (``gateway.ModelGateway``, on a loopback socket served by ``server.py``,
and answered without the socket for httpx clients in this process by ``in_process.py``), which
replays or records them under keys made by ``calls.py`` and files each under the sample whose run
made it (``runs.py``). ``digest.py`` is the app's digest for whole-answer recording; ``host.py``
starts the gateway and points the provider variables at it before the app is built.

Pure Python (no pytest import). See docs/apps.md for the user-facing description.
"""

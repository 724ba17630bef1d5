"""The run: the executors a spec names, the call loop, the prefetch window, the per-sample pipeline
(resolve -> execute -> judge) and the checks made before the first call.

Plain Python with its collaborators passed in; the pytest layer (``pytest_omk.plugin``) drives it.
"""

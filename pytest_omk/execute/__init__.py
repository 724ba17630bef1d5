"""Executors (the model under test answers) and the one path every model call takes.

``calls.ModelCalls`` wraps every call in recordings, a concurrency limit and retries; the
executors themselves only speak their protocol (``base.Executor``).
"""

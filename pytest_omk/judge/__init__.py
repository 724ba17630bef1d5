"""The LLM judge: templates, trace summary, reply parsing, judge selection and the judge itself.

Import from the modules themselves: ``judge.select`` is needed at plugin start-up and stays cheap,
``judge.judge`` (and the call machinery it needs) loads only when a judge is used.
"""

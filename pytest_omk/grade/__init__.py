"""Grading: assertion readings, the scores computed from them, and the verdict (no pytest involved).

Import from the modules themselves (``grade.registry``, ``grade.scoring``, ``grade.verdict``): the
plugin's start-up needs only ``scoring``, so nothing is gathered here.
"""

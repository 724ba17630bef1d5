"""JavaScript semantics the reference implementation has and Python lacks: regex translation,
string length and case rules, number formatting and rounding. The bottom of the package: it
imports nothing of pytest-omk.
"""

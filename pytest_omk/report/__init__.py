"""Report writers: the terminal section, the JSON, HTML and Markdown reports, merged shards.

They take the finished records (JSON-safe dicts) and the totals; no pytest here (the pytest side,
JUnit properties, pytest-html and the record collector, is in :mod:`pytest_omk.plugin`)."""

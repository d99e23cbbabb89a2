"""The kinds of case: what a case makes the mock, the client and the judge do.

A case's kind (``Case.kind``) is one object that each side consults: what
the upstream writes (``upstream/mock.py``, ``upstream/wire.py``), what the
client does while it reads (``client/raw.py``, ``run/check.py``), and what
each judging layer expects (``judge/rules.py``, ``report/compare.py``).
``base.Kind`` is the plain kind, a case with no conduct of its own; each
other kind is a module here. The hooks work on plain data (units, events,
log entries, numbers) and name the judge's layers by key, so that the kinds
sit with the cases, below every side that consults them. This package
imports nothing itself: a kind is imported from its module.
"""

"""Reporting: the check's document (JSON, terminal, Markdown), HTML, JUnit, GitHub, comparisons.

``document`` is the report every rendering reads; ``compare`` matches two
reports and gates on what regressed; ``paths`` compares the paths of one
run; ``reproduce`` puts each failing cell's command beside its verdict;
``load`` renders a load run.
"""

"""Judging: a cell's layers, the rules that judge them, and the verdicts they raise.

``cell`` is the vocabulary of a judgement; ``rules`` judges the content
layers against what the mock sent; ``timed`` the streaming and cancel layers
by the two clocks; ``sdk`` the SDK cells' layer; ``verdicts`` names every
failing layer once, by cause, and builds the capability matrix.
"""

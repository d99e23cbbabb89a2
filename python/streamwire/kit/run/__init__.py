"""Running: a check's cells against a gateway, live mode, and the same cells under load.

``check`` plans the cells, drives each through the client side and the
mock, and judges it; ``live`` asks a real provider; ``load`` keeps many
streams in flight and judges each.
"""

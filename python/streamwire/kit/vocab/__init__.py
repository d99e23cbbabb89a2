"""The kit's shared vocabulary: cases, deliveries, protocol names, HTTP I/O, the tool turn.

``buffers`` reads what this machine's sockets hold. Everything above reads
these: the upstream side writes the cases, the client side asks for them,
the judge holds them to what they promise. Nothing here imports the rest of
the kit.
"""

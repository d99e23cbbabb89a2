"""The client side: what a gateway's clients send and how they read the answer.

``raw`` is the kit's own HTTP client (every arrival timed); ``unary`` reads
a whole answer (``stream: false``); ``sdk`` drives the providers' official
SDKs; ``command`` writes a request as a ``curl`` command line. It reads the
vocabulary and nothing of the upstream side or above.
"""

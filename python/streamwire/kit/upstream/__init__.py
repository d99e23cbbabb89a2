"""The upstream side: the mock provider, the bytes it writes, and the contract a request must meet.

``mock`` serves the cases at each provider's paths and logs every request
and write with its time; ``wire`` renders a case in an upstream protocol;
``eventstream`` frames Bedrock's answers; ``contract`` is what each provider
refuses. It reads the vocabulary and nothing of the client side or above.
"""

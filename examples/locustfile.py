"""The kit's streams under Locust: every stream judged, its verdicts Locust's failures.

One machine (the gateway at :4000 calls ``streamwire mock-upstream --port 9100``)::

    SW_MOCK_URL=http://127.0.0.1:9100 locust -f examples/locustfile.py \\
        --host http://127.0.0.1:4000 --headless -u 200 -r 50 -t 2m --csv build/locust

A master and workers (any number of machines; each worker reaches the gateway
and the mock)::

    locust -f examples/locustfile.py --master --host http://gateway:4000 \\
        --headless --expect-workers 2 -u 1000 -r 100 -t 5m --csv build/locust
    SW_MOCK_URL=http://mock:9100 locust -f examples/locustfile.py --worker --master-host master

``SW_CLIENTS`` picks the client protocols (comma-separated, default
``openai-chat``), ``SW_CASES`` the cases (default the load mix,
``streamwire.kit.run.load.LOAD_CASES``).
"""

from __future__ import annotations

import os

from streamwire.kit.locust_user import StreamUser
from streamwire.kit.run.load import LOAD_CASES


class Gateway(StreamUser):
    mock = os.environ.get("SW_MOCK_URL", "http://127.0.0.1:9100")
    clients = tuple(os.environ.get("SW_CLIENTS", "openai-chat").split(","))
    cases = tuple(os.environ["SW_CASES"].split(",")) if os.environ.get("SW_CASES") else LOAD_CASES

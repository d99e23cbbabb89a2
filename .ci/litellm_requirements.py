"""Prints what the installed litellm and its ``[proxy]`` extra require, less the pins the
package index lacks (``litellm-proxy``, ``litellm-enterprise``, ``litellm-proxy-extras``):
``.ci/litellm.sh --upgrade`` installs them over the pin's environment."""

from __future__ import annotations

import importlib.metadata

from packaging.requirements import Requirement

SKIP = {"litellm-proxy", "litellm-enterprise", "litellm-proxy-extras"}

for text in importlib.metadata.requires("litellm") or []:
    req = Requirement(text)
    if req.name in SKIP:
        continue
    if req.marker is not None and not (
        req.marker.evaluate({"extra": "proxy"}) or req.marker.evaluate({"extra": ""})
    ):
        continue
    req.marker = None
    print(req)

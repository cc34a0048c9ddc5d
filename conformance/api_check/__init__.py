"""``lochkit api-check``: a Nessie REST API v2 server checked with schemathesis against Nessie's own
OpenAPI document (no server errors, declared status codes, content types and bodies), with figures
of what was reached. Needs the ``api-check`` extra (schemathesis)."""

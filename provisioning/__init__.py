"""Database servers for lochkit's suites, load tools, benchmarks and reliability campaign: an
address the user gave, an embedded store, a testcontainers container, or a local process installed
from the package registries (no Docker needed).

- :mod:`provisioning.base`: what a provisioned server is, and a provisioner's interface;
- :mod:`provisioning.registry`: choosing the method and the provisioner (``provision``);
- :mod:`provisioning.servers`: the built-in provisioners, one module per server;
- :mod:`provisioning.workdir`: the temporary directories servers and stores run in.
"""

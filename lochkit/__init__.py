"""The ``lochkit`` command line (the libraries are ``persist_spi``, ``backends``, ``conformance``,
``loadgen`` and ``reports``)."""

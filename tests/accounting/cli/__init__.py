"""Tests of the ``dp-account`` command line, one module per subcommand module of :mod:`accounting.cli`."""

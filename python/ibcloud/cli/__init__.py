"""The ``ibcloud`` command line: :mod:`ibcloud.cli.main` parses the arguments
and reports errors; each subcommand lives in its own module
(:mod:`ibcloud.cli.topo`, :mod:`ibcloud.cli.run`). No algorithm lives here.
"""

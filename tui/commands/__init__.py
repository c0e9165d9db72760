"""The `vaultwatch` command line: the console entry point and its subcommands."""

"""The command lines: each one's flags, its checks before TensorFlow loads and its one call into the library
(`command()`: what the top-level scripts, `python -m albert.<name>` and the console scripts run)."""

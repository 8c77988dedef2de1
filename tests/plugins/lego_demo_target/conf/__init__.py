"""The plugin's preset: ``target=demo_lines`` (a Hydra config directory)."""

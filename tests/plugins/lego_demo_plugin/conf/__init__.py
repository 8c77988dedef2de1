"""The plugin's presets: ``arch=demo_array``, ``workload=demo_csv`` (a Hydra config directory)."""
